import Foundation
import ProgressTree
import Synchronization

/// A `Foundation.Progress` adopted as a weighted child, and the node that mirrors it.
///
/// Progress → node (`sample()`: on the sampler's queue, or on the adopting thread before the sampler
/// knows the mirror): counts, the share of the Progress's own children (`ChildrenShareNode`), cancelled and
/// paused states, kind and file metadata. Node → Progress (the node's handlers, on the thread that cancels,
/// pauses or resumes the node or an ancestor): `cancel()`, `pause()`, `resume()`.
///
/// The mirror ends when the Progress finishes or is cancelled, or when the node finishes, is cancelled,
/// fails (the Progress is then cancelled: a failed node's work stops) or is held by nobody else. It then lets the
/// Progress go; the node's handlers stay, and do nothing.
final class AdoptedProgress: SampledMirror {
    private struct State {
        /// `nil` once the mirror ended.
        var progress: Progress?
        /// Held strongly, so that a cheap test tells when nobody else holds it (the tree let it go): a
        /// reference count of one, where a weak reference would cost a side-table load on every sample.
        var node: ProgressNode?
        var last: ProgressReading
        var metadata: CarriedMetadata
        var childrenShare = ChildrenShareNode()
        /// On Apple platforms, ends the key-value observations that schedule samples.
        var stopObserving: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>
    /// Whether a sample is scheduled and has not begun: key-value observation coalesces through it.
    let isSampleScheduled = Atomic<Bool>(false)

    /// The Progress objects being mirrored: one node each.
    private static let adopted = Mutex<Set<ObjectIdentifier>>([])

    private init(progress: Progress, node: ProgressNode, metadata: CarriedMetadata) {
        state = Mutex(
            State(
                progress: progress, node: node, last: ProgressReading(completed: 0, total: 0, fraction: 0),
                metadata: metadata))
    }

    /// A mirror of `progress` and its node, not attached yet, with the counts, states and metadata of
    /// `progress` as of now.
    ///
    /// - Precondition: `progress` is not mirrored already.
    static func adopt(_ progress: Progress) -> (mirror: AdoptedProgress, node: ProgressNode) {
        let isNew = adopted.withLock { $0.insert(ObjectIdentifier(progress)).inserted }
        precondition(
            isNew,
            "addChild(_:withPendingUnitCount:): this Foundation.Progress is already the child of a node; "
                + "a Progress is adopted once")
        let metadata = CarriedMetadata(progress)
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let mirror = AdoptedProgress(progress: progress, node: node, metadata: metadata)
        metadata.apply(to: node, changedFrom: nil)
        node.cancellationHandler = { mirror.forward { if !$0.isCancelled { $0.cancel() } } }
        node.pausingHandler = { mirror.forward { if !$0.isPaused { $0.pause() } } }
        node.resumingHandler = { mirror.forward { if $0.isPaused { $0.resume() } } }
        _ = mirror.sample(readingMetadata: false)
        return (mirror, node)
    }

    /// Observed on Apple platforms, sampled by the timer on Linux only.
    var needsTicksEverywhere: Bool { false }

    /// Reads the Progress and brings the node up to date; `false` once the mirror has ended.
    ///
    /// Never runs twice at once (the sampler's queue is serial, and the first sample runs before the
    /// sampler knows the mirror); never under a lock while it calls the node, whose handlers may call back.
    func sample() -> Bool {
        sample(readingMetadata: true)
    }

    private func sample(readingMetadata: Bool) -> Bool {
        if isSampleScheduled.load(ordering: .relaxed) {
            isSampleScheduled.store(false, ordering: .sequentiallyConsistent)
        }
        let current = state.withLock { state -> (Progress, ProgressNode, ProgressReading)? in
            guard let progress = state.progress, !isKnownUniquelyReferenced(&state.node), let node = state.node else {
                return nil
            }
            return (progress, node, state.last)
        }
        guard let (progress, node, last) = current else {
            end()
            return false
        }
        if node.isFailed || node.isCancelled {
            end(cancellingProgress: true)
            return false
        }
        // (The node finishes only by the counts written here, which end the mirror when they finish it.)
        let reading = ProgressReading(progress)
        guard reading != last else { return true }
        let countsMoved = reading.completed != last.completed || reading.total != last.total
        if countsMoved && readingMetadata {
            // `kind` and `userInfo` hold references: read only while the owner is busy with the counts
            // anyway, where what it carries (throughput, time remaining) changes with them.
            let metadata = CarriedMetadata(progress)
            let previous = state.withLock { state in
                defer { state.metadata = metadata }
                return state.metadata
            }
            if metadata != previous { metadata.apply(to: node, changedFrom: previous) }
        }
        state.withLock { $0.last = reading }
        if countsMoved { Self.setCounts(of: node, completed: reading.completed, total: reading.total) }
        if reading.childrenShare != last.childrenShare {
            var share = state.withLock { $0.childrenShare }
            share.update(reading.childrenShare, under: node)
            state.withLock { $0.childrenShare = share }
        }
        if reading.isPaused != last.isPaused {
            if reading.isPaused { node.pause() } else { node.resume() }
        }
        if reading.isCancelled { node.cancel() }
        if reading.isCancelled || reading.isFinished {
            end()
            return false
        }
        return true
    }

    /// Sets the node's counts without passing through a finished state they do not have.
    static func setCounts(of node: ProgressNode, completed: Int64, total: Int64) {
        ProgressReading.writeCounts(
            completed: completed, total: total, over: (node.completedUnitCount, node.totalUnitCount),
            setCompleted: { node.completedUnitCount = $0 }, setTotal: { node.totalUnitCount = $0 })
    }

    /// Calls `body` with the Progress, unless the mirror has ended. Outside the mirror's lock:
    /// `cancel()` and its kin run the Progress's handlers.
    func forward(_ body: (Progress) -> Void) {
        guard let progress = state.withLock({ $0.progress }) else { return }
        body(progress)
    }

    /// Whether a running mirror follows `progress`.
    static func isAdopted(_ progress: Progress) -> Bool {
        adopted.withLock { $0.contains(ObjectIdentifier(progress)) }
    }

    /// Whether the mirror still runs.
    var isRunning: Bool { state.withLock { $0.progress != nil } }

    /// Keeps what ends the observations that schedule samples (Apple platforms), called when it ends.
    func keep(stopObserving: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state in
            guard state.progress != nil else { return true }
            state.stopObserving = stopObserving
            return false
        }
        if ended { stopObserving() }
    }

    /// Lets the Progress go (cancelling it first if asked); later calls do nothing.
    func end(cancellingProgress: Bool = false) {
        let (progress, stopObserving) = state.withLock { state in
            defer {
                state.progress = nil
                state.stopObserving = nil
            }
            return (state.progress, state.stopObserving)
        }
        let node = state.withLock { state in
            defer { state.node = nil }
            return state.node
        }
        withExtendedLifetime(node) {}  // released here, outside the lock: its deinit may run user code
        guard let progress else { return }
        stopObserving?()
        _ = Self.adopted.withLock { $0.remove(ObjectIdentifier(progress)) }
        if cancellingProgress && !progress.isCancelled { progress.cancel() }
    }
}
