import Dispatch
import ProgressTree
import ProgressTreePlatform

/// Publishes one tree to every reader that connects: the listening counterpart of
/// `ProgressNode.mountConnection(path:…)` and `mountConnection(host:port:…)`.
///
/// ```swift
/// let path = try ProgressSocket.privateSocketPath(named: "render.sock")
/// let listener = try ProgressListener(job, path: path)   // this user only
/// try await render(job)
/// listener.finish()      // the final lines to every reader, then closes
/// ```
///
/// Each connection gets a `ProgressPublisher` of its own (the whole tree at once, then what changes) and
/// its commands are applied to the tree. Who may connect is what the operating system enforces: on a
/// Unix-domain socket, only this user (the socket has mode 0600 in a directory only this user can write,
/// and a peer of another user is refused); on TCP, whoever can reach the address, which is the loopback
/// interface unless the caller named another (`ProgressSocket.TCPAddress.unprotected(_:)`).
///
/// No reader can stop the publishing or exhaust the listener: beyond `Options.maximumConnections`, a
/// connection is closed at once; a reader that sends a command line over 4 KiB, or takes none of the
/// lines waiting for it for `Options.stallTimeout`, is cut off; each is counted in `diagnostics`. A
/// reader that goes away does not cancel the tree (readers come and go; the work is the listener's).
///
/// Thread safety: every member may be called from any thread. Connections are accepted on the thread
/// that reads every stream of the process (`StreamReactor`).
public final class ProgressListener: Sendable {
    /// How a listener behaves.
    public struct Options: Sendable {
        /// The most readers connected at once; a connection beyond them is closed at once
        /// (`Diagnostics.refusedConnections`).
        public var maximumConnections = 8
        /// A reader that takes none of the lines waiting for it for this long is cut off
        /// (`Diagnostics.stalledConnections`).
        public var stallTimeout: Duration = .seconds(10)
        /// How each connection's publisher walks the tree (`interval`, `maximumDepth`). Its
        /// `cancelsRootWhenDisconnected` is not used: a reader that goes away cancels nothing.
        public var publisher = ProgressPublisher.Options()

        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// The connections refused and cut off, for logs and tests.
    public struct Diagnostics: Sendable, Equatable {
        /// Connections accepted and published to.
        public var acceptedConnections = 0
        /// Connections closed at once: `Options.maximumConnections` were open.
        public var refusedConnections = 0
        /// Connections of another user, closed at once (Unix-domain sockets).
        public var refusedUsers = 0
        /// Readers cut off for a command line over `ProgressPublisher.maximumCommandLength`.
        public var oversizedCommands = 0
        /// Readers cut off for taking nothing for `Options.stallTimeout`.
        public var stalledConnections = 0

        /// No connection yet.
        public init() {}
    }

    /// The Unix-domain socket's path, for a listener made with one.
    public let path: String?
    /// The TCP port, for a listener on TCP.
    public let port: UInt16?

    private let root: ProgressNode
    private let options: Options
    private let descriptor: Int32
    private let state = Lock(ListenerState())

    /// Publishes `root` to every reader that connects to the Unix-domain socket created at `path` (mode
    /// 0600; its directory must belong to this user and let nobody else write in it:
    /// `ProgressSocket.privateSocketPath(named:)`). Readers of other users are refused.
    ///
    /// - Throws: `StreamSetupError` when the socket cannot be made, or the path is not safe.
    public convenience init(_ root: ProgressNode, path: String, options: Options = Options()) throws(StreamSetupError) {
        let descriptor = try ProgressSocket.listen(path: path)
        self.init(root, descriptor: descriptor, path: path, port: nil, options: options)
    }

    /// Publishes `root` to every reader that connects to TCP `port` (0: a free one, see `port`) on
    /// `address`: the loopback interface unless `ProgressSocket.TCPAddress.unprotected(_:)` names another.
    ///
    /// - Throws: `StreamSetupError` when the socket cannot be made.
    public convenience init(
        _ root: ProgressNode, port: UInt16 = 0, address: ProgressSocket.TCPAddress = .loopback,
        options: Options = Options()
    ) throws(StreamSetupError) {
        let (descriptor, bound) = try ProgressSocket.listen(port: port, address: address)
        self.init(root, descriptor: descriptor, path: nil, port: bound, options: options)
    }

