#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import Synchronization
import ProgressTreePlatform

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
        /// Property values not set on a mirrored node, the rest of their line applied: a `properties`
        /// member that is not an object (1 for the member), entries of it that are not crossable values
        /// (`ProgressWireValue`), and values of a property the mount knows (`Options.properties`) that do
        /// not read as its `Value` (the node keeps the value it had). Names the mount does not know are
        /// ignored, not counted.
        public var skippedProperties = 0
        /// The major version of a line this library does not read, if one came (the mount then stopped).
        public var unsupportedVersion: Int?
        /// Over HTTP (`mountConnection(url:…)`): connections made again after one dropped.
        public var reconnections = 0
        /// Over HTTP: mirrored nodes finished because the snapshot sent on a reconnection did not name them
        /// (they ended while the connection was down, `Docs/WireFormat.md`, "Over HTTP").
        public var finishedWhileAway = 0
        /// Over HTTP: commands sent that the server did not apply: the request failed, or was answered
        /// with a status other than 2xx (403: a wrong token).
        public var failedCommands = 0
        /// Over HTTP: commands not sent because the server is read-only (`GET /token` answered 404).
        public var unsentCommands = 0

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
        /// The properties set on the mirrored nodes from the lines' `properties` (`Docs/WireFormat.md`,
        /// "Properties"), so that `summary(of:)` in this process counts the mounted program's values:
        /// `[PhotosSkipped.self, UploadRate.self]`. Each is found by its `WireProgressProperty.wireName`;
        /// names not in this list are ignored (a program may publish properties its readers do not use).
        /// Empty by default: a mount sets no property it was not told of. Two properties with one name: the
        /// last one listed is set.
        public var properties: [any WireProgressProperty.Type] = []
        /// Over HTTP (`ProgressNode.mountConnection(url:…)`): how long the server may stay out of reach —
        /// refusing connections, unreachable, not answering, or answered for by a proxy with 502, 503 or
        /// 504 — before the mount fails with the URL and the last error ("http://10.200.1.2:8080/events:
        /// connection refused for 10 s"). Counted from the moment the connection dropped (or from the first
        /// attempt); the mirror stays as it was meanwhile. 10 seconds by default.
        public var reconnectionLimit = Duration.seconds(10)
        /// Over HTTP: how long a connection may bring nothing, not even the server's keep-alive comment
        /// (sent every 15 s), before it is taken as dropped and made again. 45 seconds by default.
        public var silenceLimit = Duration.seconds(45)
        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// The mirrored root: a child of the node the stream was mounted on.
    public let node: ProgressNode
    /// The name shown with the mirrored root's description ("worker 2: Importing 3 photos") and used in
    /// failure reasons ("worker 2 exited with signal 9").
    public let name: String
    /// The process whose output is mounted, for `mountProcess`; `nil` otherwise. It leads a process
    /// group of its own, whose id is the same number (`Docs/Mounting.md`, "The program's whole tree").
    public let processIdentifier: Int32?

    let options: Options
    let input: Int32
    let commands: Int32?
    /// The program's standard output and error (`mountProcess`), read for `outputHandler`.
    let outputs: [(descriptor: Int32, source: OutputLine.Source)]
    let outputHandler: @Sendable (OutputLine) -> Void
    let shared: Lock<MountShared>
    let writeLock = Lock<Bool>(false)  // true once the command descriptor is closed
    /// Set by the reactor's thread while it applies lines: the handlers of mirrored nodes that run on that
    /// thread then send nothing back (the state came from the publisher). Handlers on other threads send.
    let applying = Atomic<Bool>(false)
    /// Whether `MountShared.sentCommands` may hold a pause or resume not confirmed yet (set under the shared
    /// lock with it; the reading thread takes the lock only then).
    let hasSentCommands = Atomic<Bool>(false)
    /// The interval last asked of the publisher, in milliseconds (0: none); touched by the reactor's
    /// thread only (an atomic so that the class stays `Sendable` without a lock).
    let sentInterval = Atomic<Int>(0)
    /// What only the reactor's thread touches: the splitters, the mirror (an uncontended lock).
    let reading: Lock<MountReading>
    let ended = DispatchGroup()
    /// The program `mountProcess` started, with its process group's watcher; `nil` for other mounts.
    let started: ChildProcess.Started?
    /// Whether the program's process group was ended (`endProcessGroup()`: once).
    let groupEnded = Atomic<Bool>(false)
    /// Whether the stream carries the snapshot markers of a mount over HTTP (`HTTPEventClient`): lines
    /// that start with a NUL byte, which no line of the format can.
    let readsSnapshotMarkers: Bool

    init(
        parent: ProgressNode, pendingUnitCount: Int64, name: String, input: Int32, commands: Int32?,
        outputs: [(descriptor: Int32, source: OutputLine.Source)] = [],
        outputHandler: (@Sendable (OutputLine) -> Void)? = nil,
        started: ChildProcess.Started? = nil, readsSnapshotMarkers: Bool = false, options: Options
    ) {
        // Indeterminate until the stream's root says how much work there is.
        self.node = ProgressNode(totalUnitCount: -1, parent: parent, pendingUnitCount: pendingUnitCount)
        self.name = name
        self.input = input
        self.commands = commands
        self.outputs = outputs
        self.outputHandler = outputHandler ?? Self.writeToStandardStreams
        self.processIdentifier = started?.pid
        self.started = started
        self.options = options
        self.readsSnapshotMarkers = readsSnapshotMarkers
        self.shared = Lock(MountShared())
        self.reading = Lock(
            MountReading(root: node, name: name, outputCount: outputs.count, properties: options.properties))
        node.localizedDescription = name
    }

    /// Starts reading (and, for a process, waiting for it).
    func start() {
        installHandlers(on: node, remoteID: nil, mirrorParent: nil)
        ended.enter()
        let reactor = StreamReactor.shared
        FileDescriptor.setNonBlocking(input)
        shared.withLock { $0.openParts = 1 + outputs.count + (processIdentifier == nil ? 0 : 1) }
        let streamWatch = reactor.watch(
            input, readable: { [self] buffer in readStream(into: buffer) }, stopped: { [self] in streamEnded() })
        shared.withLock { $0.streamWatch = streamWatch }
        for (index, output) in outputs.enumerated() {
            FileDescriptor.setNonBlocking(output.descriptor)
            let watch = reactor.watch(
                output.descriptor, readable: { [self] buffer in readOutput(index, into: buffer) },
                stopped: { [self] in outputEnded(index) })
            shared.withLock { $0.outputWatches.append(watch) }
        }
        if let started {
            waitForProcess(started.pid)
            reapWatcher(started.watcher)
        }
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
    /// publisher sees its reader go away. Does nothing once the stream ended. For `mountProcess`, the
    /// program's process group then ends as on a cancel (`Docs/Mounting.md`, "The program's whole tree").
    public func close() {
        if started != nil { endProcessGroup(after: Self.cancelGrace) }
        let watch = shared.withLock { shared -> StreamReactor.Watch? in
            shared.isClosing = true
            return shared.streamWatch
        }
        if let watch { StreamReactor.shared.stop(watch) }
    }
}
