import Foundation
import ProgressTree

extension ProgressNode {
    /// Adopts a `Foundation.Progress` — a `URLSessionTask`'s `progress`, a library's, a
    /// `Foundation.ProgressReporting` object's — as a child standing for `pendingUnitCount` of this node's
    /// units, mirrored by the node this returns.
    ///
    /// The mirror node follows the Progress: its counts (`completedUnitCount`, `totalUnitCount`, so
    /// indeterminate and finished too), its fraction including the partial work of its own children (shown
    /// as one child of the mirror node, "Subtasks"), its cancelled and paused states, and its kind and file
    /// metadata (`fileOperationKind`, `fileURL`, file counts, `throughput`, `estimatedTimeRemaining`: read
    /// when its counts move). Cancelling, pausing or resuming this node or an ancestor calls `cancel()`,
    /// `pause()` or `resume()` on the Progress, before that call returns: cancelling the tree cancels a
    /// `URLSessionTask` through its progress. When the Progress finishes or is cancelled, or the mirror
    /// node finishes, is cancelled, fails (the Progress is then cancelled) or is released, the mirror ends
    /// and lets the Progress go.
    ///
    /// On Linux, swift-corelibs-foundation's `Progress` cannot be observed: every adopted Progress is
    /// sampled by one shared timer, 20 times a second, so a change reaches the node within 50 ms; the timer
    /// runs only while something is adopted. On Apple platforms, key-value observation tells the mirror of
    /// each change. See Docs/Migrating.md, "Progress from Foundation APIs".
    ///
    /// The mirror node is yours to read, label (`kind`, `fileURL`, `localizedDescription`) and fail; its
    /// counts and its cancellation, pausing and resuming handlers belong to the mirror. A Progress that
    /// follows a node (`foundationProgress`) is not mirrored: its node itself is added, and returned.
    ///
    /// - Precondition: `pendingUnitCount` is not negative; `progress` is not adopted already.
    @discardableResult
    public func addChild(_ progress: Progress, withPendingUnitCount pendingUnitCount: Int64) -> ProgressNode {
        precondition(
            pendingUnitCount >= 0,
            "addChild(_:withPendingUnitCount:): the pending unit count must not be negative (got \(pendingUnitCount))")
        if let following = progress as? FollowingProgress {
            addChild(following.node, withPendingUnitCount: pendingUnitCount)
            return following.node
        }
        return adoptMirrored(progress, withPendingUnitCount: pendingUnitCount).node
    }

    /// Adopts `progress` as a mirrored child (see `addChild(_:withPendingUnitCount:)`); its mirror.
    func adoptMirrored(
        _ progress: Progress, withPendingUnitCount pendingUnitCount: Int64
    ) -> (mirror: AdoptedProgress, node: ProgressNode) {
        let (mirror, node) = AdoptedProgress.adopt(progress)
        addChild(node, withPendingUnitCount: pendingUnitCount)
        // Attaching may have cancelled or paused it (this node was): one more sample settles that first.
        guard mirror.isRunning, mirror.sample() else { return (mirror, node) }
        ProgressSampler.shared.add(mirror)
        #if canImport(ObjectiveC)
        mirror.observeChanges(of: progress)
        #endif
        return (mirror, node)
    }

    /// Reads every adopted Foundation `Progress` and `URLSessionTask` now and returns once their nodes show
    /// what they hold: for when you know a Progress changed and the tree must show it before you go on — a
    /// `URLSessionDelegate` told you a transfer completed, and you are about to fail the parent (which
    /// would cancel a child that has not been seen to finish). Otherwise a change shows within 50 ms on
    /// Linux (and for a task everywhere), and as soon as key-value observation reports it on Apple
    /// platforms. (A task is seen completed only once its state is: on Linux, after its completion handler
    /// and its delegate's `didCompleteWithError` have returned.)
    ///
    /// Writes to a Progress made on this thread before the call are read by it. Do not call it while
    /// holding a lock that code run by the nodes' handlers or deinitializers takes.
    public static func sampleAdoptedFoundationProgress() {
        ProgressSampler.shared.sampleNow()
    }
}
