import Dispatch
import ProgressTree
import Synchronization
import ProgressTreePlatform

/// One thread for the whole process that waits on the descriptors of every stream — mounts' progress
/// and output, publishers' command channels, listeners — and calls their owners when there is something
/// to read (epoll on Linux, `poll` elsewhere). A thousand mounts cost one thread and one read buffer, not
/// a thousand of each.
///
/// Invariants:
/// - The `readable` and `stopped` closures of a watch, and the closures given to `perform`, run on the
///   reactor's thread only, one at a time: what only they touch needs no more than an uncontended lock.
/// - After a watch's `stopped` ran, its `readable` never runs again; `stopped` runs exactly once, after
///   the descriptor left the poller (so its owner may close it there, and a new descriptor of the same
///   number is a new watch).
/// - The thread lives as long as the process (it is never asked to end): programs started from it
///   (`performAndWait`) get their parent-death signal when the process ends, not when a thread does.
final class StreamReactor: Sendable {
    /// What a watch's owner says after reading.
    enum Next {
        case keepWatching
        case stopWatching
    }

    /// A watched descriptor, as its owner holds it (to stop watching it).
    struct Watch: Sendable, Equatable {
        let identifier: UInt64
        let descriptor: Int32
    }

    /// The reactor of the process, started by its first use.
    static let shared = StreamReactor()

    private struct Entry: Sendable {
        let watch: Watch
        /// Reads what came (into the reactor's buffer) and says whether to go on.
        let readable: @Sendable (UnsafeMutableRawBufferPointer) -> Next
        let stopped: @Sendable () -> Void
    }

    private enum Operation: Sendable {
        case add(Entry)
        case remove(Watch)
        case run(@Sendable () -> Void)
    }

    private struct Pending {
        var operations: [Operation] = []
        /// Whether a byte is in the wake pipe that the loop has not read yet.
        var isWoken = false
        var nextIdentifier: UInt64 = 1
    }

    private let pending = Lock(Pending())
    /// The interval the process asks the publishers it mounts for, in milliseconds (0: none), as
    /// `ReadPacing` decided from this thread's reads a second; read by every mount at each read.
    private let pacing = Atomic<Int>(0)
    /// A value tests put in place of `pacing`'s (-1: none).
    private let pacingOverride = Atomic<Int>(-1)
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let thread = Atomic<UInt>(0)

    private init() {
        // Without a pipe there is no reactor and no stream: nothing can work.
        guard let (read, write) = try? FileDescriptor.pipe() else {
            fatalError("ProgressTreeStreaming: no pipe for the reactor")
        }
        FileDescriptor.setNonBlocking(read)
        FileDescriptor.setNonBlocking(write)
        wakeRead = read
        wakeWrite = write
        DetachedThread.start { [self] in run() }
    }

    /// Whether the caller runs on the reactor's thread.
    var isCurrent: Bool {
        thread.load(ordering: .acquiring) == CurrentThread.identifier
    }

    /// Watches `descriptor`: `readable` is called (on the reactor's thread) each time it can be read
    /// without waiting, or has hung up, until it returns `.stopWatching` or `stop(_:)` is called; then
    /// `stopped` is called once.
    func watch(
        _ descriptor: Int32, readable: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Next,
        stopped: @escaping @Sendable () -> Void = {}
    ) -> Watch {
        let watch = pending.withLock { pending in
            defer { pending.nextIdentifier += 1 }
            return Watch(identifier: pending.nextIdentifier, descriptor: descriptor)
        }
        enqueue(.add(Entry(watch: watch, readable: readable, stopped: stopped)))
        return watch
    }

    /// Stops watching (from any thread): `stopped` is called on the reactor's thread, unless the watch
    /// had stopped already.
    func stop(_ watch: Watch) {
        enqueue(.remove(watch))
    }

    /// The interval a mount asks its publisher for, in milliseconds (0: none; see `ReadPacing`).
    var requestedIntervalMilliseconds: Int {
        let forced = pacingOverride.load(ordering: .relaxed)
        return forced >= 0 ? forced : pacing.load(ordering: .relaxed)
    }

    /// Makes `requestedIntervalMilliseconds` answer `milliseconds` whatever the load (`nil`: the load
    /// decides again). For tests.
    package func overrideRequestedInterval(milliseconds: Int?) {
        pacingOverride.store(milliseconds ?? -1, ordering: .relaxed)
    }

    /// Runs `body` on the reactor's thread, soon.
    func perform(_ body: @escaping @Sendable () -> Void) {
        enqueue(.run(body))
    }

