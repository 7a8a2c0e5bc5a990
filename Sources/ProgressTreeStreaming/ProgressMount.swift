#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
import ProgressTree

/// Another program's progress tree, mounted as a weighted child: a subtree of real `ProgressNode`s that
/// mirrors the wire-format lines (`Docs/WireFormat.md`) read from a stream, and sends commands back.
///
/// Create one with `ProgressNode.mount(fileDescriptor:commandDescriptor:pendingUnitCount:name:)`,
/// `mountProcess(…)` or `mountConnection(…)`. `node` is attached to the parent with the pending count
/// given, and gets a mirrored child for each node of the stream, attached with that node's own pending
/// count: fraction, observers, descriptions, file summaries, renderers and failures work on it unchanged.
///
/// Cancelling, pausing or resuming a mirrored node (directly, or through an ancestor) sends the command to
/// the publisher, which applies it to its own node (its handlers run there); the publisher's next lines
/// bring the new state back. States that come from the stream are applied without being sent back.
///
/// When the stream ends before its root is final (end of file, a lost connection, a process that died),
/// `node` fails with the reason ("worker 2 exited with signal 9"); failing cancels the mirrored nodes
/// below it, so nothing mirrored is left running.
///
/// Thread safety: every member may be called from any thread. The stream is read on a thread of the
/// mount's own (and a process waited for on another); mirrored nodes are updated from there, outside the
/// mount's lock. Both threads end with the stream.
public final class ProgressMount: Sendable {
    /// The longest line read: 1 MiB. A longer line is dropped (`Diagnostics.oversizedLines`).
    public static let maximumLineLength = 1 << 20

    /// What the mount did with the input it could not take as it came, for logs and tests.
    public struct Diagnostics: Sendable, Equatable {
        /// Lines applied to the mirrored tree.
        public var acceptedLines = 0
        /// Lines that are not JSON objects of the format, cut short, or missing a required field.
        public var malformedLines = 0
        /// Lines over `maximumLineLength`, dropped without being buffered.
        public var oversizedLines = 0
        /// Lines with a value no node can have (an id below 1, a negative pending count, a fraction outside
        /// 0...1, a wrong type), or with counts that say finished when the state does not (then applied with
        /// the completed count held below the total).
        public var outOfRangeLines = 0
        /// Lines whose parent id is not (yet) known.
        public var unknownParentLines = 0
        /// Lines that would move a node to another parent (which could make a cycle).
        public var cycleLines = 0
        /// Nodes refused: a second root, or beyond `Options.maximumNodeCount`.
        public var rejectedNodes = 0
        /// Strings whose control characters or escape sequences were replaced by spaces.
        public var cleanedStrings = 0
        /// The major version of a line this library does not read, if one came (the mount then stopped).
        public var unsupportedVersion: Int?

        /// No lines yet, no problems.
        public init() {}

        /// Lines ignored in whole.
        public var ignoredLines: Int {
            malformedLines + oversizedLines + unknownParentLines + cycleLines + rejectedNodes
                + (unsupportedVersion == nil ? 0 : 1)
        }
    }

