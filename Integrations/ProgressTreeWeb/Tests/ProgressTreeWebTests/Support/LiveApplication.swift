import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A Hummingbird application of a test's own on 127.0.0.1 and a free port, run in a `ServiceGroup` as
/// `Application.runService()` runs one, stopped by the group's graceful shutdown (what SIGTERM triggers).
final class LiveApplication: Sendable {
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// Starts serving `router`; returns once it listens.
    static func start<Context: RequestContext>(_ router: Router<Context>) async throws -> LiveApplication
    where Context.Source == ApplicationRequestContextSource {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-application")
        logger.logLevel = .warning
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(services: [application], logger: logger)
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return LiveApplication(port: port, group: group, task: task)
    }

    private let stopped = Mutex(false)

    /// Whether `stop()` returned.
    var hasStopped: Bool { stopped.withLock { $0 } }

    /// Triggers the graceful shutdown and returns once the application stopped.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        stopped.withLock { $0 = true }
    }
}
