#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Failure: the third final outcome, next to finishing and being cancelled.
//
// Invariants kept here (and by the hooks in `Core/` that name this file):
// - `ControlFlags.failed` is set once, under the node's lock, only on a node that is neither cancelled,
//   failed, finished (counts) nor detached from a parent (it finished into it). In the same critical
//   section the node's link is detached. So a concurrent update that finishes the node either came first
//   (then `fail` does nothing) or finds the link detached and credits nothing: a failed node's pending
//   units never reach its parent.
// - The parent takes the failed child out of its sums and keeps the child's share at failure
//   (`pending × fraction`) in `ChildSums.failedUnits`, as one step for readers (`retire(_:crediting:
//   failedShare:)`), so a reader sees that share once: as the child's contribution before, as the frozen
//   share after; then it removes the child from its `ChildTable` and, in the same critical section,
//   records the child's wire-format line, and those of the nodes below it, in its `FailedChildren` (read
//   before, with no lock held: `departure()`).
// - Outcome counts are added to each ancestor under its own lock, one lock at a time, walking up while the
//   link read in that same critical section is attached. Every node is counted once: the flag that makes
//   a node cancelled or failed is set under its lock, by exactly one transition, and that transition counts it.
// - Everything is counted and marked before any handler runs; handlers run outside every lock.

extension ProgressNode {
    /// Whether this node failed (`fail(_:)`). Permanent once `true`; a failed node is never finished,
    /// cancelled or paused.
    ///
    /// - Complexity: O(1), one atomic load.
    public var isFailed: Bool { currentControlFlags.contains(.failed) }

    /// The error this node failed with, or `nil` while it has not failed.
    ///
    /// - Complexity: O(1): takes the node's lock once.
    public var failure: (any Error)? {
        state.withLock { $0.control.outcomes.failure }
    }

    /// How many of this node's descendants failed and how many were cancelled, and the first failure's
    /// description: enough for a summary such as "11 of 12 imported, 1 failed" without keeping the failed
    /// nodes. See `DescendantOutcomes` for what is counted.
    ///
    /// Observable (`observe(\.descendantOutcomes, …)`): an outcome below a node notifies its observers.
    ///
    /// - Complexity: O(1): takes the node's lock once.
    public var descendantOutcomes: DescendantOutcomes {
        state.withLock { $0.control.outcomes.descendants }
    }