    /// The reason a mounted node failed because its stream or process ended badly (`node.failure`).
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The sentence shown: "worker 2 exited with signal 9".
        public var reason: String
        /// Creates a failure with `reason`.
        public init(reason: String) { self.reason = reason }
        /// `reason`.
        public var description: String { reason }
    }

    /// How a mount behaves.
    public struct Options: Sendable {
        /// The most nodes mirrored at once; nodes beyond are refused (`Diagnostics.rejectedNodes`).
        public var maximumNodeCount = 100_000
        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// The mirrored root: a child of the node the stream was mounted on.
    public let node: ProgressNode
    /// The name used in failure reasons ("worker 2").
    public let name: String
    /// The process whose output is mounted, for `mountProcess`; `nil` otherwise.
    public let processIdentifier: Int32?

    private let options: Options
    private let input: Int32
    private let commands: Int32?
    private let ownsDescriptors: Bool
    private let shared: Mutex<MountShared>
    private let writeLock = Mutex<Bool>(false)  // true once the command descriptor is closed
    private let ended = DispatchGroup()

    init(
        parent: ProgressNode, pendingUnitCount: Int64, name: String, input: Int32, commands: Int32?,
        ownsDescriptors: Bool, processIdentifier: Int32?, options: Options
    ) {
        // Indeterminate until the stream's root says how much work there is.
        self.node = ProgressNode(totalUnitCount: -1, parent: parent, pendingUnitCount: pendingUnitCount)
        self.name = name
        self.input = input
        self.commands = commands
        self.ownsDescriptors = ownsDescriptors
        self.processIdentifier = processIdentifier
        self.options = options
        self.shared = Mutex(MountShared())
        node.localizedDescription = name
    }

    /// Starts reading (and, for a process, waiting for it).
    func start() {
        installHandlers(on: node, remoteID: nil, mirrorParent: nil)
        ended.enter()
        StreamPlatform.detachThread { [self] in readLoop() }
        if let processIdentifier {
            ended.enter()
            StreamPlatform.detachThread { [self] in waitForProcess(processIdentifier) }
        }
    }

    /// What the mount did with bad input so far.
    public var diagnostics: Diagnostics {
        shared.withLock { $0.diagnostics }
    }

    /// Whether the stream (and the process, if any) ended; `node` is then final.
    public var hasEnded: Bool {
        ended.wait(timeout: .now()) == .success
    }

    /// How the process ended (`mountProcess` only), once it did: "exited with status 0", "exited with
    /// signal 9".
    public var exitDescription: String? {
        shared.withLock { $0.exitDescription }
    }

    /// Waits until the stream (and the process, if any) ended, at most `timeout`; `true` if it did.
    @discardableResult
    public func waitUntilEnded(timeout: Duration = .seconds(3600)) -> Bool {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return ended.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// Waits until the stream (and the process, if any) ended.
    public func ended() async {
        await withCheckedContinuation { continuation in
            ended.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Stops reading: `node` fails ("… was closed before the end") unless it is already final, and the
    /// publisher sees its sink go away. Does nothing once the stream ended.
    public func close() {
        shared.withLock { $0.isClosing = true }
        StreamPlatform.shutdownBoth(input)
    }

    // MARK: Commands

    /// Sends `command` for remote node `id` (`nil`: the stream's root), unless the mount is applying a
    /// line (the state came from the publisher) or the stream ended.
    private func send(_ command: ProgressWireCommand, remoteID: Int?) {
        guard commands != nil, MountApplying.mount != ObjectIdentifier(self) else { return }
        let target = shared.withLock { shared -> Int? in
            guard !shared.hasEnded else { return nil }
            guard let id = remoteID ?? shared.rootID else {
                // The stream's root has not said its id yet: sent when it does.
                shared.commandsForRoot.append(command)
                if command == .cancel { shared.sentRootCancel = true }
                return nil
            }
            if command != .cancel { shared.sentCommands[id] = (command, .now + .seconds(1)) }
            if command == .cancel && remoteID == nil { shared.sentRootCancel = true }
            return id
        }
        if let target { transmit(command, id: target) }
    }

    /// Writes a command line on the command descriptor (one writer at a time; nothing once it is closed).
    private func transmit(_ command: ProgressWireCommand, id: Int) {
        guard let commands else { return }
        let bytes = Array((command.line(id: id) + "\n").utf8)
        writeLock.withLock { closed in
            guard !closed else { return }
            _ = StreamPlatform.writeAll(commands, bytes)
        }
    }

    private func installHandlers(on mirrored: ProgressNode, remoteID: Int?, mirrorParent: ProgressNode?) {
        mirrored.cancellationHandler = { [weak self, weak mirrorParent] in
            // A cancellation that came down from a mirrored parent was sent for that parent already.
            if let parent = mirrorParent, parent.isCancelled { return }
            self?.send(.cancel, remoteID: remoteID)
        }
        mirrored.pausingHandler = { [weak self, weak mirrorParent] in
            if let parent = mirrorParent, parent.isPaused { return }
            self?.send(.pause, remoteID: remoteID)
        }
        mirrored.resumingHandler = { [weak self] in
            self?.send(.resume, remoteID: remoteID)
        }
    }

    // MARK: Reading

    private func readLoop() {
        var splitter = LineSplitter(maximumLineLength: Self.maximumLineLength)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var mirror = MirrorTree(root: node)
        var endReason: String?
        reading: while true {
            if shared.withLock({ $0.isClosing }) {
                endReason = "\(name) was closed before the end"
                break
            }
            guard StreamPlatform.waitReadable(input, milliseconds: 100) else { continue }
            let count = StreamPlatform.read(input, &buffer)
            if count == 0 {
                if splitter.remainder() != nil {
                    shared.withLock { $0.diagnostics.malformedLines += 1 }  // a line cut short
                }
                endReason = shared.withLock { $0.isClosing } ? "\(name) was closed before the end" : "\(name) stopped before the end"
                break
            }
            if count < 0 {
                endReason = "\(name): \(StreamPlatform.errorText(StreamPlatform.lastError))"
                break
            }
            var batch: [ProgressWireRecord] = []
            var local = Diagnostics()
            for piece in splitter.append(buffer[0..<count]) {
                switch piece {
                case .oversized:
                    local.oversizedLines += 1
                case .line(let bytes):
                    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }  // blank lines are allowed
                    do {
                        batch.append(try ProgressWireRecord(line: bytes))
                    } catch .unsupportedVersion(let version) {
                        local.unsupportedVersion = version
                        shared.withLock { $0.diagnostics.merge(local) }
                        apply(batch, to: &mirror)
                        endReason = "\(name): " + ProgressWireError.unsupportedVersion(version).description
                        break reading
                    } catch .outOfRange {
                        local.outOfRangeLines += 1
                    } catch {
                        local.malformedLines += 1
                    }
                }
            }
            shared.withLock { $0.diagnostics.merge(local) }
            apply(batch, to: &mirror)
            // The stream's root is final: its work is over, whether or not the publisher closes the stream.
            if ProgressWireRecord.State.isFinalNode(node) { break }
        }
        streamEnded(reason: endReason ?? "\(name) stopped before the end")
    }

    /// Applies a batch of records in order, as the publisher wrote them (parents before children).
    private func apply(_ batch: [ProgressWireRecord], to mirror: inout MirrorTree) {
        guard !batch.isEmpty else { return }
        MountApplying.$mount.withValue(ObjectIdentifier(self)) {
            for record in batch {
                var diagnostics = Diagnostics()
                let sent = shared.withLock { $0.sentCommands }
                let created = mirror.apply(
                    record, diagnostics: &diagnostics, maximumNodeCount: options.maximumNodeCount, sentCommands: sent)
                // Counted as soon as the node can be seen in the mirror.
                shared.withLock { $0.diagnostics.merge(diagnostics) }
                if let (mirrored, parent) = created {
                    installHandlers(on: mirrored, remoteID: record.id, mirrorParent: parent)
                    // The node was visible in its parent's `children` before its handlers were installed: a
                    // cancel or pause made in that moment (not one that came from the stream or from a mirrored
                    // parent) is sent now.
                    let parentCancelled = parent?.isCancelled ?? false
                    let parentPaused = parent?.isPaused ?? false
                    // (Outside the "applying a line" scope, which holds back commands.)
                    if mirrored.isCancelled, record.state != .cancelled, !parentCancelled {
                        MountApplying.$mount.withValue(nil) { send(.cancel, remoteID: record.id) }
                    } else if mirrored.isPaused, record.state != .paused, !parentPaused {
                        MountApplying.$mount.withValue(nil) { send(.pause, remoteID: record.id) }
                    }
                }
                let early = shared.withLock { shared -> (Int, [ProgressWireCommand])? in
                    guard shared.rootID == nil, let root = mirror.rootID else { return nil }
                    shared.rootID = root
                    defer { shared.commandsForRoot = [] }
                    return (root, shared.commandsForRoot)
                }
                // Commands given before the root's id was known (a Ctrl-C right after starting a worker).
                if let (root, commands) = early {
                    for command in commands { transmit(command, id: root) }
                }
                shared.withLock { shared in
                    if record.id == shared.rootID { shared.streamRootIsFinal = record.state.isFinal }
                    // A line that agrees with a command sent ends the wait for it.
                    if let (command, _) = shared.sentCommands[record.id],
                        (command == .pause) == (record.state == .paused) || record.state.isFinal
                    {
                        shared.sentCommands[record.id] = nil
                    }
                }
            }
        }
    }

    private func streamEnded(reason: String) {
        let waitsForProcess = processIdentifier != nil
        let isFinal = ProgressWireRecord.State.isFinalNode(node)
        if !isFinal && !waitsForProcess {
            shared.withLock { $0.hasEnded = true }
            node.fail(Failure(reason: reason))
        } else if !isFinal && shared.withLock({ $0.diagnostics.unsupportedVersion != nil }) {
            shared.withLock { $0.hasEnded = true }
            node.fail(Failure(reason: reason))
        }
        // The read loop stops as soon as `node` is final, and `cancel()` marks a node cancelled before it
        // runs the handler that sends the command: when `node` was cancelled in this process, the stream
        // can end here before that handler runs, and the handler then sends nothing. The command is sent
        // here instead, before the command descriptor closes, unless it was sent already or the
        // publisher's root is final (exactly once: `send` checks `hasEnded` and marks `sentRootCancel`
        // under the same lock).
        let cancelledHere = node.isCancelled
        let lateCancel = shared.withLock { shared -> Int? in
            shared.hasEnded = true
            guard cancelledHere, !shared.sentRootCancel, !shared.streamRootIsFinal, let root = shared.rootID
            else { return nil }
            shared.sentRootCancel = true
            return root
        }
        if let lateCancel { transmit(.cancel, id: lateCancel) }
        writeLock.withLock { closed in
            guard !closed else { return }
            closed = true
            if ownsDescriptors, let commands, commands != input { StreamPlatform.close(commands) }
        }
        if ownsDescriptors { StreamPlatform.close(input) }
        ended.leave()
    }

    private func waitForProcess(_ pid: Int32) {
        let status = StreamPlatform.waitForExit(pid)
        let description: String
        switch status {
        case .exited(let code): description = "exited with status \(code)"
        case .signalled(let signal): description = "exited with signal \(signal)"
        }
        shared.withLock { $0.exitDescription = description }
        // The stream ends when the last holder of the descriptor goes; a grandchild could keep it: after a
        // grace period the mount stops reading.
        var waited = 0
        while !shared.withLock({ $0.hasEnded }) && waited < 40 {
            _ = StreamPlatform.waitReadable(-1, milliseconds: 25)
            waited += 1
        }
        if !shared.withLock({ $0.hasEnded }) { close() }
        while !shared.withLock({ $0.hasEnded }) { _ = StreamPlatform.waitReadable(-1, milliseconds: 5) }
        if status != .exited(0) {
            node.fail(Failure(reason: "\(name) \(description)"))
        } else if !ProgressWireRecord.State.isFinalNode(node) {
            node.fail(Failure(reason: "\(name) exited before its work was done"))
        }
        ended.leave()
    }
}

extension ProgressNode {
    /// Mounts the wire-format stream read from `fileDescriptor` as a child of this node standing for
    /// `pendingUnitCount` of its units, and sends commands to `commandDescriptor` (the same descriptor for
    /// a socket; `nil`: no control channel). The mount owns the descriptors from now on and closes them
    /// when the stream ends.
    ///
    /// - Parameter name: how failure reasons name the stream ("worker 2 stopped before the end"); also
    ///   the mirrored root's description until the stream's root sets one.
    /// - Complexity: O(1); the stream is read on a thread of the mount's own.
    public func mount(
        fileDescriptor: Int32, commandDescriptor: Int32? = nil, pendingUnitCount: Int64, name: String,
        options: ProgressMount.Options = ProgressMount.Options()
    ) -> ProgressMount {
        if commandDescriptor != nil { StreamPlatform.ignoreBrokenPipeSignal() }
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount, name: name, input: fileDescriptor,
            commands: commandDescriptor, ownsDescriptors: true, processIdentifier: nil, options: options)
        mount.start()
        return mount
    }

    /// Starts the program at `path` with `arguments` and mounts the tree it publishes as a child of this
    /// node standing for `pendingUnitCount` of its units.
    ///
    /// The program gets one end of a socket pair as descriptor 3, named by `PROGRESSTREE_FD=3` in its
    /// environment (the way make hands on its jobserver): its `TerminalRenderer` (or
    /// `ProgressPublisher.inherited(for:)`) publishes there instead of drawing, and reads commands from
    /// it. Its standard input is /dev/null; standard output and error are this process's.
    ///
    /// If the program exits with a status other than 0, is killed, or stops before its root is final, the
    /// mirrored node fails with the reason ("worker 2 exited with signal 9").
    ///
    /// - Parameters:
    ///   - environment: extra variables for the program ("NAME=value" wins over this process's).
    ///   - name: how failure reasons name the program; its file name by default.
    /// - Throws: `StreamSetupError` when the program cannot be started.
    public func mountProcess(
        path: String, arguments: [String] = [], environment: [String: String] = [:], pendingUnitCount: Int64,
        name: String? = nil, options: ProgressMount.Options = ProgressMount.Options()
    ) throws(StreamSetupError) -> ProgressMount {
        let (mine, theirs) = try StreamPlatform.socketPair()
        let target: Int32 = theirs == 3 ? 4 : 3
        let variable = ProgressPublisher.environmentVariable
        var entries = StreamPlatform.processEnvironment.filter {
            !$0.hasPrefix(variable + "=") && !environment.keys.contains(String($0.prefix(while: { $0 != "=" })))
        }
        entries += environment.map { "\($0.key)=\($0.value)" }
        entries.append("\(variable)=\(target)")
        let pid: Int32
        do {
            pid = try StreamPlatform.spawn(
                path: path, arguments: arguments, environment: entries, handOn: theirs, as: target)
        } catch {
            StreamPlatform.close(mine)
            StreamPlatform.close(theirs)
            throw error
        }
        StreamPlatform.close(theirs)
        StreamPlatform.ignoreBrokenPipeSignal()
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount,
            name: name ?? String(path.split(separator: "/").last ?? Substring(path)), input: mine, commands: mine,
            ownsDescriptors: true, processIdentifier: pid, options: options)
        mount.start()
        return mount
    }

    /// Connects to `host`:`port` over TCP and mounts the tree published there (`ProgressPublisher` on the
    /// accepted socket) as a child of this node standing for `pendingUnitCount` of its units. Commands go
    /// back on the same connection. A dropped connection fails the mirrored node with the reason.
    ///
    /// - Throws: `StreamSetupError` when the connection cannot be made.
    public func mountConnection(
        host: String, port: UInt16, pendingUnitCount: Int64, name: String? = nil,
        options: ProgressMount.Options = ProgressMount.Options()
    ) throws(StreamSetupError) -> ProgressMount {
        let socket = try StreamPlatform.connect(host: host, port: port)
        return mount(
            fileDescriptor: socket, commandDescriptor: socket, pendingUnitCount: pendingUnitCount,
            name: name ?? "\(host):\(port)", options: options)
    }
}

