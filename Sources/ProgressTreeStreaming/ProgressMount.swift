#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import Synchronization

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
/// A program started with `mountProcess` has its standard output and error read line by line and handed
/// to the mount's output handler (`OutputLine`): to a `TerminalRenderer` above its live area, say, or by
/// default to this process's own standard output and error. Every line is handed over, the last one
/// too, before the mount ends.
///
/// Thread safety: every member may be called from any thread. The streams of every mount of the process
/// are read on one thread (`StreamReactor`: one thread and one buffer however many mounts), which
/// updates the mirrored nodes under the mount's reading lock (taken by that thread alone, never the lock
/// that commands from the nodes' handlers take, so a cancel never waits for it) and calls the output
/// handlers; a process is
/// waited for there too (or, where the system gives no descriptor for it, on a thread of its own).
public final class ProgressMount: Sendable {
    /// The longest line read: 1 MiB. A longer line is dropped (`Diagnostics.oversizedLines`).
    public static let maximumLineLength = 1 << 20

    /// The longest line of a mounted program's output: 4 KiB. A longer line is handed over in pieces of at
    /// most that many bytes, each cut between two characters.
    public static let maximumOutputLineLength = 4096

    /// A line that a program started by `mountProcess` wrote to its standard output or error.
    public struct OutputLine: Sendable, Equatable {
        /// Where the program wrote it.
        public enum Source: Sendable, Equatable {
            case standardOutput
            case standardError
        }

        /// Where the program wrote the line.
        public var source: Source
        /// The line as written, without its line break, decoded as UTF-8 (a byte that is not UTF-8 reads
        /// as U+FFFD). It may hold control characters: clean it before it reaches a terminal
        /// (`TerminalRenderer.print` does).
        public var text: String
        /// The mount's name ("worker 2"), to say whose line it is.
        public var mountName: String

        /// A line of `mountName`'s program.
        public init(source: Source, text: String, mountName: String) {
            self.source = source
            self.text = text
            self.mountName = mountName
        }
    }

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
        /// Whether the mount asks its publisher to walk less often while the process's streams bring more
        /// than about 6,600 reads a second (the `interval` command of `Docs/WireFormat.md`): `true` by
        /// default, so that a process mounting a thousand publishers spends a bounded share of a core
        /// reading them, at the price of their lines coming further apart (150–160 ms for a thousand; see
        /// `Docs/Mounting.md`, "Scale"). Set it to `false` to have every line at the publisher's own
        /// interval whatever it costs.
        public var pacesPublisher = true
        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// The mirrored root: a child of the node the stream was mounted on.
    public let node: ProgressNode
    /// The name shown with the mirrored root's description ("worker 2: Importing 3 photos") and used in
    /// failure reasons ("worker 2 exited with signal 9").
    public let name: String
    /// The process whose output is mounted, for `mountProcess`; `nil` otherwise.
    public let processIdentifier: Int32?

    private let options: Options
    private let input: Int32
    private let commands: Int32?
    /// The program's standard output and error (`mountProcess`), read for `outputHandler`.
    private let outputs: [(descriptor: Int32, source: OutputLine.Source)]
    private let outputHandler: @Sendable (OutputLine) -> Void
    private let shared: Lock<MountShared>
    private let writeLock = Lock<Bool>(false)  // true once the command descriptor is closed
    /// Set by the reactor's thread while it applies lines: the handlers of mirrored nodes that run on that
    /// thread then send nothing back (the state came from the publisher). Handlers on other threads send.
    private let applying = Atomic<Bool>(false)
    /// Whether `MountShared.sentCommands` may hold a pause or resume not confirmed yet (set under the shared
    /// lock with it; the reading thread takes the lock only then).
    private let hasSentCommands = Atomic<Bool>(false)
    /// The interval last asked of the publisher, in milliseconds (0: none); touched by the reactor's
    /// thread only (an atomic so that the class stays `Sendable` without a lock).
    private let sentInterval = Atomic<Int>(0)
    /// What only the reactor's thread touches: the splitters, the mirror (an uncontended lock).
    private let reading: Lock<MountReading>
    private let ended = DispatchGroup()