    /// Ends this node's work as failed, with `error` as the reason.
    ///
    /// Finished, cancelled and failed are final outcomes: on a node that finished, was cancelled or already
    /// failed, `fail` does nothing (the first outcome stays). Otherwise:
    /// - the node is failed for good: `isFailed` is `true`, `failure` is `error`; it never becomes finished
    ///   or cancelled, and is no longer paused. Its counts stay as they were and may still change.
    /// - its share in its parent stays at the fraction it had when it failed, and is never credited as
    ///   done: the parent's `completedUnitCount` does not grow, and later changes to this node do not move
    ///   its ancestors (so a parent with a failed child does not finish on its own; its creator decides
    ///   whether to fail it too). The parent releases the node, as it releases a finished child.
    /// - the attached nodes below it are **cancelled** (not failed): their `cancellationHandler`s run and
    ///   the tasks linked to them are cancelled. A child attached to it later is cancelled as it attaches.
    /// - the work of the node itself stops: tasks linked to it are cancelled, and its `checkpoint()` and
    ///   `checkCancellation()` throw `CancellationError`. Its `cancellationHandler` does not run: it was not
    ///   cancelled.
    /// - every ancestor counts it in `descendantOutcomes` (and the nodes it cancelled); the failure does not
    ///   flow up otherwise: the ancestors keep running.
    ///
    /// Effects run on the calling thread, after everything is marked and outside every lock of the
    /// library: suspended checkpoints throw, then handlers and task cancellations run, parent before
    /// children. Observers of the node get the failed state as their last value; the `snapshots` sequence
    /// ends with it.
    ///
    /// - Parameter error: the reason, shown by descriptions and renderers as its `errorDescription` (for a
    ///   `LocalizedError`) or its `description`.
    /// - Complexity: O(attached nodes in the subtree + depth), iterative.
    public func fail(_ error: any Error) {
        // User code (the error's description) runs before any lock is taken.
        let description = Self.failureDescription(of: error)
        // Brings the children's cached sum up to date, so that the fraction taken under the lock below is
        // the node's fraction at failure: its counts as they are then, its children's as of just before.
        _ = refresh()
        var effects = ControlTransitionEffects()
        // Orderings: whether the node fails is decided under its lock by `link.detach()`, which a finishing
        // update (the only other way out of the tree) also goes through. The counts read here only choose
        // between "finished already" and "fails now", and the `attached` bit is a hint that sends an
        // update to that same check; neither publishes other memory, so both are relaxed. (The counts
        // themselves stay sequentially consistent where they are stored, for `pause()`: see
        // `ControlFlags.swift`.)
        let failed = state.withLock {
            state -> (parent: ProgressNode?, left: FailedShare, children: [ProgressNode])? in
            guard currentControlFlags.isDisjoint(with: [.cancelled, .failed]),
                state.link.kind != .detached,  // it finished into its parent: finished for good
                !FractionMath.isFinished(
                    completed: completedStorage.load(ordering: .relaxed),
                    total: totalStorage.load(ordering: .relaxed))
            else { return nil }
            _ = updateControlFlags(inserting: .failed, removing: .paused, under: state)
            state.control.outcomes.failure = error
            state.control.outcomes.failureDescription = description
            effects.endWork(of: &state.control)
            var parent: ProgressNode?
            var left: FailedShare = (0, 0)
            if state.link.detach() {
                // From here on updates no longer look at the parent, and no walk reaches it from here.
                flags.bitwiseAnd(~NodeFlags.attached, ordering: .relaxed)
                parent = parentUnderOwnLock(state, clearing: true)
                if let parent { joinDomain(of: UnownedNode(parent)) }  // it leaves through `retire`
                checkDetached(state, attachedFlagMayFollow: true)
                // Read after the parent pointer: `addChild` stores the pending count before the pointer (not
                // under this lock), so a parent found here comes with its pending count; with no parent
                // found, `addChild` lets the node go itself (`releaseChildThatFailedBeforeLinking`).
                let pending = parent == nil ? 0 : pendingInParent.load(ordering: .sequentiallyConsistent)
                left = keepShareAtFailure(pending: Double(pending), &state)
            }
            settleFreshChildren(&state)  // after marking it failed: see ProgressNode+FreshChildren.swift
            return (parent, left, state.children.entries.map(\.node))
        }
        guard let failed else { return }
        effects.changedNodes.append(self)

        let (cancelledBelow, _) = cancelSubtrees(
            failed.children, rootsFromAbove: true, byFailure: true, effects: &effects)
        if cancelledBelow > 0 {
            state.withLock {
                $0.control.outcomes.record(failed: 0, cancelled: cancelledBelow, byFailure: true, firstFailure: nil)
            }
        }
        if let parent = failed.parent {
            // Read before the parent's lock (it takes this node's): the lines a writer of the wire format
            // needs once this node is gone from the parent's children, its own and those it cancelled.
            let departure = self.departure()
            let emptied = parent.removeFailedChild(
                self, departure, left: failed.left, cancelledBelow: cancelledBelow, description: description)
            effects.changedNodes.append(parent)
            if emptied { parent.releaseFromHolderIfEmpty() }
        }
        effects.perform(waitersThrow: true)
    }

