import Hummingbird
import Logging
import ProgressTree
import ProgressTreeStreaming
import ServiceLifecycle
import Synchronization

/// Serves a node's tree over HTTP: a page that shows it live, the tree as Server-Sent Events, and commands
/// back with a token (`ProgressWebRoutes`; `Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)").
///
/// ```swift
/// let server = ProgressWebServer(job)         // 127.0.0.1, a free port
/// try await server.start()
/// print(server.url)                            // http://127.0.0.1:PORT/
/// try await runJob(job)                        // the page shows it, then keeps its final state
/// await server.stop()
/// ```
///
/// It listens on 127.0.0.1 unless told otherwise (`address: .unprotected("0.0.0.0")`), as
/// `ProgressListener` does: whoever reaches the address can read the tree; commands take the token. To
/// serve trees from a Hummingbird application of your own, at paths of its choosing and behind its own
/// middleware, add their routes to its router or to a group of it instead
/// (`router.group("progress").addProgressRoutes(for:options:)`; `Docs/WebDashboard.md`).
///
/// Thread safety: every member may be called from any thread; `start()` and `stop()` once each.
public final class ProgressWebServer: Sendable {
    /// The routes this server serves: its event stream and token.
    public let routes: ProgressWebRoutes
    private let address: ProgressSocket.TCPAddress
    private let state = ServerStateBox()
    private let group: ServiceGroup

    private struct ServerState: ~Copyable {
        var port: Int?
        var task: Task<Void, Never>?
        var waiter: CheckedContinuation<Int, any Error>?
        var failure: (any Error)?
    }

    /// The state, in a box of its own so that the application's callback can hold it before `self` exists.
    private final class ServerStateBox: Sendable {
        private let mutex = Mutex(ServerState())

        func withLock<Result: Sendable>(_ body: (inout ServerState) -> Result) -> Result {
            mutex.withLock { body(&$0) }
        }
    }

    /// A server of `root`'s tree on `port` (0: a free one, see `port`) of `address`, the loopback
    /// interface unless `ProgressSocket.TCPAddress.unprotected(_:)` names another. Nothing is served
    /// before `start()`. Its log (warnings and errors only) goes to standard error.
    public init(
        _ root: ProgressNode, port: Int = 0, address: ProgressSocket.TCPAddress = .loopback,
        options: ProgressWebRoutes.Options = ProgressWebRoutes.Options()
    ) {
        let router = Router()
        routes = router.addProgressRoutes(for: root, options: options)
        self.address = address
        var logger = Logger(label: "ProgressTreeWeb") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let state = self.state
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(address.host, port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let waiter = state.withLock { state in
                    state.port = port
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(returning: port)
            }, logger: logger)
        group = ServiceGroup(services: [application], logger: logger)
    }

    /// The token commands must carry (`ProgressTree-Token`); `nil` when read-only.
    public var token: String? { routes.token }

    /// The port the server listens on, once `start()` returned.
    public var port: Int? {
        state.withLock { $0.port }
    }

    /// The page's address, `http://127.0.0.1:PORT/` (the address listened on, or 127.0.0.1 when that is
    /// every interface), once `start()` returned.
    public var url: String? {
        guard let port else { return nil }
        let host = ["0.0.0.0", "::", "127.0.0.1"].contains(address.host) ? "127.0.0.1" : address.host
        return host.contains(":") ? "http://[\(host)]:\(port)/" : "http://\(host):\(port)/"
    }

    /// Starts listening and serving; returns once the server listens (its `port` and `url` set).
    ///
    /// - Throws: what kept the server from listening (the port taken, say).
    public func start() async throws {
        let group = self.group
        let state = self.state
        _ = try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Int, any Error>) in
            let task = Task {
                do {
                    try await group.run()
                } catch {
                    let waiter = state.withLock { state in
                        state.failure = error
                        defer { state.waiter = nil }
                        return state.waiter
                    }
                    waiter?.resume(throwing: error)
                }
            }
            let ready = state.withLock { state -> Result<Int, any Error>? in
                state.task = task
                if let port = state.port { return .success(port) }
                if let failure = state.failure { return .failure(failure) }
                state.waiter = waiter
                return nil
            }
            if let ready { waiter.resume(with: ready) }
        }
    }

    /// Ends every reader's event stream (after the last walk, with an `ended` event saying the server
    /// stops), stops listening, and returns once the server stopped (the answers under way finished).
    public func stop() async {
        routes.finish(reason: ProgressWebRoutes.stoppingReason)
        guard let task = state.withLock({ $0.task }) else { return }
        await group.triggerGracefulShutdown()
        await task.value
    }

    /// Starts the server and serves until the calling task is cancelled, then stops it as `stop()` does.
    public func run() async throws {
        try await start()
        guard let task = state.withLock({ $0.task }) else { return }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            routes.finish(reason: ProgressWebRoutes.stoppingReason)
            Task { [group] in await group.triggerGracefulShutdown() }
        }
    }
}
