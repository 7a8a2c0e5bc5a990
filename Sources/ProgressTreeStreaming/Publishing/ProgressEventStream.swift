import Dispatch
import ProgressTree
import ProgressTreePlatform

/// Serves a node's tree as Server-Sent Events (`Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)")
/// to any number of subscribers, as bytes: an HTTP server only moves each subscription's chunks to its
/// connection (`ProgressTreeWeb` does, over Hummingbird).
///
/// ```swift
/// let events = ProgressEventStream(job)
/// events.start()
/// // for each GET /events:
/// let subscription = events.subscribe(lastEventID: request.headers["Last-Event-ID"])
/// for await chunk in subscription { try await connection.write(chunk) }
/// ```
///
/// One `ProgressPublisher` walks the tree for every subscriber, so many readers cost one walk an interval
/// (`Options.publisher.interval`, 50 ms): its lines, under the rules for writers (every node named gets
/// its last line, failed ones with their reason, the root's final line last), are numbered by walk (the
/// events' `id`) and framed once, and the same bytes are handed to every subscriber. The stream keeps the
/// current line of every node named and still in the tree, and the kept failures, so that a subscriber
/// joining late, or reconnecting with `Last-Event-ID`, first gets the run's name (`runID`), then those
/// lines (all with the last walk's id), then `event: synced`, then the later walks. After the root's final
/// line no walk writes anything; a subscriber joining then gets the final state and `synced`, and its
/// subscription stays open (only keep-alives) until it is cancelled or the stream finishes.
///
/// **A subscriber that falls behind** is resynced, never buffered without bound: when the walks queued
/// for it would pass `Options.maximumBufferedBytes` (32 KiB), they are dropped, and the next chunk its
/// transport takes is a snapshot of the tree then (every line is a whole snapshot of its node: only the
/// steps between are lost). A transport waiting for the next chunk is handed each walk at once.
///
/// Thread safety: every member may be called from any thread. Walks happen under the publisher's lock,
/// then the stream's own (lock order: publisher, stream; the stream's lock is never held while a node's
/// is taken); subscribers' transports are resumed outside the stream's lock, and commands are applied
/// outside both, on the caller's thread.
public final class ProgressEventStream: Sendable {
    /// How the stream behaves.
    public struct Options: Sendable {
        /// How the tree is walked: `interval` (50 ms: the most often a node's line is sent), `maximumDepth`,
        /// and `publishesOnTimer` (`false`: walk with `publishChanges()`). Its `cancelsRootWhenDisconnected`
        /// is not used: subscribers come and go, the work is the stream's owner's.
        public var publisher = ProgressPublisher.Options()
        /// The most bytes of walks queued for one subscriber whose transport is busy; beyond them it is
        /// resynced (see the type's documentation).
        public var maximumBufferedBytes = 32 * 1024
        /// After this long with nothing to send, a subscriber gets a `: keep-alive` comment (15 s: so that
        /// proxies keep the connection). Checked every third of it.
        public var keepAliveInterval: Duration = .seconds(15)
        /// The events' `id` before the first walk's (`nil`: a random number below 2^40, so that a number
        /// from another server process counts as none).
        package var firstEventID: UInt64?

        /// The default options; change its properties to customize them.
        public init() {}
    }

    /// What became of a command sent to the stream (`applyCommand(_:)`), as an HTTP server answers it.
    public enum CommandOutcome: Sendable, Equatable {
        /// A command of the wire format, applied to the node it names (or to nothing, when that node is
        /// not in the tree): `204 No Content`.
        case applied
        /// A command line this stream does not act on (an unknown command, or `interval`: many readers
        /// share one walk; any command on a relay, which has no tree of its own): `204 No Content`, as the
        /// wire format ignores unknown commands.
        case ignored
        /// Not a command line of the wire format (not JSON, no `"v":1`, a command without a valid `id`):
        /// `400 Bad Request`.
        case malformed
        /// Over `ProgressPublisher.maximumCommandLength` (4 KiB): `413 Content Too Large`.
        case oversized
    }

    /// What the stream did for its subscribers so far, for logs and tests.
    public struct Diagnostics: Sendable, Equatable {
        /// Subscriptions made.
        public var subscriptions = 0
        /// Snapshots sent: one for each subscription, and one for each resync.
        public var snapshots = 0
        /// Times a subscriber fell `Options.maximumBufferedBytes` behind and was resynced.
        public var resyncs = 0

        /// Nothing yet.
        public init() {}
    }

    /// The run this stream serves: 32 hexadecimal digits, random, new for each stream, named to every
    /// subscriber first (`event: run`, `Docs/WireFormat.md`, "Runs"), so that a reader that reconnects to
    /// another run (a server restarted, another instance) starts again instead of merging two runs.
    public let runID: String