    /// Lets go of `child`, just linked to this node by `addChild`, if it failed before the link was complete:
    /// before `addChild` (a failed node added as a child), or while it ran, when the child's `fail` found no
    /// parent yet to leave. The child leaves as `fail` makes a failed child leave: its share at this moment
    /// is kept apart and nothing is credited, it leaves this node's children, and this node and its
    /// ancestors count it as failed. The nodes its failure cancelled are not counted here: they were
    /// cancelled before the child was attached (outcomes count in the ancestors of their moment). Decided
    /// under the child's lock by the `attached` bit, which `fail` clears under the same lock: exactly one
    /// of the two does it.
    func releaseChildThatFailedBeforeLinking(_ child: ProgressNode) {
        guard child.isFailed else { return }
        let failed = child.state.withLock { state -> (left: FailedShare, description: String?)? in
            guard child.flags.load(ordering: .relaxed) & NodeFlags.attached != 0 else { return nil }
            _ = state.link.detach()
            child.flags.bitwiseAnd(~NodeFlags.attached, ordering: .relaxed)
            // Cleared by the child's `fail` if it found the pointer set: then it left this node itself.
            guard child.parentAddress.exchange(0, ordering: .sequentiallyConsistent) != 0 else { return nil }
            let pending = Double(child.pendingInParent.load(ordering: .relaxed))
            return (child.keepShareAtFailure(pending: pending, &state), state.control.outcomes.failureDescription)
        }
        guard let failed else { return }
        let departure = FailedChild(node: child, record: child.wireRecord(id: 0, parentID: nil))
        let emptied = removeFailedChild(
            child, departure, left: failed.left, cancelledBelow: 0, description: failed.description)
        markChanged()
        if emptied { releaseFromHolderIfEmpty() }
    }

    /// A failed node's share in its parent at failure (`pending × fraction`), and the parent's units it will
    /// never do (the rest of `pending`).
    typealias FailedShare = (share: Double, remainder: Double)

    /// This node's `FailedShare` with `pending` units in its parent, from its counts and its children as of
    /// the last refresh; keeps the share in its outcomes until the parent's sums hold it. Under its lock.
    private func keepShareAtFailure(pending: Double, _ state: inout NodeState) -> FailedShare {
        let fraction = FractionMath.fraction(
            completed: completedStorage.load(ordering: .relaxed),
            total: totalStorage.load(ordering: .relaxed),
            childUnits: domainAndPart.recentChildUnits)
        let share = pending * fraction
        state.control.outcomes.shareAtFailure = share
        return (share, max(0, pending - share))
    }

    /// Takes `child`, failed and detached from this node, out of this node: the share it `left` replaces its
    /// progress in the sums, and its summaries leave by the rule for `.failed`, in one step for readers, and
    /// nothing is credited (see `retire(_:crediting:failedShare:)`); then, in one critical section, it leaves
    /// the children, its `departure` is recorded for writers of the wire format, and this node counts it as
    /// failed with the `cancelledBelow` nodes its failure cancelled, as do the ancestors after, one lock at a
    /// time. Returns whether this node, held, has no children left (`releaseFromHolderIfEmpty()`).
    private func removeFailedChild(
        _ child: ProgressNode, _ departure: FailedChild, left: FailedShare, cancelledBelow: Int, description: String?
    ) -> Bool {
        // This node carries a summary from here on, should it finish.
        if child.mayHaveSummary { noteSummarized() }
        _ = retire(child, crediting: 0, failedShare: left.share)
        let (next, emptied) = state.withLock { state -> (ProgressNode?, Bool) in
            settleFreshChildren(&state)
            state.children.remove(child)
            state.control.outcomes.failedChildren.record(departure)
            state.control.outcomes.failedRemainder += left.remainder
            state.control.outcomes.record(
                failed: 1, cancelled: cancelledBelow, byFailure: true, firstFailure: description)
            return (state.link.kind == .attached ? parentUnderOwnLock(state) : nil, isHeld && state.children.isEmpty)
        }
        Self.recordOutcomes(
            from: next, failed: 1, cancelled: cancelledBelow, byFailure: true, firstFailure: description)
        return emptied
    }

