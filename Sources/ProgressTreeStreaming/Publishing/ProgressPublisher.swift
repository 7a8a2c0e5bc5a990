import Dispatch
import ProgressTree
import ProgressTreePlatform

/// Publishes a node's subtree as wire-format lines (`Docs/WireFormat.md`) to a byte sink — a pipe, a
/// socket, any file descriptor — and applies the commands that come back, so that another process can
/// mount the tree (`ProgressNode.mount`).
///
/// ```swift
/// let publisher = ProgressPublisher(job, fileDescriptor: socket)
/// publisher.start()
/// try await runJob(job)
/// publisher.finish()      // the final state of every node named, the root's last, then stops
/// ```
///
/// The publisher reads the tree the way `TerminalRenderer`'s json mode does, by the same rules
/// (`Docs/WireFormat.md`, "Rules for writers"): from its own timer, every `Options.interval`, it walks the
/// attached nodes and writes a line for each node whose line changed since it was last written. It adds
/// nothing to the code that updates the nodes. Lines are therefore throttled per node (at most one per
/// node per interval); a node that left the tree (finished or failed) is read once more (the publisher
/// holds it until then); a child that failed between two walks is written from what its parent kept of
/// it, with the nodes its failure cancelled; and the root's final line is written last, after the last
/// line of every node the stream named. Nothing is written after it.
///
/// Commands (`{"v":1,"command":"pause","id":3}`) read from the command descriptor are applied to the
/// node they name, in this process, on the publisher's queue, in the order they came: its handlers run
/// there. A reader's `interval` request (`{"v":1,"command":"interval","seconds":0.16}`) sets the time
/// between walks to the longer of it and `Options.interval`, from the next walk on.
///
/// **The reader going away.** When the reader goes away — a write fails (a closed pipe or connection),
/// the command channel ends (end of file), or it sends a command line over 4 KiB — publishing stops
/// (`isDisconnected`) and, unless `Options.cancelsRootWhenDisconnected` is `false` or the root is final
/// already, the root is cancelled: a worker whose parent is gone does not go on working for nobody. A
/// reader that only falls behind is no reason to stop: writes never wait for it (see below).
///
/// Thread safety: every method may be called from any thread. Walks and writes happen under the
/// publisher's own lock, one at a time; lock order is publisher, then the library's locks (a tree's
/// refresh lock, then one node lock), never the reverse; commands are applied outside it. Writes
/// to a descriptor never wait for a slow reader: the lines of a walk the reader has not taken yet are
/// kept, and walks are skipped until it took them (the next walk writes the state then, so nothing is
/// lost). Only `finish()` waits, at most 10 seconds, for the reader to take its last lines.
public final class ProgressPublisher: Sendable {
    /// How the publisher behaves.
    public struct Options: Sendable {
        /// The time between two walks of the tree: the most often a node's line is written. The default,
        /// 50 ms, keeps a change within 100 ms of reaching a mounting process. A reader may ask for a longer
        /// one (the `interval` command of `Docs/WireFormat.md`, which a busy mounting process sends), never
        /// a shorter one.
        public var interval: Duration = .milliseconds(50)
        /// The deepest level published (0 = the root only); the nodes below it are only counted, in their
        /// ancestors' lines.
        public var maximumDepth = Int.max
        /// Whether the publisher walks from its own timer. When `false`, call `publishChanges()` yourself.
        public var publishesOnTimer = true
        /// Whether the root is cancelled when the reader goes away before the root is final (a failed
        /// write, the end of the command channel, a command line over 4 KiB): `true` by default, so that
        /// work nobody will see stops. Set it to `false` for work that must go on without its reader.
        public var cancelsRootWhenDisconnected = true
        /// Cut a reader that has taken none of the bytes waiting for it for this long off, as if it went
        /// away (`nil`: never, only `finish()` gives up on it); `ProgressListener` sets it.
        package var stallTimeout: Duration?
        /// How long `finish()` waits for a reader to take the last lines.
        package var finishTimeout: Duration = .seconds(10)

        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// Why publishing to a reader stopped.
    package enum Disconnection: Sendable, Equatable {
        /// A write failed or the command channel ended: the reader went away.
        case readerLeft
        /// The reader took nothing for `Options.stallTimeout`, or `finish()` gave up on it.
        case stalled
        /// The reader sent a command line over `ProgressPublisher.maximumCommandLength`.
        case oversizedCommand
    }