    init(
        parent: ProgressNode, pendingUnitCount: Int64, name: String, input: Int32, commands: Int32?,
        outputs: [(descriptor: Int32, source: OutputLine.Source)] = [],
        outputHandler: (@Sendable (OutputLine) -> Void)? = nil,
        processIdentifier: Int32?, options: Options
    ) {
        // Indeterminate until the stream's root says how much work there is.
        self.node = ProgressNode(totalUnitCount: -1, parent: parent, pendingUnitCount: pendingUnitCount)
        self.name = name
        self.input = input
        self.commands = commands
        self.outputs = outputs
        self.outputHandler = outputHandler ?? Self.writeToStandardStreams
        self.processIdentifier = processIdentifier
        self.options = options
        self.shared = Lock(MountShared())
        self.reading = Lock(MountReading(root: node, name: name, outputCount: outputs.count))
        node.localizedDescription = name
    }

    /// Starts reading (and, for a process, waiting for it).
    func start() {
        installHandlers(on: node, remoteID: nil, mirrorParent: nil)
        ended.enter()
        let reactor = StreamReactor.shared
        StreamPlatform.setNonBlocking(input)
        shared.withLock { $0.openParts = 1 + outputs.count + (processIdentifier == nil ? 0 : 1) }
        let streamWatch = reactor.watch(
            input, readable: { [self] buffer in readStream(into: buffer) }, stopped: { [self] in streamEnded() })
        shared.withLock { $0.streamWatch = streamWatch }
        for (index, output) in outputs.enumerated() {
            StreamPlatform.setNonBlocking(output.descriptor)
            let watch = reactor.watch(
                output.descriptor, readable: { [self] buffer in readOutput(index, into: buffer) },
                stopped: { [self] in outputEnded(index) })
            shared.withLock { $0.outputWatches.append(watch) }
        }
        if let processIdentifier { waitForProcess(processIdentifier) }
    }

    /// What the mount did with bad input so far.
    ///
    /// Counted per read of the stream, once that read's lines are applied: a node may show the change of a
    /// line a moment before the counts include that read's bad lines. Once the mount ended
    /// (`waitUntilEnded()` returned), the counts are complete.
    public var diagnostics: Diagnostics {
        shared.withLock { $0.diagnostics }
    }

    /// Whether the stream (and the process and its output, if any) ended; `node` is then final.
    public var hasEnded: Bool {
        ended.wait(timeout: .now()) == .success
    }

    /// How the process ended (`mountProcess` only), once it did: "exited with status 0", "exited with
    /// signal 9".
    public var exitDescription: String? {
        shared.withLock { $0.exitDescription }
    }