    /// Cancels every node of the subtrees below `roots` that a cancellation reaches and that is not final
    /// (see `markCancelled`), under each node's lock in turn (never two at once), parent before children in
    /// the order they were added, and counts them into the outcomes of the nodes of those subtrees. Handlers
    /// are only marked in `effects`. The nodes below the roots, and the roots when `rootsFromAbove`, are
    /// reached from above: visited only while attached or held (see ProgressNode+HeldChildren.swift).
    ///
    /// Returns how many nodes it cancelled, `roots` included, and the attached parent of the first root, read
    /// under that root's lock when it was visited (where the caller goes on counting upward). `byFailure`:
    /// the cancellation is a failure's (`ControlFlags.cancelledByFailure`).
    func cancelSubtrees(
        _ roots: [ProgressNode], rootsFromAbove: Bool, byFailure: Bool = false, effects: inout ControlTransitionEffects
    ) -> (cancelled: Int, firstRootParent: ProgressNode?) {
        var firstRootParent: ProgressNode?
        let visited = Self.applyControlTransition(
            to: roots, rootsFromAbove: rootsFromAbove, goesOnBelow: .always, effects: &effects
        ) { node, fromAbove, state, effects in
            if node === roots.first, state.link.kind == .attached { firstRootParent = node.parentUnderOwnLock(state) }
            return node.markCancelled(&state, fromAbove: fromAbove, byFailure: byFailure, effects: &effects)
        }
        // Children come after their parent in preorder, so one backward pass sums each subtree.
        var below = [Int](repeating: 0, count: visited.count)
        var total = 0
        for index in visited.indices.reversed() {
            let subtree = below[index] + (visited[index].changed ? 1 : 0)
            if visited[index].parent >= 0 { below[visited[index].parent] += subtree } else { total += subtree }
        }
        for index in visited.indices where below[index] > 0 {
            visited[index].node.state.withLock {
                $0.control.outcomes.record(failed: 0, cancelled: below[index], byFailure: byFailure, firstFailure: nil)
            }
        }
        return (total, firstRootParent)
    }

    /// Cancels this node unless it is final (cancelled, failed, finished, or held and reached from above);
    /// under its lock. Returns whether it did. A finished or held node is marked passed through instead
    /// (`ControlFlags.cancelledThrough`), so that the children attached to it later are cancelled.
    /// `byFailure` marks the cancellation a failure's (`ControlFlags.cancelledByFailure`).
    func markCancelled(
        _ state: inout NodeState, fromAbove: Bool, byFailure: Bool = false, effects: inout ControlTransitionEffects
    ) -> Bool {
        let flags = currentControlFlags
        guard flags.isDisjoint(with: [.cancelled, .failed]) else { return false }
        let cause: ControlFlags = byFailure ? .cancelledByFailure : []
        if isFinalForTransitions(fromAbove: fromAbove, under: state) {
            if !flags.contains(.cancelledThrough) {
                _ = updateControlFlags(inserting: cause.union(.cancelledThrough), under: state)
            }
            return false
        }
        _ = updateControlFlags(inserting: cause.union(.cancelled), under: state)
        effects.callHandler(of: self, \.cancellation, state: &state.control)
        effects.endWork(of: &state.control)
        return true
    }

    /// Adds outcomes to `first` and each ancestor above it, one lock at a time, while attached.
    static func recordOutcomes(
        from first: ProgressNode?, failed: Int, cancelled: Int, byFailure: Bool = false, firstFailure: String?
    ) {
        var next = first
        while let node = next {
            next = node.state.withLock { state in
                state.control.outcomes.record(
                    failed: failed, cancelled: cancelled, byFailure: byFailure, firstFailure: firstFailure)
                return state.link.kind == .attached ? node.parentUnderOwnLock(state) : nil
            }
        }
    }

    /// The description of this node's failure (`nil` unless failed). O(1), one lock.
    var failureDescription: String? {
        state.withLock { $0.control.outcomes.failureDescription }
    }

    /// What a person reads for `error`: a `LocalizedError`'s `errorDescription`, else its `description`.
    static func failureDescription(of error: any Error) -> String {
        if let localized = error as? any LocalizedError, let description = localized.errorDescription {
            return description
        }
        return String(describing: error)
    }
}