/// The state a mount shares between its reader, its process waiter and the threads that send commands
/// (guarded by the mount's lock; nodes are never touched under it).
struct MountShared: ~Copyable {
    var diagnostics = ProgressMount.Diagnostics()
    var rootID: Int?
    var isClosing = false
    var hasEnded = false
    var exitDescription: String?
    /// Pause and resume commands sent and not yet confirmed by a line: until then (at most a second),
    /// lines that say otherwise do not undo them (they were written before the command arrived).
    var sentCommands: [Int: (ProgressWireCommand, ContinuousClock.Instant)] = [:]
    /// Commands for the stream's root given before its first line said its id (sent in order then).
    var commandsForRoot: [ProgressWireCommand] = []
    /// Whether a cancel for the stream's root was sent (or queued in `commandsForRoot`).
    var sentRootCancel = false
    /// Whether the stream's last line for its root said it is final (the publisher's root is done).
    var streamRootIsFinal = false
}

extension ProgressMount.Diagnostics {
    mutating func merge(_ other: Self) {
        acceptedLines += other.acceptedLines
        malformedLines += other.malformedLines
        oversizedLines += other.oversizedLines
        outOfRangeLines += other.outOfRangeLines
        unknownParentLines += other.unknownParentLines
        cycleLines += other.cycleLines
        rejectedNodes += other.rejectedNodes
        cleanedStrings += other.cleanedStrings
        if let version = other.unsupportedVersion { unsupportedVersion = version }
    }
}

/// Which mount is applying lines on this thread: the handlers of its nodes then send nothing back.
enum MountApplying {
    @TaskLocal static var mount: ObjectIdentifier?
}