    /// Waits until the stream (and the process and its output, if any) ended, at most `timeout`; `true`
    /// if it did.
    @discardableResult
    public func waitUntilEnded(timeout: Duration = .seconds(3600)) -> Bool {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return ended.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// Waits until the stream (and the process and its output, if any) ended.
    public func ended() async {
        await withCheckedContinuation { continuation in
            ended.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Stops reading: `node` fails ("… was closed before the end") unless it is already final, and the
    /// publisher sees its reader go away. Does nothing once the stream ended.
    public func close() {
        let watch = shared.withLock { shared -> StreamReactor.Watch? in
            shared.isClosing = true
            return shared.streamWatch
        }
        if let watch { StreamReactor.shared.stop(watch) }
    }

    // MARK: Commands

    /// Sends `command` for remote node `id` (`nil`: the stream's root), unless the mount is applying a
    /// line (the state came from the publisher) or the stream ended.
    private func send(_ command: ProgressWireCommand, remoteID: Int?) {
        guard commands != nil, !(applying.load(ordering: .relaxed) && StreamReactor.shared.isCurrent) else { return }
        let target = shared.withLock { shared -> Int? in
            guard !shared.hasEnded else { return nil }
            guard let id = remoteID ?? shared.rootID else {
                // The stream's root has not said its id yet: sent when it does.
                shared.commandsForRoot.append(command)
                if command == .cancel { shared.sentRootCancel = true }
                return nil
            }
            if command != .cancel {
                shared.sentCommands[id] = (command, .now + .seconds(1))
                hasSentCommands.store(true, ordering: .releasing)
            }
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

    /// On the reactor's thread: reads what came on the stream and applies its lines.
    private func readStream(into buffer: UnsafeMutableRawBufferPointer) -> StreamReactor.Next {
        let count = StreamPlatform.read(input, into: buffer)
        if count < 0 {
            let error = StreamPlatform.lastError
            if error == StreamPlatform.wouldBlock { return .keepWatching }
            reading.withLock { $0.endReason = "\(name): \(StreamPlatform.errorText(error))" }
            return .stopWatching
        }
        if count == 0 {
            reading.withLock { reading in
                if reading.splitter.remainder() != nil { reading.diagnostics.malformedLines += 1 }  // a line cut short
                reading.endReason = "\(name) stopped before the end"
            }
            mergeDiagnostics()
            return .stopWatching
        }
        return applyRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// What a read of `bytes` from the stream does, on the thread that reads it: its lines applied, the
    /// diagnostics merged, the commands waiting sent.
    private func applyRead(_ bytes: UnsafeRawBufferPointer) -> StreamReactor.Next {
        applying.store(true, ordering: .relaxed)
        let next = reading.withLock { reading in apply(bytes, to: &reading) }
        applying.store(false, ordering: .relaxed)
        mergeDiagnostics()
        sendEarlyCommands()
        if next == .keepWatching { askForInterval() }
        return next
    }

    /// Asks the publisher for the interval the process wants now (`ReadPacing`), when it differs from the
    /// one last asked for: one short line at each change of the process's load, none while it holds.
    private func askForInterval() {
        guard options.pacesPublisher, let commands else { return }
        let wanted = StreamReactor.shared.requestedIntervalMilliseconds
        guard wanted != sentInterval.load(ordering: .relaxed) else { return }
        let bytes = Array((WireIntervalRequest(milliseconds: wanted).line + "\n").utf8)
        // Never waits on this thread, which reads every stream: a publisher that reads no commands and
        // let them fill its channel is asked again at a later read.
        let sent = writeLock.withLock { closed -> Bool in
            guard !closed else { return true }
            switch StreamPlatform.write(commands, bytes, from: 0, blocking: false) {
            case .wrote(let count):
                // A line is written whole: the rest of a short write (a few bytes at most) follows at once.
                if count < bytes.count { _ = StreamPlatform.writeAll(commands, Array(bytes[count...])) }
                return true
            case .full: return false
            case .failed: return true  // the publisher went away: the end of the stream says so
            }
        }
        if sent { sentInterval.store(wanted, ordering: .relaxed) }
    }

    /// A mount of no descriptor, whose reads are handed in by `applyMeasuredRead(_:)`: the reading path
    /// without a socket or a thread, for measuring what a line costs.
    package static func unread(below parent: ProgressNode, name: String) -> ProgressMount {
        ProgressMount(
            parent: parent, pendingUnitCount: 1, name: name, input: -1, commands: nil, processIdentifier: nil,
            options: Options())
    }

    /// Applies `bytes` as if read from the stream (see `unread(below:name:)`); `false` once the mount would
    /// stop reading.
    package func applyMeasuredRead(_ bytes: UnsafeRawBufferPointer) -> Bool {
        applyRead(bytes) == .keepWatching
    }

    /// Splits `bytes` into lines and applies them in order, as the publisher wrote them (parents before
    /// children); `.stopWatching` after a line of another major version, or once the stream's root is
    /// final (its work is over, whether or not the publisher closes the stream).
    private func apply(_ bytes: UnsafeRawBufferPointer, to reading: inout MountReading) -> StreamReactor.Next {
        var records: [ProgressWireRecord] = []
        var stops = false
        var found = Diagnostics()
        // Out of `reading` while its splitter runs (moved, not copied), back once the lines are read.
        var memo = WireLineMemo()
        swap(&memo, &reading.memo)
        defer { swap(&memo, &reading.memo) }
        reading.splitter.forEachPiece(in: bytes) { piece in
            guard !stops else { return }
            switch piece {
            case .oversized:
                found.oversizedLines += 1
            case .line(let line):
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank lines are allowed
                do throws(ProgressWireError) {
                    records.append(try memo.record(line))
                } catch .unsupportedVersion(let version) {
                    found.unsupportedVersion = version
                    stops = true
                } catch .outOfRange {
                    found.outOfRangeLines += 1
                } catch {
                    found.malformedLines += 1
                }
            }
        }
        reading.diagnostics.merge(found)
        for record in records { apply(record, to: &reading) }
        if let version = found.unsupportedVersion {
            reading.endReason = "\(name): " + ProgressWireError.unsupportedVersion(version).description
            return .stopWatching
        }
        return ProgressWireRecord.State.isFinalNode(node) ? .stopWatching : .keepWatching
    }

    /// Applies one record to the mirror, installs the handlers of a node it created, and notes what the
    /// commands sent wait for.
    private func apply(_ record: ProgressWireRecord, to reading: inout MountReading) {
        let sent = hasSentCommands.load(ordering: .acquiring) ? shared.withLock { $0.sentCommands } : [:]
        let created = reading.mirror.apply(
            record, diagnostics: &reading.diagnostics, maximumNodeCount: options.maximumNodeCount, sentCommands: sent)
        if let (mirrored, parent) = created {
            installHandlers(on: mirrored, remoteID: record.id, mirrorParent: parent)
            // The node was visible in its parent's `children` before its handlers were installed: a
            // cancel or pause made in that moment (not one that came from the stream or from a mirrored
            // parent) is sent now (outside the "applying a line" scope, which holds back commands).
            let parentCancelled = parent?.isCancelled ?? false
            let parentPaused = parent?.isPaused ?? false
            applying.store(false, ordering: .relaxed)
            if mirrored.isCancelled, record.state != .cancelled, !parentCancelled {
                send(.cancel, remoteID: record.id)
            } else if mirrored.isPaused, record.state != .paused, !parentPaused {
                send(.pause, remoteID: record.id)
            }
            applying.store(true, ordering: .relaxed)
        }
        // What the command senders read: the root's id once known, whether its publisher's root is final,
        // the commands this line confirms. Taken under the shared lock only when one of them changes.
        let rootID = reading.mirror.rootID
        let isRootLine = record.id == rootID
        guard
            reading.announcedRootID != rootID || (isRootLine && reading.announcedRootFinal != record.state.isFinal)
                || !sent.isEmpty
        else { return }
        reading.announcedRootID = rootID
        if isRootLine { reading.announcedRootFinal = record.state.isFinal }
        shared.withLock { shared in
            if shared.rootID == nil, let rootID { shared.rootID = rootID }
            if record.id == shared.rootID { shared.streamRootIsFinal = record.state.isFinal }
            // A line that agrees with a command sent ends the wait for it.
            if let (command, _) = shared.sentCommands[record.id],
                (command == .pause) == (record.state == .paused) || record.state.isFinal
            {
                shared.sentCommands[record.id] = nil
                if shared.sentCommands.isEmpty { hasSentCommands.store(false, ordering: .releasing) }
            }
        }
    }

    /// Counts what the last read found, where `diagnostics` reads it.
    private func mergeDiagnostics() {
        let found = reading.withLock { reading -> Diagnostics? in
            guard reading.diagnostics != Diagnostics() else { return nil }
            defer { reading.diagnostics = Diagnostics() }
            return reading.diagnostics
        }
        if let found { shared.withLock { $0.diagnostics.merge(found) } }
    }

    /// Sends the commands given before the root's id was known (a Ctrl-C right after starting a worker).
    private func sendEarlyCommands() {
        let early = shared.withLock { shared -> (Int, [ProgressWireCommand])? in
            guard let root = shared.rootID, !shared.commandsForRoot.isEmpty else { return nil }
            defer { shared.commandsForRoot = [] }
            return (root, shared.commandsForRoot)
        }
        if let (root, commands) = early {
            for command in commands { transmit(command, id: root) }
        }
    }

    /// On the reactor's thread, once: the stream ended (its end, an error, its root final, `close()`, or
    /// the time given to a process's descendants after it exited ran out).
    private func streamEnded() {
        mergeDiagnostics()
        let closing = shared.withLock { $0.isClosing }
        let reason =
            reading.withLock { $0.endReason.map { closing ? "\(name) was closed before the end" : $0 } }
            ?? "\(name) was closed before the end"
        let waitsForProcess = processIdentifier != nil
        let isFinal = ProgressWireRecord.State.isFinalNode(node)
        let unsupported = shared.withLock { $0.diagnostics.unsupportedVersion != nil }
        if !isFinal && (!waitsForProcess || unsupported) {
            shared.withLock { $0.hasEnded = true }
            node.fail(Failure(reason: reason))
        }
        // `cancel()` marks a node cancelled before it runs the handler that sends the command: when
        // `node` was cancelled in this process, the stream can end here (its root is final) before that
        // handler runs, and the handler then sends nothing. The command is sent here instead, before the
        // command descriptor closes, unless it was sent already or the publisher's root is final (exactly
        // once: `send` checks `hasEnded` and marks `sentRootCancel` under the same lock).
        let cancelledHere = node.isCancelled
        let lateCancel = shared.withLock { shared -> Int? in
            shared.hasEnded = true
            shared.streamWatch = nil
            guard cancelledHere, !shared.sentRootCancel, !shared.streamRootIsFinal, let root = shared.rootID
            else { return nil }
            shared.sentRootCancel = true
            return root
        }
        if let lateCancel { transmit(.cancel, id: lateCancel) }
        writeLock.withLock { closed in
            guard !closed else { return }
            closed = true
            if let commands, commands != input { StreamPlatform.close(commands) }
        }
        // The mount owns its descriptors: closing them tells the publisher its reader went away.
        StreamPlatform.close(input)
        partEnded()
    }

    // MARK: The program's output

    /// On the reactor's thread: reads what the program wrote on output `index` and hands over its lines.
    private func readOutput(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) -> StreamReactor.Next {
        let descriptor = outputs[index].descriptor
        let count = StreamPlatform.read(descriptor, into: buffer)
        if count < 0 && StreamPlatform.lastError == StreamPlatform.wouldBlock { return .keepWatching }
        let lines = reading.withLock { reading -> [[UInt8]] in
            guard count > 0 else { return reading.outputSplitters[index].remainder().map { [$0] } ?? [] }
            return reading.outputSplitters[index].append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])).map {
                if case .line(let line) = $0 { line } else { [] }
            }
        }
        let source = outputs[index].source
        for line in lines {
            outputHandler(OutputLine(source: source, text: String(decoding: line, as: UTF8.self), mountName: name))
        }
        return count > 0 ? .keepWatching : .stopWatching
    }

    /// On the reactor's thread, once: output `index` ended (its end, or the time given to the process's
    /// descendants ran out), every line of it handed over.
    private func outputEnded(_ index: Int) {
        let rest = reading.withLock { $0.outputSplitters[index].remainder() }
        if let rest {
            outputHandler(
                OutputLine(source: outputs[index].source, text: String(decoding: rest, as: UTF8.self), mountName: name))
        }
        StreamPlatform.close(outputs[index].descriptor)
        partEnded()
    }

    /// The default output handler: each line, whole, to this process's standard output or error, where
    /// the program wrote it.
    static let writeToStandardStreams: @Sendable (OutputLine) -> Void = { line in
        _ = StreamPlatform.writeAll(line.source == .standardOutput ? 1 : 2, Array((line.text + "\n").utf8))
    }

    // MARK: The process

    private func waitForProcess(_ pid: Int32) {
        if let descriptor = StreamPlatform.processDescriptor(pid) {
            _ = StreamReactor.shared.watch(
                descriptor,
                readable: { [self] _ in
                    guard let status = StreamPlatform.waitForExit(pid, blocking: false) else { return .keepWatching }
                    processEnded(status)
                    return .stopWatching
                },
                stopped: { StreamPlatform.close(descriptor) })
        } else {
            StreamPlatform.detachThread { [self] in processEnded(StreamPlatform.waitForExit(pid) ?? .exited(-1)) }
        }
    }

    /// The process ended: its streams get a second to end too (a process it started may hold them), then
    /// are closed.
    private func processEnded(_ status: StreamPlatform.ExitStatus) {
        let description: String
        switch status {
        case .exited(let code): description = "exited with status \(code)"
        case .signalled(let signal): description = "exited with signal \(signal)"
        }
        shared.withLock { shared in
            shared.exitDescription = description
            shared.exitStatus = status
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [self] in
            let watches = shared.withLock { shared in
                [shared.streamWatch].compactMap { $0 } + shared.outputWatches
            }
            for watch in watches { StreamReactor.shared.stop(watch) }
        }
        partEnded()
    }

    /// One of the stream, the process and its outputs ended; after the last, the process's outcome is
    /// applied and the mount has ended.
    private func partEnded() {
        let (last, status) = shared.withLock { shared in
            shared.openParts -= 1
            return (shared.openParts == 0, shared.exitStatus)
        }
        guard last else { return }
        if let status {
            if status != .exited(0) {
                node.fail(Failure(reason: "\(name) \(exitDescription ?? "")"))
            } else if !ProgressWireRecord.State.isFinalNode(node) {
                node.fail(Failure(reason: "\(name) exited before its work was done"))
            }
        }
        ended.leave()
    }
}

extension ProgressNode {
    /// Mounts the wire-format stream read from `fileDescriptor` as a child of this node standing for
    /// `pendingUnitCount` of its units, and sends commands to `commandDescriptor` (the same descriptor for
    /// a socket; `nil`: no control channel). The mount owns the descriptors from now on and closes them
    /// when the stream ends (so the publisher sees its reader go away).
    ///
    /// - Parameters:
    ///   - fileDescriptor: the stream to read, open for reading; owned by the mount from now on.
    ///   - commandDescriptor: where commands are written, open for writing (for a socket, the same
    ///     descriptor as `fileDescriptor`); `nil` when the publisher reads no commands.
    ///   - pendingUnitCount: the share of this node's units the mounted tree stands for.
    ///   - name: shown with the stream's root's description ("build host: Importing 3 photos"), or
    ///     alone until the root sets one, and in failure reasons ("build host stopped before the end").
    ///   - options: limits of the mount (see `ProgressMount.Options`).
    /// - Returns: the mount; its `node` is the mirrored root, already attached to this node.
    /// - Complexity: O(1); the stream is read on the thread that reads every mount (`ProgressMount`).
    public func mount(
        fileDescriptor: Int32, commandDescriptor: Int32? = nil, pendingUnitCount: Int64, name: String,
        options: ProgressMount.Options = ProgressMount.Options()
    ) -> ProgressMount {
        if commandDescriptor != nil { StreamPlatform.ignoreBrokenPipeSignal() }
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount, name: name, input: fileDescriptor,
            commands: commandDescriptor, processIdentifier: nil, options: options)
        mount.start()
        return mount
    }

    /// Starts the program at `path` with `arguments` and mounts the tree it publishes as a child of this
    /// node standing for `pendingUnitCount` of its units.
    ///
    /// The program gets one end of a socket pair as descriptor 3, named by `PROGRESSTREE_FD=3` in its
    /// environment (the way make hands on its jobserver): its `TerminalRenderer` (or
    /// `ProgressPublisher.inherited(for:)`) publishes there instead of drawing, and reads commands from
    /// it. Its standard input is /dev/null. Its standard output and error are read line by line and each
    /// line is handed to `outputLines` (`TerminalRenderer.print` shows them above its live area, prefixed
    /// with `name`); by default each line goes, whole, to this process's standard output or error. Lines
    /// of several programs never mix within a line, and every line is handed over before the mount ends.
    ///
    /// If the program exits with a status other than 0, is killed, or stops before its root is final, the
    /// mirrored node fails with the reason ("worker 2 exited with signal 9"). On Linux the program gets
    /// `SIGTERM` when this process ends, however it ends (`kill -9` included): a worker does not outlive
    /// the program that mounted it. (Programs built with ProgressTree also stop when their reader goes
    /// away: see `ProgressPublisher.Options.cancelsRootWhenDisconnected`.)
    ///
    /// - Parameters:
    ///   - path: the program to start: a path, not looked up in `PATH`.
    ///   - arguments: the program's arguments, without its name (which is `path`).
    ///   - environment: extra variables for the program ("NAME=value" wins over this process's).
    ///   - pendingUnitCount: the share of this node's units the program's tree stands for.
    ///   - name: shown with the program's root description ("worker 2: Importing 3 photos"), with its
    ///     output lines and in failure reasons; its file name by default.
    ///   - options: limits of the mount (see `ProgressMount.Options`).
    ///   - outputLines: called with each line the program writes, in order, on the thread that reads
    ///     every mount: return quickly (the lines of every mount wait meanwhile).
    /// - Returns: the mount; its `node` is the mirrored root, already attached to this node, and its
    ///   `processIdentifier` the program's.
    /// - Throws: `StreamSetupError` when the program cannot be started.
    public func mountProcess(
        path: String, arguments: [String] = [], environment: [String: String] = [:], pendingUnitCount: Int64,
        name: String? = nil, options: ProgressMount.Options = ProgressMount.Options(),
        outputLines: (@Sendable (ProgressMount.OutputLine) -> Void)? = nil
    ) throws(StreamSetupError) -> ProgressMount {
        let variable = ProgressPublisher.environmentVariable
        var entries = StreamPlatform.processEnvironment.filter {
            !$0.hasPrefix(variable + "=") && !environment.keys.contains(String($0.prefix(while: { $0 != "=" })))
        }
        entries += environment.map { "\($0.key)=\($0.value)" }
        entries.append("\(variable)=3")
        let (mine, theirs) = try StreamPlatform.socketPair()
        var opened = [mine, theirs]
        defer { for descriptor in opened { StreamPlatform.close(descriptor) } }
        let output = try StreamPlatform.pipe()
        opened += [output.read, output.write]
        let error = try StreamPlatform.pipe()
        opened += [error.read, error.write]
        // From the reactor's thread, which lasts as long as the process: the parent-death signal follows
        // the thread that starts the program.
        let environmentEntries = entries
        let pid = try StreamReactor.shared.performAndWait { () throws(StreamSetupError) -> Int32 in
            try StreamPlatform.spawn(
                path: path, arguments: arguments, environment: environmentEntries,
                handOn: [(theirs, 3), (-1, 0), (output.write, 1), (error.write, 2)])
        }
        opened = [theirs, output.write, error.write]  // the program's ends: closed here, the rest is the mount's
        StreamPlatform.ignoreBrokenPipeSignal()
        let mount = ProgressMount(
            parent: self, pendingUnitCount: pendingUnitCount,
            name: name ?? String(path.split(separator: "/").last ?? Substring(path)), input: mine, commands: mine,
            outputs: [(output.read, .standardOutput), (error.read, .standardError)], outputHandler: outputLines,
            processIdentifier: pid, options: options)
        mount.start()
        return mount
    }

    /// Connects to `host`:`port` over TCP and mounts the tree published there (`ProgressListener`, or
    /// `ProgressPublisher` on an accepted socket) as a child of this node standing for `pendingUnitCount`
    /// of its units. Commands go back on the same connection. A dropped connection fails the mirrored node
    /// with the reason.
    ///
    /// TCP has no notion of users: prefer `mountConnection(path:…)` on this machine, and ssh for others
    /// (`Docs/Mounting.md`).
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

    /// Connects to the Unix-domain socket at `path` (`ProgressListener(_:path:)`) and mounts the tree
    /// published there as a child of this node standing for `pendingUnitCount` of its units. Commands go
    /// back on the same connection.
    ///
    /// The socket must belong to this user, in a directory only this user can write
    /// (`ProgressSocket.privateSocketPath(named:)` makes such a path): a tree read from someone else's
    /// socket, and commands sent there, would not be this user's.
    ///
    /// - Throws: `StreamSetupError` when the path is not safe or the connection cannot be made.
    public func mountConnection(
        path: String, pendingUnitCount: Int64, name: String? = nil,
        options: ProgressMount.Options = ProgressMount.Options()
    ) throws(StreamSetupError) -> ProgressMount {
        let socket = try StreamPlatform.connect(path: path)
        return mount(
            fileDescriptor: socket, commandDescriptor: socket, pendingUnitCount: pendingUnitCount,
            name: name ?? String(path.split(separator: "/").last ?? Substring(path)), options: options)
    }
}

/// The state a mount shares between the reactor's thread, a process waiter and the threads that send
/// commands (guarded by the mount's lock; nodes are never touched under it).
struct MountShared: ~Copyable {
    var diagnostics = ProgressMount.Diagnostics()
    var rootID: Int?
    var isClosing = false
    var hasEnded = false
    var exitDescription: String?
    var exitStatus: StreamPlatform.ExitStatus?
    /// The stream, the process and its outputs that have not ended yet.
    var openParts = 0
    var streamWatch: StreamReactor.Watch?
    var outputWatches: [StreamReactor.Watch] = []
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

/// What only the reactor's thread touches, under the mount's uncontended reading lock.
struct MountReading {
    var splitter = LineSplitter(maximumLineLength: ProgressMount.maximumLineLength)
    /// The last line read, so that the next is read only where it differs.
    var memo = WireLineMemo()
    var mirror: MountedNodeMap
    var outputSplitters: [LineSplitter]
    /// Counted since `diagnostics` last took them.
    var diagnostics = ProgressMount.Diagnostics()
    /// Why the stream ended, once it did (the reactor stopped watching it).
    var endReason: String?
    /// The root's id and final state as last written to `MountShared`.
    var announcedRootID: Int?
    var announcedRootFinal = false

    init(root: ProgressNode, name: String, outputCount: Int) {
        mirror = MountedNodeMap(root: root, name: name)
        outputSplitters = Array(
            repeating: LineSplitter(maximumLineLength: ProgressMount.maximumOutputLineLength, longLines: .cut),
            count: outputCount)
    }
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