    private let core: EventStreamCore
    /// The walker of the stream's tree; `nil` for a relay (`init(relayingRun:options:)`).
    private let publisher: ProgressPublisher?
    private let options: Options
    private let keepAliveTimer = Lock<(any DispatchSourceTimer)?>(nil)

    /// A stream of the tree below `root`. Nothing is walked before `start()` or `publishChanges()`.
    public init(_ root: ProgressNode, options: Options = Options()) {
        let firstWalk = options.firstEventID ?? UInt64.random(in: 1...(1 << 40))
        var generator = SystemRandomNumberGenerator()
        let runID = (0..<2).map { _ in
            let digits = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let core = EventStreamCore(
            EventStreamState(
                firstWalk: firstWalk, runID: runID, maximumBufferedBytes: max(0, options.maximumBufferedBytes)))
        self.runID = runID
        var publisherOptions = options.publisher
        publisherOptions.cancelsRootWhenDisconnected = false
        self.core = core
        self.options = options
        self.publisher = ProgressPublisher(root, options: publisherOptions) { bytes in
            core.takeWalk(bytes)
            return true
        }
    }

    /// A relay: a stream of lines walked elsewhere (another process's tree, read back from a store such as
    /// `ProgressTreePostgres`'s), each batch handed over with `relay(_:)` as one walk, under the rules for
    /// writers that the process that walked them kept. It serves them as a stream of its own tree does:
    /// `runID` named first (here `runID` as given: the walker's run, with whatever the caller adds to tell
    /// relays apart), the snapshot, `synced`, the later batches, keep-alives once `start()` was called.
    /// It walks nothing, and applies no command: `applyCommand(_:)` answers `.ignored` for a command line
    /// (the caller sends it on to the walker).
    public init(relayingRun runID: String, options: Options = Options()) {
        let firstWalk = options.firstEventID ?? UInt64.random(in: 1...(1 << 40))
        self.runID = runID
        self.core = EventStreamCore(
            EventStreamState(
                firstWalk: firstWalk, runID: runID, maximumBufferedBytes: max(0, options.maximumBufferedBytes)))
        self.options = options
        self.publisher = nil
    }

    deinit {
        keepAliveTimer.withLock { $0?.cancel() }
    }

    /// Hands one batch of lines walked elsewhere (each line ending with a newline, in the order its writer
    /// wrote them) to every subscriber, as one walk, on a relay (`init(relayingRun:options:)`). A line that
    /// is not a progress line of this format is passed on but not kept for joining readers; check lines from
    /// outside the program first (`ProgressWireRecord(line:)`).
    ///
    /// - Precondition: the stream is a relay (a stream that walks a tree takes no lines from outside).
    public func relay(_ lines: [UInt8]) {
        precondition(publisher == nil, "ProgressEventStream.relay(_:) is for a stream made with init(relayingRun:)")
        core.takeWalk(lines)
    }

    /// Starts walking: a walk at once, then one every `Options.publisher.interval` (unless its
    /// `publishesOnTimer` is `false`), and the keep-alives (a relay: the keep-alives only). Calling it again
    /// does nothing.
    public func start() {
        publisher?.start()
        let seconds = max(options.keepAliveInterval.secondsValue / 3, 0.001)
        keepAliveTimer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ProgressTree.eventStream"))
            let core = self.core
            let interval = options.keepAliveInterval
            source.setEventHandler { core.keepAlive(interval: interval) }
            source.schedule(deadline: .now() + seconds, repeating: seconds, leeway: .milliseconds(50))
            source.resume()
            timer = source
        }
    }

    /// Walks the tree now and hands the lines that changed to every subscriber (what the timer does).
    public func publishChanges() {
        publisher?.publishChanges()
    }

    /// Sends a `: keep-alive` to every subscriber that had nothing for `Options.keepAliveInterval` (what the
    /// keep-alive timer does).
    package func sendKeepAlives() {
        core.keepAlive(interval: options.keepAliveInterval)
    }

    /// Ends the stream: one last walk (the root's final line, with the last line of every node named, when
    /// the root is final), then each subscription ends once its transport took what it was given; a
    /// subscription made later gets the state then, and ends. Calling it again does nothing more.
    public func finish() {
        keepAliveTimer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        publisher?.finish()
        core.finish()
    }

    /// A new subscriber: its chunks are the event stream of one reader, from the `retry` field, the `run`
    /// event and the snapshot on. `lastEventID` is the request's `Last-Event-ID` header, if any (a number
    /// this stream did not write counts as none).
    public func subscribe(lastEventID: String? = nil) -> Subscription {
        let joinedWith = lastEventID.flatMap { UInt64($0.trimmingSpaces) }
        return Subscription(core: core, id: core.subscribe(lastEventID: joinedWith))
    }