    /// The longest command line read: 4 KiB. A reader that sends a longer one is cut off.
    public static let maximumCommandLength = 4096

    /// The environment variable that names the descriptor(s) a parent process handed on for publishing:
    /// `"3"` (a socket, both directions) or `"4,5"` (write progress to 4, read commands from 5).
    public static let environmentVariable = "PROGRESSTREE_FD"

    private enum Sink: Sendable {
        case descriptor(Int32)
        case custom(@Sendable ([UInt8]) -> Bool)
    }

    private let root: ProgressNode
    private let options: Options
    private let sink: Sink
    private let commandDescriptor: Int32?
    /// Whether the publisher closes its descriptor(s) once it is done with them (`ProgressListener`'s
    /// connections).
    private let ownsDescriptors: Bool
    private let onDisconnection: (@Sendable (Disconnection) -> Void)?
    private let state: Lock<PublisherState>
    /// The command channel's line splitter: touched by the reactor's thread only.
    private let commandLines = Lock(LineSplitter(maximumLineLength: ProgressPublisher.maximumCommandLength))
    private let queue = DispatchQueue(label: "ProgressTree.publisher")

    /// Creates a publisher of the tree below `root` that writes to `fileDescriptor` and, if given, reads
    /// commands from `commandDescriptor` (the same descriptor for a socket). Nothing is written before
    /// `start()` or `publishChanges()`. The descriptors stay the caller's: the publisher never closes them.
    public convenience init(
        _ root: ProgressNode, fileDescriptor: Int32, commandDescriptor: Int32? = nil, options: Options = Options()
    ) {
        self.init(
            root, sink: .descriptor(fileDescriptor), commandDescriptor: commandDescriptor, options: options,
            ownsDescriptors: false, onDisconnection: nil)
    }

    /// Creates a publisher that hands each batch of lines (each line ending with a newline) to `write`,
    /// which returns `false` once the sink is gone (publishing then stops, as when a reader goes away).
    public convenience init(
        _ root: ProgressNode, commandDescriptor: Int32? = nil, options: Options = Options(),
        write: @escaping @Sendable ([UInt8]) -> Bool
    ) {
        self.init(
            root, sink: .custom(write), commandDescriptor: commandDescriptor, options: options,
            ownsDescriptors: false, onDisconnection: nil)
    }

    /// A publisher of one connection of `ProgressListener`: it owns `descriptor` and closes it when done,
    /// and tells `onDisconnection` why it stopped.
    package convenience init(
        _ root: ProgressNode, connection descriptor: Int32, options: Options,
        onDisconnection: @escaping @Sendable (Disconnection) -> Void
    ) {
        self.init(
            root, sink: .descriptor(descriptor), commandDescriptor: descriptor, options: options,
            ownsDescriptors: true, onDisconnection: onDisconnection)
    }

    private init(
        _ root: ProgressNode, sink: Sink, commandDescriptor: Int32?, options: Options, ownsDescriptors: Bool,
        onDisconnection: (@Sendable (Disconnection) -> Void)?
    ) {
        if case .descriptor = sink { Signals.ignoreBrokenPipe() }
        self.root = root
        self.options = options
        self.sink = sink
        self.commandDescriptor = commandDescriptor
        self.ownsDescriptors = ownsDescriptors
        self.onDisconnection = onDisconnection
        self.state = Lock(PublisherState(root: root, maximumDepth: options.maximumDepth))
    }

    /// A publisher for `root` on the descriptor(s) named by `PROGRESSTREE_FD`, if this process was started
    /// by one that mounts it (`ProgressNode.mountProcess`), else `nil`. The variable is removed from the
    /// environment and the descriptors are made close-on-exec, so that programs this one starts do not
    /// take them.
    public static func inherited(for root: ProgressNode, options: Options = Options()) -> ProgressPublisher? {
        guard let value = ProcessEnvironment.value(environmentVariable) else { return nil }
        ProcessEnvironment.unset(environmentVariable)
        return publishing(root, onDescriptorsNamedBy: value, options: options)
    }

