import ProgressTree

/// An event stream's state between walks (guarded by `ProgressEventStream`'s lock): the tree a joining
/// reader needs (`EventStreamTree`), the walks' numbers, and each subscriber's queue of chunks.
///
/// **Bounded queues.** A subscriber's transport takes chunks when it can (`next`). A walk's chunk is handed
/// at once to a subscriber waiting for one, queued for one that is busy, and, when the queue would pass
/// `maximumBufferedBytes`, not queued at all: the queue is dropped and the subscriber is **resynced**, its
/// next chunk a snapshot of the tree as it is then (every line is a whole snapshot of its node, so nothing
/// is lost but the steps between). A subscriber never holds more than `maximumBufferedBytes` of queued
/// walks; a snapshot is made only when its transport asks for the next chunk.
struct EventStreamState {
    struct Subscriber {
        var chunks: [[UInt8]] = []
        var bufferedBytes = 0
        /// Whether the next chunk is a snapshot: at first, and after falling behind.
        var needsSnapshot = true
        /// The `Last-Event-ID` it joined with, for its first snapshot.
        var lastEventID: UInt64?
        var hasRetry = false
        /// The transport waiting for the next chunk.
        var waiter: CheckedContinuation<[UInt8]?, Never>?
        /// When the transport was last handed a chunk (for keep-alives).
        var lastDelivery: ContinuousClock.Instant
    }

    /// A chunk for a transport that was waiting for one (`nil`: the end), handed over outside the lock.
    typealias Wakeup = (waiter: CheckedContinuation<[UInt8]?, Never>, chunk: [UInt8]?)

    /// What a transport asking for the next chunk gets.
    enum Pull {
        case chunk([UInt8])
        case end
        case wait
    }

    /// The most walk numbers given to snapshots remembered (see `snapshotWalks`).
    static let rememberedSnapshots = 1024

    var tree = EventStreamTree()
    let maximumBufferedBytes: Int
    /// The run this stream serves: named to each subscriber first (`ServerSentEvents.appendRun`).
    let runID: String
    /// The number before the first walk's: walks are numbered from `firstWalk + 1`.
    let firstWalk: UInt64
    /// The number of the last walk that wrote lines.
    private(set) var lastWalk: UInt64
    private(set) var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriber = 1
    /// Whether the stream ended for its subscribers (`ProgressEventStream.finish()`).
    private(set) var isFinished = false
    private(set) var diagnostics = ProgressEventStream.Diagnostics()
    /// The walks whose number a snapshot's events carried: a reader cut off inside a snapshot reconnects
    /// with that number without having every line before it, so such a number counts as none.
    private var snapshotWalks: Set<UInt64> = []
    private var snapshotWalkOrder: [UInt64] = []
    /// Numbers at or below this one may have been given to a snapshot that is forgotten: they count as none.
    private var forgottenSnapshots: UInt64

    init(firstWalk: UInt64, runID: String, maximumBufferedBytes: Int) {
        self.firstWalk = firstWalk
        self.runID = runID
        self.lastWalk = firstWalk
        self.forgottenSnapshots = firstWalk
        self.maximumBufferedBytes = maximumBufferedBytes
    }

    // MARK: Walks

