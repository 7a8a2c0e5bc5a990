import Dispatch
import ProgressTree

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
/// node they name, in this process, on the publisher's reading thread: its handlers run here.
///
/// Thread safety: every method may be called from any thread. Walks and writes happen under the
/// publisher's own lock, one at a time; lock order is publisher, then the library's node locks. A sink
/// that stops accepting bytes (the reader went away) ends publishing; it never blocks the updates.
public final class ProgressPublisher: Sendable {
    /// How the publisher behaves.
    public struct Options: Sendable {
        /// The time between two walks of the tree: the most often a node's line is written. The default,
        /// 50 ms, keeps a change within 100 ms of reaching a mounting process.
        public var interval: Duration = .milliseconds(50)
        /// The deepest level published (0 = the root only); the nodes below it are only counted, in their
        /// ancestors' lines.
        public var maximumDepth = Int.max
        /// Whether the publisher walks from its own timer. When `false`, call `publishChanges()` yourself.
        public var publishesOnTimer = true

        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// The environment variable that names the descriptor(s) a parent process handed on for publishing:
    /// `"3"` (a socket, both directions) or `"4,5"` (write progress to 4, read commands from 5).
    public static let environmentVariable = "PROGRESSTREE_FD"

    private let root: ProgressNode
    private let options: Options
    private let sink: @Sendable ([UInt8]) -> Bool
    private let commandDescriptor: Int32?
    private let state: Lock<PublisherState>
    private let queue = DispatchQueue(label: "ProgressTree.publisher")

    /// Creates a publisher of the tree below `root` that writes to `fileDescriptor` and, if given, reads
    /// commands from `commandDescriptor` (the same descriptor for a socket). Nothing is written before
    /// `start()` or `publishChanges()`. The descriptors stay the caller's: the publisher never closes them.
    public convenience init(
        _ root: ProgressNode, fileDescriptor: Int32, commandDescriptor: Int32? = nil, options: Options = Options()
    ) {
        StreamPlatform.ignoreBrokenPipeSignal()
        self.init(root, commandDescriptor: commandDescriptor, options: options) { bytes in
            StreamPlatform.writeAll(fileDescriptor, bytes)
        }
    }

    /// Creates a publisher that hands each batch of lines (each line ending with a newline) to `write`,
    /// which returns `false` once the sink is gone (publishing then stops).
    public init(
        _ root: ProgressNode, commandDescriptor: Int32? = nil, options: Options = Options(),
        write: @escaping @Sendable ([UInt8]) -> Bool
    ) {
        self.root = root
        self.options = options
        self.sink = write
        self.commandDescriptor = commandDescriptor
        self.state = Lock(PublisherState(root: root, maximumDepth: options.maximumDepth))
    }

    /// A publisher for `root` on the descriptor(s) named by `PROGRESSTREE_FD`, if this process was started
    /// by one that mounts it (`ProgressNode.mountProcess`), else `nil`. The variable is removed from the
    /// environment and the descriptors are made close-on-exec, so that programs this one starts do not
    /// take them.
    public static func inherited(for root: ProgressNode, options: Options = Options()) -> ProgressPublisher? {
        guard let value = StreamPlatform.environmentValue(environmentVariable) else { return nil }
        StreamPlatform.unsetEnvironment(environmentVariable)
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
        guard descriptors.count == parts.count, descriptors.allSatisfy({ $0 >= 0 && StreamPlatform.isOpen($0) })
        else { return nil }
        // Standard streams (the ssh recipe's `1,0`) stay inheritable: programs started in turn need them.
        for descriptor in descriptors where descriptor > 2 { StreamPlatform.setCloseOnExec(descriptor) }
        return ProgressPublisher(
            root, fileDescriptor: descriptors[0], commandDescriptor: descriptors.count == 2 ? descriptors[1] : descriptors[0],
            options: options)
    }