    private init(_ root: ProgressNode, descriptor: Int32, path: String?, port: UInt16?, options: Options) {
        self.root = root
        self.options = options
        self.descriptor = descriptor
        self.path = path
        self.port = port
        let watch = StreamReactor.shared.watch(
            descriptor,
            readable: { [weak self] _ in
                guard let self else { return .stopWatching }
                return self.acceptConnections()
            },
            stopped: { FileDescriptor.close(descriptor) })
        state.withLock { $0.watch = watch }
    }

    deinit {
        let watch = state.withLock { state in state.isFinished ? nil : state.watch }
        if let watch {
            if let path { Sockets.remove(path: path) }
            StreamReactor.shared.stop(watch)
        }
    }

    /// How many readers are connected.
    public var connectionCount: Int {
        state.withLock { $0.publishers.count }
    }

    /// The connections accepted, refused and cut off so far.
    public var diagnostics: Diagnostics {
        state.withLock { $0.diagnostics }
    }

    /// Stops listening (the socket's path is removed), writes the final lines to every reader (waiting
    /// at most 10 seconds for each), and closes the connections. Calling it again does nothing.
    public func finish() {
        let (watch, publishers) = state.withLock { state in
            defer {
                state.isFinished = true
                state.watch = nil
                state.publishers = [:]
            }
            return (state.isFinished ? nil : state.watch, Array(state.publishers.values))
        }
        if let watch {
            // Here, not when the reactor closes the socket: by then another listener may have made a new
            // socket at the same path.
            if let path { Sockets.remove(path: path) }
            StreamReactor.shared.stop(watch)
        }
        DispatchQueue.concurrentPerform(iterations: publishers.count) { publishers[$0].finish() }
    }

    /// On the reactor's thread: accepts the connections waiting (at most 64 at a time, so one burst does
    /// not hold up every other stream).
    private func acceptConnections() -> StreamReactor.Next {
        for _ in 0..<64 {
            let connection: Int32
            do {
                guard let accepted = try Sockets.accept(descriptor) else { return .keepWatching }
                connection = accepted
            } catch {
                // Out of descriptors, say: the next readable event tries again.
                return .keepWatching
            }
            if path != nil, Sockets.peerUser(connection) != Sockets.effectiveUser {
                state.withLock { $0.diagnostics.refusedUsers += 1 }
                ProgressSocket.close(connection)
                continue
            }
            let identifier = state.withLock { state -> Int? in
                guard !state.isFinished, state.publishers.count < options.maximumConnections else {
                    state.diagnostics.refusedConnections += 1
                    return nil
                }
                defer { state.nextIdentifier += 1 }
                return state.nextIdentifier
            }
            guard let identifier else {
                ProgressSocket.close(connection)
                continue
            }
            var publisherOptions = options.publisher
            publisherOptions.cancelsRootWhenDisconnected = false
            publisherOptions.stallTimeout = options.stallTimeout
            publisherOptions.finishTimeout = options.stallTimeout
            let publisher = ProgressPublisher(root, connection: connection, options: publisherOptions) {
                [weak self] reason in self?.connectionEnded(identifier, reason)
            }
            state.withLock { state in
                state.publishers[identifier] = publisher
                state.diagnostics.acceptedConnections += 1
            }
            publisher.start()
        }
        return .keepWatching
    }

    /// A connection's publisher stopped for its reader: it closes the connection itself.
    private func connectionEnded(_ identifier: Int, _ reason: ProgressPublisher.Disconnection) {
        state.withLock { state in
            state.publishers[identifier] = nil
            switch reason {
            case .readerLeft: break
            case .stalled: state.diagnostics.stalledConnections += 1
            case .oversizedCommand: state.diagnostics.oversizedCommands += 1
            }
        }
    }
}

/// A listener's connections and counts (guarded by its lock).
struct ListenerState: ~Copyable {
    var publishers: [Int: ProgressPublisher] = [:]
    var nextIdentifier = 1
    var diagnostics = ProgressListener.Diagnostics()
    var isFinished = false
    var watch: StreamReactor.Watch?
}