    /// Takes the lines of one walk (each ending with a newline): numbers the walk, keeps what a joining
    /// reader needs, and hands the walk's events to each subscriber. Returns the transports to wake.
    mutating func takeWalk(_ bytes: [UInt8]) -> [Wakeup] {
        lastWalk += 1
        let walk = lastWalk
        var chunk: [UInt8] = []
        chunk.reserveCapacity(bytes.count + 32)
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            guard !line.isEmpty else { continue }
            if let record = try? ProgressWireRecord(line: line) {
                tree.apply(record, line: line, walk: walk)
            }
            ServerSentEvents.appendEvent(walk: walk, line: line, to: &chunk)
        }
        guard !chunk.isEmpty else { return [] }
        var wakeups: [Wakeup] = []
        for id in subscribers.keys {
            guard var subscriber = subscribers[id], !subscriber.needsSnapshot else { continue }
            if let waiter = subscriber.waiter {
                subscriber.waiter = nil
                subscriber.lastDelivery = .now
                wakeups.append((waiter, chunk))
            } else if subscriber.bufferedBytes + chunk.count > maximumBufferedBytes {
                subscriber.chunks = []
                subscriber.bufferedBytes = 0
                subscriber.needsSnapshot = true
                diagnostics.resyncs += 1
            } else {
                subscriber.chunks.append(chunk)
                subscriber.bufferedBytes += chunk.count
            }
            subscribers[id] = subscriber
        }
        return wakeups
    }

    // MARK: Subscribers

    /// A new subscriber, joining with `lastEventID` (the `Last-Event-ID` header), if any.
    mutating func subscribe(lastEventID: UInt64?) -> Int {
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = Subscriber(lastEventID: lastEventID, lastDelivery: .now)
        diagnostics.subscriptions += 1
        return id
    }

    /// The next chunk for subscriber `id`'s transport, or the end, or `wait` (then `waiter` is kept and
    /// woken by a later walk, a keep-alive, `finish()` or `cancel`).
    mutating func pull(_ id: Int, waiter: CheckedContinuation<[UInt8]?, Never>? = nil) -> Pull {
        guard var subscriber = subscribers[id] else { return .end }
        defer { subscribers[id] = subscriber }
        if subscriber.needsSnapshot {
            subscriber.needsSnapshot = false
            subscriber.lastDelivery = .now
            let joinedWith = subscriber.lastEventID
            subscriber.lastEventID = nil
            var chunk: [UInt8] = []
            if !subscriber.hasRetry {
                chunk = ServerSentEvents.retry
                ServerSentEvents.appendRun(runID, to: &chunk)
                subscriber.hasRetry = true
            }
            appendSnapshot(since: joinedWith, to: &chunk)
            return .chunk(chunk)
        }
        if !subscriber.chunks.isEmpty {
            let chunk = subscriber.chunks.removeFirst()
            subscriber.bufferedBytes -= chunk.count
            subscriber.lastDelivery = .now
            return .chunk(chunk)
        }
        if isFinished { return .end }
        if let waiter { subscriber.waiter = waiter }
        return .wait
    }

    /// Removes subscriber `id`; the transport to wake with the end, if it was waiting.
    mutating func cancel(_ id: Int) -> Wakeup? {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return nil }
        return subscriber.waiter.map { ($0, nil) }
    }

    /// Ends the stream for its subscribers: each gets what it was given already, then the end.
    mutating func finish() -> [Wakeup] {
        isFinished = true
        return takeWaiters().map { ($0, nil) }
    }

    /// Hands `ServerSentEvents.keepAlive` to every transport that has been waiting since `idleSince`.
    mutating func keepAlive(idleSince: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [Wakeup] {
        var wakeups: [Wakeup] = []
        for id in subscribers.keys {
            guard var subscriber = subscribers[id], let waiter = subscriber.waiter,
                subscriber.lastDelivery <= idleSince
            else { continue }
            subscriber.waiter = nil
            subscriber.lastDelivery = now
            subscribers[id] = subscriber
            wakeups.append((waiter, ServerSentEvents.keepAlive))
        }
        return wakeups
    }

    private mutating func takeWaiters() -> [CheckedContinuation<[UInt8]?, Never>] {
        var waiters: [CheckedContinuation<[UInt8]?, Never>] = []
        for id in subscribers.keys {
            if let waiter = subscribers[id]?.waiter {
                waiters.append(waiter)
                subscribers[id]?.waiter = nil
            }
        }
        return waiters
    }

    // MARK: Snapshots

    /// Appends what a reader joining now gets (`Docs/WireFormat.md`, "Joining late", "Reconnecting"):
    /// the tree's lines, all with the last walk's number, then `synced`. With the number of a walk this
    /// stream wrote (and no snapshot carried), the final lines written before it are left out: the reader
    /// has them.
    private mutating func appendSnapshot(since lastEventID: UInt64?, to chunk: inout [UInt8]) {
        let walk = lastWalk
        var omitting: UInt64?
        if let lastEventID, lastEventID > forgottenSnapshots, lastEventID <= walk,
            !snapshotWalks.contains(lastEventID)
        {
            omitting = lastEventID
        }
        let lines = tree.snapshot(omittingFinalLinesBefore: omitting)
        for line in lines { ServerSentEvents.appendEvent(walk: walk, line: line, to: &chunk) }
        ServerSentEvents.appendSynced(walk: walk, to: &chunk)
        diagnostics.snapshots += 1
        guard !lines.isEmpty, snapshotWalks.insert(walk).inserted else { return }
        snapshotWalkOrder.append(walk)
        if snapshotWalkOrder.count > Self.rememberedSnapshots {
            let forgotten = snapshotWalkOrder.removeFirst()
            snapshotWalks.remove(forgotten)
            forgottenSnapshots = max(forgottenSnapshots, forgotten)
        }
    }
}