    /// Applies one command line (`{"v":1,"command":"cancel","id":3}`, the body of `POST /commands`;
    /// a newline at its end is allowed) to the node it names, on this thread: its handlers run here.
    public func applyCommand(_ body: some Collection<UInt8>) -> CommandOutcome {
        guard body.count <= ProgressPublisher.maximumCommandLength else { return .oversized }
        var line = Array(body)
        if line.last == 0x0A { line.removeLast() }
        if line.last == 0x0D { line.removeLast() }
        if let (command, id) = ProgressWireCommand.parse(line) {
            guard let publisher else { return .ignored }
            publisher.apply(command, toNodeWithID: id)
            return .applied
        }
        guard let members = try? WireJSON.object(line),
            case .number(_, let version?)? = members["v"], version == Int64(ProgressWireRecord.version),
            case .string(let name)? = members["command"], ProgressWireCommand(rawValue: name) == nil
        else { return .malformed }
        return .ignored
    }

    /// How many subscriptions are open.
    public var subscriberCount: Int {
        core.state.withLock { $0.subscribers.count }
    }

    /// What the stream did for its subscribers so far.
    public var diagnostics: Diagnostics {
        core.state.withLock { $0.diagnostics }
    }

    /// The number of the last walk that wrote lines (the `id` of its events).
    package var lastEventID: UInt64 {
        core.state.withLock { $0.lastWalk }
    }

    /// One reader's event stream, as chunks of bytes to write to its connection in order: the `retry`
    /// field, the `run` event and the snapshot, `synced`, then each walk's events and the keep-alives. The
    /// sequence ends when the subscription is cancelled, or after the stream finished; cancelling the task
    /// iterating it cancels it, and so does its release.
    ///
    /// Thread safety: a subscription may be iterated by one task at a time; `cancel()` may be called from
    /// any thread.
    public final class Subscription: AsyncSequence, Sendable {
        /// A chunk of the event stream's bytes (UTF-8).
        public typealias Element = [UInt8]
        /// The sequence never throws: it ends.
        public typealias Failure = Never

        private let core: EventStreamCore
        private let id: Int

        fileprivate init(core: EventStreamCore, id: Int) {
            self.core = core
            self.id = id
        }

        deinit {
            core.cancel(id)
        }

        /// Ends the subscription: the next chunk asked for is the end. Calling it again does nothing.
        public func cancel() {
            core.cancel(id)
        }

        /// The next chunk, when there is one: at once while chunks are queued, else after the next walk
        /// or keep-alive; `nil` once the subscription ended.
        public func next() async -> [UInt8]? {
            await core.next(id)
        }

        /// An iterator over the chunks (see `next()`).
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(subscription: self)
        }

        /// The iterator of a subscription's chunks.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let subscription: Subscription

            /// The next chunk; `nil` once the subscription ended.
            public mutating func next() async -> [UInt8]? {
                await subscription.next()
            }
        }
    }
}

/// The stream's state and the calls on it that subscriptions, the publisher's sink and the keep-alive
/// timer share (a class of its own, so that the publisher's sink can hold it before the stream exists).
/// Every call takes the lock for its own step and resumes transports outside it.
final class EventStreamCore: Sendable {
    let state: Lock<EventStreamState>

    init(_ state: consuming EventStreamState) {
        self.state = Lock(state)
    }

    /// The publisher's sink: one walk's lines (under the publisher's lock).
    func takeWalk(_ bytes: [UInt8]) {
        wake(state.withLock { $0.takeWalk(bytes) })
    }

    func subscribe(lastEventID: UInt64?) -> Int {
        state.withLock { $0.subscribe(lastEventID: lastEventID) }
    }

    func cancel(_ id: Int) {
        if let wakeup = state.withLock({ $0.cancel(id) }) { wake([wakeup]) }
    }

    func finish() {
        wake(state.withLock { $0.finish() })
    }

    func keepAlive(interval: Duration) {
        let now = ContinuousClock.now
        wake(state.withLock { $0.keepAlive(idleSince: now - interval, now: now) })
    }

    /// The next chunk for subscriber `id`, waiting for one if none is ready; `nil`: the end.
    func next(_ id: Int) async -> [UInt8]? {
        switch state.withLock({ $0.pull(id) }) {
        case .chunk(let chunk): return chunk
        case .end: return nil
        case .wait: break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<[UInt8]?, Never>) in
                switch state.withLock({ $0.pull(id, waiter: waiter) }) {
                case .chunk(let chunk): waiter.resume(returning: chunk)
                case .end: waiter.resume(returning: nil)
                case .wait: break  // kept: a walk, a keep-alive, `finish()` or `cancel` resumes it
                }
            }
        } onCancel: {
            cancel(id)
        }
    }

    private func wake(_ wakeups: [EventStreamState.Wakeup]) {
        for (waiter, chunk) in wakeups { waiter.resume(returning: chunk) }
    }
}

extension String {
    /// The string without spaces and tabs at either end (a header's value).
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