    deinit {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
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
        publishChanges()
        if let commandDescriptor { startReadingCommands(from: commandDescriptor) }
        guard options.publishesOnTimer else { return }
        let interval = Double(options.interval.components.seconds) + Double(options.interval.components.attoseconds) * 1e-18
        state.withLock { state in
            guard !state.isFinished else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let seconds = max(interval, 0.001)
            timer.schedule(deadline: .now() + seconds, repeating: seconds, leeway: .milliseconds(2))
            timer.setEventHandler { [weak self] in self?.publishChanges() }
            timer.resume()
            state.timer = timer
        }
    }

    /// Walks the tree now and writes the lines that changed (what the timer does at each tick).
    public func publishChanges() {
        walk(final: false)
    }

    /// Ends the stream with one last walk, then stops: no more walks, no more commands. When the root is
    /// final, that walk writes the last line of every node the stream named, then the root's final line
    /// (unless an earlier walk already did). Calling it again does nothing.
    public func finish() {
        let timer = state.withLock { state -> (any DispatchSourceTimer)? in
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
        walk(final: true)
    }

    /// Whether the sink stopped accepting bytes (the reader went away); publishing has then stopped.
    public var isDisconnected: Bool {
        state.withLock { $0.isDisconnected }
    }

    private func walk(final: Bool) {
        state.withLock { state in
            guard !state.isFinished else { return }
            if final { state.isFinished = true }
            guard !state.isDisconnected else { return }
            let lines = state.lines(ending: final)
            if state.walker.hasEnded {
                // The root's final line is written: the timer has nothing more to do.
                state.timer?.cancel()
                state.timer = nil
            }
            guard !lines.isEmpty else { return }
            var bytes: [UInt8] = []
            for line in lines {
                bytes.append(contentsOf: line.utf8)
                bytes.append(0x0A)
            }
            if !sink(bytes) { state.isDisconnected = true }
        }
    }

    // MARK: Commands

    private func startReadingCommands(from descriptor: Int32) {
        // A thread of its own: the loop blocks (in `poll`, at most 100 ms at a time) until publishing ends.
        StreamPlatform.detachThread { [weak self] in
            var splitter = LineSplitter(maximumLineLength: 4096)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                // Wakes up now and then to notice that publishing finished.
                guard let self, !self.state.withLock({ $0.isFinished || $0.isDisconnected }) else { return }
                guard StreamPlatform.waitReadable(descriptor, milliseconds: 100) else { continue }
                let count = StreamPlatform.read(descriptor, &buffer)
                if count <= 0 { return }
                for case .line(let line) in splitter.append(buffer[0..<count]) {
                    guard let (command, id) = ProgressWireCommand.parse(line) else { continue }
                    self.apply(command, toNodeWithID: id)
                }
            }
        }
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

/// The publisher's memory of the tree between walks (guarded by its lock): what `WireTreeWalker` keeps
/// (ids, the last line of each node, the nodes until their last line is written), and its own flags.
struct PublisherState: ~Copyable {
    var walker: WireTreeWalker
    var isStarted = false
    var isFinished = false
    var isDisconnected = false
    var timer: (any DispatchSourceTimer)?

    init(root: ProgressNode, maximumDepth: Int) {
        walker = WireTreeWalker(root: root, maximumDepth: maximumDepth)
    }

    func node(withID id: Int) -> ProgressNode? {
        walker.node(withID: id)
    }

    /// The lines of one walk (see `WireTreeWalker`): each node's own record, `time` null.
    mutating func lines(ending: Bool) -> [String] {
        walker.walk(ending: ending) { source in
            switch source {
            case .node(let node, _): node.wireRecord(id: 0, parentID: nil)
            case .departed(let record, _): record
            }
        }.map(\.line)
    }
}

extension ProgressWireRecord.State {
    /// Whether `node` is done for good (finished, cancelled or failed): its subtree is no longer walked.
    static func isFinalNode(_ node: ProgressNode) -> Bool {
        node.hasFinalOutcome
    }
}