    /// A publisher on the descriptor(s) named by a value of `PROGRESSTREE_FD` ("3" or "4,5"), made
    /// close-on-exec; `nil` if the value names no open descriptor.
    package static func publishing(
        _ root: ProgressNode, onDescriptorsNamedBy value: String, options: Options = Options()
    ) -> ProgressPublisher? {
        let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { Int32(String($0)) }
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let descriptors = parts.compactMap { $0 }
        guard descriptors.count == parts.count, descriptors.allSatisfy({ $0 >= 0 && FileDescriptor.isOpen($0) })
        else { return nil }
        // Standard streams (the ssh recipe's `1,0`) stay inheritable: programs started in turn need them.
        for descriptor in descriptors where descriptor > 2 { FileDescriptor.setCloseOnExec(descriptor) }
        return ProgressPublisher(
            root, fileDescriptor: descriptors[0],
            commandDescriptor: descriptors.count == 2 ? descriptors[1] : descriptors[0],
            options: options)
    }

    deinit {
        let watch = state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            return state.commandWatch
        }
        if let watch { StreamReactor.shared.stop(watch) }
    }

    /// Starts publishing: a walk at once, then one every `Options.interval` (unless `publishesOnTimer` is
    /// `false`), and reading commands. Calling it again does nothing.
    public func start() {
        let begin = state.withLock { state -> Bool in
            guard !state.isStarted else { return false }
            state.isStarted = true
            return true
        }
        guard begin else { return }
        if let commandDescriptor { startReadingCommands(from: commandDescriptor) }
        publishChanges()
        guard options.publishesOnTimer else { return }
        state.withLock { state in
            guard !state.isFinished, state.disconnection == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            state.timer = timer
            scheduleTimer(&state)
            timer.setEventHandler { [weak self] in self?.publishChanges() }
            timer.resume()
        }
    }

    /// The time between two walks now: `Options.interval`, or longer while the reader asks for longer
    /// (the `interval` command of `Docs/WireFormat.md`).
    package var walkInterval: Duration {
        state.withLock { walkInterval(of: $0) }
    }

    private func walkInterval(of state: borrowing PublisherState) -> Duration {
        max(options.interval, .milliseconds(state.requestedIntervalMilliseconds))
    }

    /// (Re)schedules the timer, if any, at the current interval: the next walk one interval from now.
    private func scheduleTimer(_ state: inout PublisherState) {
        guard let timer = state.timer else { return }
        let seconds = max(walkInterval(of: state).secondsValue, 0.001)
        timer.schedule(deadline: .now() + seconds, repeating: seconds, leeway: .milliseconds(2))
    }

    /// Takes a reader's `interval` request (on the reactor's thread).
    private func takeIntervalRequest(_ request: WireIntervalRequest) {
        state.withLock { state in
            guard state.requestedIntervalMilliseconds != request.milliseconds else { return }
            let before = walkInterval(of: state)
            state.requestedIntervalMilliseconds = request.milliseconds
            if walkInterval(of: state) != before { scheduleTimer(&state) }
        }
    }

    /// Walks the tree now and writes the lines that changed (what the timer does at each tick).
    public func publishChanges() {
        walk(final: false)
    }

