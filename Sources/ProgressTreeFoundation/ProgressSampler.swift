import Dispatch
import Foundation
import Synchronization

/// Where adopted Progress objects and `URLSessionTask`s are read: one serial queue, and one timer for all
/// of them (on Apple platforms only while a task is adopted).
///
/// **Why a timer.** swift-corelibs-foundation's `Progress` has no key-value observation and no change
/// hook, so on Linux the mirrors are sampled: every `interval` (1/20 s), one `DispatchSourceTimer` reads
/// each adopted Progress and writes what changed into its node. A change therefore reaches the node within
/// 50 ms, and its observers within one frame of the terminal renderer (1/15 s). An idle Progress costs one
/// read of five values and a comparison per tick (Docs/Performance.md, "Adopted Foundation.Progress
/// objects", has the measurements). The timer runs only while something is adopted. On Apple platforms, key-value observation
/// schedules a sample on the same queue when a Progress changes, and the timer starts only for an adopted
/// `URLSessionTask` (`AdoptedTask`), which has no change notification on any platform that this library can
/// rely on; it then samples every mirror until none is left.
///
/// **Why reading another thread's Progress is sound enough.** That `Progress` has no lock: its owner (a
/// `URLSessionTask` updates its progress on the task's own queue) writes it with no synchronization, so
/// the sampler's reads race with those writes. What is read on every tick is scalars stored inline in
/// the object (two `Int64` counts, the fraction's two rationals, two `Bool`s): on the 64-bit platforms
/// Swift supports, an aligned load of one returns the value before or after a write, never a torn one, so
/// a sample is at worst one update behind (or mixes two updates for one tick), and the next tick reads the
/// rest. `kind` and `userInfo` hold references, where a read racing with a write could see freed storage:
/// they are read only when the counts moved (an owner sets throughput and time remaining along with its
/// counts, on its own thread, and `URLSession` never sets them at all), and an owner that changes them
/// from another thread while the counts move is as unsafe as any other reader of that Progress on another
/// thread. The mirror writes nothing into the Progress but `cancel()`, `pause()` and `resume()`, called by
/// the node's handlers. None of these accesses is seen by ThreadSanitizer: Foundation is not built with it.
final class ProgressSampler: Sendable {
    /// The sampler of every adopted Progress.
    static let shared = ProgressSampler()

    /// How often the timer samples: once per 50 ms, so that a change and its delivery to observers fit
    /// in one frame of a display drawing 15 frames a second (66.7 ms).
    static let interval: Duration = .milliseconds(50)

    /// The one queue every sample runs on.
    let queue = DispatchQueue(label: "ProgressTreeFoundation.sampler")
    private static let queueKey = DispatchSpecificKey<Void>()

    init() {
        queue.setSpecific(key: Self.queueKey, value: ())
    }

    private struct State {
        var mirrors: [any SampledMirror] = []
        var timer: (any DispatchSourceTimer)?
    }

    private let state = Mutex(State())

    /// Samples `mirror` on every tick until it ends. On Linux the timer runs while anything is adopted. On
    /// Apple platforms an adopted Progress schedules its samples (`schedule(_:)`) and is sampled by ticks
    /// only when asked (`sampleNow()`) or while a task is adopted too; an adopted task starts the timer.
    func add(_ mirror: any SampledMirror) {
        state.withLock { state in
            state.mirrors.append(mirror)
            #if canImport(ObjectiveC)
            guard mirror.needsTicksEverywhere else { return }
            #endif
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let nanoseconds = Int(Self.interval.components.attoseconds / 1_000_000_000)
            timer.schedule(
                deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                leeway: .nanoseconds(nanoseconds / 10))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            state.timer = timer
        }
    }

    /// Samples `mirror` soon, once however often this is called before it runs (Apple platforms, from
    /// key-value observation).
    func schedule(_ mirror: AdoptedProgress) {
        guard !mirror.isSampleScheduled.exchange(true, ordering: .sequentiallyConsistent) else { return }
        queue.async { [self] in
            if !mirror.sample() { state.withLock { $0.mirrors.removeAll { $0 === mirror } } }
        }
    }

    /// Samples `mirror` now, on the sampler's queue, and returns when it is done: writes made to its
    /// Progress on this thread before the call are read. (From code the sampler itself runs — a handler
    /// called by a sample — it samples in place.)
    func sampleNow(_ mirror: any SampledMirror) {
        if DispatchQueue.getSpecific(key: Self.queueKey) != nil {
            _ = mirror.sample()
        } else {
            queue.sync { _ = mirror.sample() }
        }
    }

    /// One tick: samples every mirror, forgets those that ended, and stops the timer when none is left.
    private func tick() {
        let mirrors = state.withLock { $0.mirrors }
        var ended: Set<ObjectIdentifier> = []
        for mirror in mirrors where !mirror.sample() {
            ended.insert(ObjectIdentifier(mirror))
        }
        guard !ended.isEmpty else { return }
        let stopped = state.withLock { state -> (any DispatchSourceTimer)? in
            state.mirrors.removeAll { ended.contains(ObjectIdentifier($0)) }
            guard state.mirrors.isEmpty else { return nil }
            defer { state.timer = nil }
            return state.timer
        }
        stopped?.cancel()
    }

    /// Runs one tick now, on the sampler's queue, and returns when it is done: writes made to the adopted
    /// Progress objects on this thread before the call are read by it (the queue orders them), with no
    /// wait for the timer. (`ProgressNode.sampleAdoptedFoundationProgress()`, and the tests.)
    func sampleNow() {
        if DispatchQueue.getSpecific(key: Self.queueKey) != nil { tick() } else { queue.sync { tick() } }
    }

    // MARK: Test hooks

    /// Whether a running mirror follows `progress`.
    func isMirroring(_ progress: Progress) -> Bool {
        AdoptedProgress.isAdopted(progress)
    }

    /// How many mirrors the timer samples, and whether it runs.
    var status: (mirrors: Int, isTimerRunning: Bool) {
        state.withLock { ($0.mirrors.count, $0.timer != nil) }
    }
}