    /// Runs `body` on the reactor's thread and returns what it returned (at once, on that thread).
    func performAndWait<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if isCurrent { return try body() }
        let outcome = Lock<Swift.Result<Result, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        perform {
            let result: Swift.Result<Result, Failure>
            do throws(Failure) { result = .success(try body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    private func enqueue(_ operation: Operation) {
        let wakes = pending.withLock { pending in
            pending.operations.append(operation)
            defer { pending.isWoken = true }
            return !pending.isWoken
        }
        if wakes { _ = FileDescriptor.sendAll(wakeWrite, [1]) }
    }

    // MARK: The loop

    /// The reactor's thread: waits, reads, and applies what other threads asked for, forever.
    private func run() {
        thread.store(CurrentThread.identifier, ordering: .releasing)
        CurrentThread.setName("PT.streams")
        let poller = Polling.makePoller()
        var entries: [Int32: Entry] = [:]
        // Descriptors epoll refuses (regular files): always readable, read at every turn.
        var alwaysReady: [Int32] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        var readyBuffer = [Int32](repeating: 0, count: 256)
        if let poller { _ = Polling.pollerAdd(poller, wakeRead) }

        func remove(_ descriptor: Int32) -> Entry? {
            guard let entry = entries.removeValue(forKey: descriptor) else { return nil }
            if let index = alwaysReady.firstIndex(of: descriptor) {
                alwaysReady.remove(at: index)
            } else if let poller {
                Polling.pollerRemove(poller, descriptor)
            }
            return entry
        }

        // Under load (more than `busyEvents` descriptors ready in the last `window`), the loop pauses
        // `pause` after each turn so that the next one finds many descriptors ready at once: a thousand
        // publishers cost 200 turns a second instead of one per line, and their lines at most `pause`
        // more. (Counted in descriptors, not turns: the pauses lower the turns, not the load.)
        let window = Duration.milliseconds(100)
        let busyEvents = 100
        let pause: Int32 = 10
        var windowStart = ContinuousClock.now
        var events = 0
        var isBusy = false
        // The reads a second, counted over `pacingWindow`, set the interval the process's mounts ask their
        // publishers for (`ReadPacing`).
        let pacingWindow = Duration.seconds(2)
        var pacer = ReadPacing()
        var pacingStart = windowStart
        var pacingReads = 0
        var addedDuringWindow = false
        while true {
            let timeout: Int32 = alwaysReady.isEmpty ? -1 : 0
            var ready: ArraySlice<Int32>
            if let poller {
                let count = Polling.pollerWait(poller, into: &readyBuffer, milliseconds: timeout)
                ready = readyBuffer[0..<count]
            } else {
                let watched = entries.keys.filter { !alwaysReady.contains($0) }
                ready = ArraySlice(Polling.pollReadable([wakeRead] + watched, milliseconds: timeout))
            }
            // Descriptors the poller said were ready (files, read at every turn, are not counted).
            pacingReads += ready.count
            if !alwaysReady.isEmpty { ready += alwaysReady }
            // Descriptors that stopped during this batch: a later event of theirs in it is stale.
            var stoppedNow: Set<Int32> = []
            var woken = false
            for descriptor in ready {
                if descriptor == wakeRead {
                    woken = true
                    continue
                }
                guard !stoppedNow.contains(descriptor), let entry = entries[descriptor] else { continue }
                if entry.readable(buffer) == .stopWatching {
                    stoppedNow.insert(descriptor)
                    _ = remove(descriptor)
                    entry.stopped()
                }
            }
            let now = ContinuousClock.now
            events += ready.count
            if now - windowStart >= window {
                isBusy = events > busyEvents
                windowStart = now
                events = 0
            }
            if now - pacingStart >= pacingWindow {
                let seconds = (now - pacingStart).secondsValue
                if pacer.update(readsPerSecond: Double(pacingReads) / seconds, streamsAdded: addedDuringWindow) {
                    pacing.store(pacer.milliseconds, ordering: .relaxed)
                }
                pacingStart = now
                pacingReads = 0
                addedDuringWindow = false
            }
            if isBusy && !woken { Polling.sleep(milliseconds: pause) }
            guard woken else { continue }
            var drain = [UInt8](repeating: 0, count: 64)
            while FileDescriptor.read(wakeRead, &drain) > 0 {}
            let operations = pending.withLock { pending in
                pending.isWoken = false
                defer { pending.operations = [] }
                return pending.operations
            }
            for operation in operations {
                switch operation {
                case .add(let entry):
                    addedDuringWindow = true
                    let descriptor = entry.watch.descriptor
                    entries[descriptor] = entry
                    if let poller {
                        let error = Polling.pollerAdd(poller, descriptor)
                        if error != 0 { alwaysReady.append(descriptor) }
                    }
                case .remove(let watch):
                    guard entries[watch.descriptor]?.watch == watch, let entry = remove(watch.descriptor) else {
                        continue
                    }
                    entry.stopped()
                case .run(let body):
                    body()
                }
            }
        }
    }
}