    /// Ends the stream with one last walk, then stops: no more walks, no more commands. When the root is
    /// final, that walk writes the last line of every node the stream named, then the root's final line
    /// (unless an earlier walk already did). It waits at most 10 seconds for the reader to take those
    /// lines. Once it returns, the publisher no longer touches the descriptors. Calling it again does
    /// nothing.
    public func finish() {
        let timer = state.withLock { state -> (any DispatchSourceTimer)? in
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
        walk(final: true)
        if stopReadingCommands() {
            // The reactor stops watching in order: once this runs there, it reads the channel no more.
            StreamReactor.shared.performAndWait {}
        }
    }

    /// What the publisher left out of the lines it wrote, for logs and tests.
    public struct Diagnostics: Sendable, Equatable {
        /// Property values left out of the lines written (`WireProgressProperty`): a value that is not
        /// `ProgressWireValue.isCrossable` (a number that is not finite, an integer beyond ±(2^53 − 1)),
        /// or a property with an empty `wireName`. Counted once for each line written without it; the rest
        /// of the line is written.
        public var skippedProperties = 0

        /// Nothing left out.
        public init() {}
    }

    /// What the publisher left out of the lines it wrote so far.
    public var diagnostics: Diagnostics {
        state.withLock { $0.diagnostics }
    }

    /// Whether publishing stopped because the reader went away (or was cut off).
    public var isDisconnected: Bool {
        state.withLock { $0.disconnection != nil }
    }

    /// Why publishing stopped, if it did because of the reader.
    package var disconnection: Disconnection? {
        state.withLock { $0.disconnection }
    }

    private func walk(final: Bool) {
        let now = ContinuousClock.now
        let disconnection = state.withLock { state -> Disconnection? in
            guard !state.isFinished else { return nil }
            if final { state.isFinished = true }
            guard state.disconnection == nil else { return nil }
            if case .descriptor(let descriptor) = sink, !state.output.isEmpty, !final {
                // The reader has not taken the last walk's lines: give it more only once it has.
                if let failure = state.output.flush(to: descriptor, now: now) { return state.disconnect(failure) }
                if !state.output.isEmpty {
                    if let limit = options.stallTimeout, let since = state.output.waitingSince, now - since >= limit {
                        return state.disconnect(.stalled)
                    }
                    return nil
                }
            }
            var bytes: [UInt8] = []
            state.writeLines(ending: final, into: &bytes)
            if state.walker.hasEnded {
                // The root's final line is written: the timer has nothing more to do.
                state.timer?.cancel()
                state.timer = nil
            }
            switch sink {
            case .custom(let write):
                if !bytes.isEmpty && !write(bytes) { return state.disconnect(.readerLeft) }
            case .descriptor(let descriptor):
                state.output.append(bytes, now: now)
                if let failure = state.output.flush(to: descriptor, now: now) { return state.disconnect(failure) }
                if final, !state.output.isEmpty {
                    let deadline = now + options.finishTimeout
                    while !state.output.isEmpty {
                        let left = ContinuousClock.now.duration(to: deadline)
                        guard left > .zero else { return state.disconnect(.stalled) }
                        let milliseconds = Int32(clamping: left.components.seconds * 1000 + 1)
                        _ = Polling.waitReady(descriptor, writable: true, milliseconds: min(milliseconds, 100))
                        if let failure = state.output.flush(to: descriptor, now: .now) {
                            return state.disconnect(failure)
                        }
                    }
                }
            }
            return nil
        }
        if let disconnection { disconnected(disconnection) }
    }

    /// After publishing stopped for the reader (outside the lock): the root cancelled (see
    /// `Options.cancelsRootWhenDisconnected`), the command channel closed, the listener told.
    private func disconnected(_ reason: Disconnection) {
        stopReadingCommands()
        let finished = state.withLock { $0.isFinished }
        if options.cancelsRootWhenDisconnected, !finished, !root.hasFinalOutcome { root.cancel() }
        onDisconnection?(reason)
    }

    // MARK: Commands

    private func startReadingCommands(from descriptor: Int32) {
        let ownsDescriptors = self.ownsDescriptors
        let watch = StreamReactor.shared.watch(
            descriptor,
            readable: { [weak self] buffer in
                guard let self else { return .stopWatching }
                return self.readCommands(from: descriptor, into: buffer)
            },
            stopped: { [weak self] in
                if ownsDescriptors { FileDescriptor.close(descriptor) }
                self?.state.withLock { $0.commandWatch = nil }
            })
        state.withLock { state in
            state.commandWatch = watch
            if state.isFinished || state.disconnection != nil { StreamReactor.shared.stop(watch) }
        }
    }

    /// Stops reading the command channel; whether it was being read.
    @discardableResult
    private func stopReadingCommands() -> Bool {
        guard let watch = state.withLock({ $0.commandWatch }) else { return false }
        StreamReactor.shared.stop(watch)
        return true
    }

    /// On the reactor's thread: reads what came on the command channel and applies the commands.
    private func readCommands(from descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> StreamReactor.Next
    {
        let count = FileDescriptor.read(descriptor, into: buffer)
        if count < 0 {
            let error = ErrorNumber.last
            if error == ErrorNumber.wouldBlock { return .keepWatching }
            // A descriptor that cannot be read (a pipe's write end named alone in PROGRESSTREE_FD) is no
            // command channel: its reader's departure shows when a write fails.
            if ErrorNumber.isUnreadable(error) { return .stopWatching }
        }
        if count <= 0 {
            let disconnection = state.withLock { state -> Disconnection? in
                guard !state.isFinished, state.disconnection == nil else { return nil }
                return state.disconnect(.readerLeft)
            }
            if let disconnection { disconnected(disconnection) }
            return .stopWatching
        }
        let (pieces, isOversized) = commandLines.withLock { splitter in
            let pieces = splitter.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            return (
                pieces, splitter.isDroppingLine || pieces.contains { if case .oversized = $0 { true } else { false } }
            )
        }
        // A line over the limit cuts the reader off as soon as it passes the limit, not at its end.
        if isOversized {
            let disconnection = state.withLock { state -> Disconnection? in
                guard !state.isFinished, state.disconnection == nil else { return nil }
                return state.disconnect(.oversizedCommand)
            }
            if let disconnection { disconnected(disconnection) }
            return .stopWatching
        }
        var commands: [(ProgressWireCommand, Int)] = []
        for case .line(let line) in pieces {
            if let command = ProgressWireCommand.parse(line) {
                commands.append(command)
            } else if let request = WireIntervalRequest.parse(line) {
                takeIntervalRequest(request)
            }
        }
        if !commands.isEmpty {
            // On the publisher's queue, in order: the handlers they run never hold up the reactor.
            queue.async { [self, commands] in
                for (command, id) in commands { apply(command, toNodeWithID: id) }
            }
        }
        return .keepWatching
    }

    /// Applies a command to the node with `id`, outside the publisher's lock (its handlers run here).
    func apply(_ command: ProgressWireCommand, toNodeWithID id: Int) {
        guard let node = state.withLock({ $0.node(withID: id) }) else { return }
        switch command {
        case .cancel: node.cancel()
        case .pause: node.pause()
        case .resume: node.resume()
        }
    }
}

/// The bytes written to a descriptor that its reader has not taken yet (at most one walk's lines).
struct PendingOutput {
    private var bytes: [UInt8] = []
    private var offset = 0
    /// Since when bytes have been waiting without the reader taking any.
    private(set) var waitingSince: ContinuousClock.Instant?

    var isEmpty: Bool { offset >= bytes.count }

    mutating func append(_ more: [UInt8], now: ContinuousClock.Instant) {
        guard !more.isEmpty else { return }
        if isEmpty {
            bytes = more
            offset = 0
            waitingSince = now
        } else {
            bytes.append(contentsOf: more)
        }
    }

    /// Writes what the descriptor takes without waiting; the reason to stop if it failed.
    mutating func flush(to descriptor: Int32, now: ContinuousClock.Instant) -> ProgressPublisher.Disconnection? {
        while !isEmpty {
            switch FileDescriptor.send(descriptor, bytes, from: offset, blocking: false) {
            case .wrote(let count):
                offset += count
                waitingSince = now
            case .full:
                return nil
            case .failed:
                return .readerLeft
            }
        }
        bytes = []
        offset = 0
        waitingSince = nil
        return nil
    }
}

/// The publisher's memory of the tree between walks (guarded by its lock): what `WireTreeWalker` keeps
/// (ids, the last line of each node, the nodes until their last line is written), and its own flags.
struct PublisherState: ~Copyable {
    var walker: WireTreeWalker
    var isStarted = false
    var isFinished = false
    var diagnostics = ProgressPublisher.Diagnostics()
    /// Why publishing stopped for the reader; `nil` while it goes on.
    var disconnection: ProgressPublisher.Disconnection?
    var output = PendingOutput()
    var timer: (any DispatchSourceTimer)?
    var commandWatch: StreamReactor.Watch?
    /// The interval the reader asked for, in milliseconds (0: none); walks are at least this far apart.
    var requestedIntervalMilliseconds = 0

    init(root: ProgressNode, maximumDepth: Int) {
        walker = WireTreeWalker(root: root, maximumDepth: maximumDepth)
    }

    func node(withID id: Int) -> ProgressNode? {
        walker.node(withID: id)
    }

    /// Stops publishing for `reason` (the timer too); returns it.
    mutating func disconnect(_ reason: ProgressPublisher.Disconnection) -> ProgressPublisher.Disconnection {
        disconnection = reason
        timer?.cancel()
        timer = nil
        return reason
    }

    /// Appends the lines of one walk (see `WireTreeWalker`), each with its newline: each node's own
    /// record, `time` null.
    mutating func writeLines(ending: Bool, into bytes: inout [UInt8]) {
        let records = walker.walk(ending: ending) { source in
            switch source {
            case .node(let node, _): node.wireRecord(id: 0, parentID: nil)
            case .departed(let record, _): record
            }
        }
        for record in records {
            diagnostics.skippedProperties += record.skippedProperties
            record.appendLine(to: &bytes)
            bytes.append(0x0A)
        }
    }
}

extension ProgressWireRecord.State {
    /// Whether `node` is done for good (finished, cancelled or failed): its subtree is no longer walked.
    static func isFinalNode(_ node: ProgressNode) -> Bool {
        node.hasFinalOutcome
    }
}
