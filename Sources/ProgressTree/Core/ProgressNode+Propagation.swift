import Synchronization

// How a change travels up the tree, and how a read brings cached sums up to date.
//
// Writers (the hot path) never walk the tree: a change sets the node's `isDirty` bit and, only if that bit
// was clear, queues the node in its parent's `dirtyChildren` and repeats one level up. The walk stops at
// the first ancestor already dirty, so a burst of updates between two reads costs one atomic load each.
//
// Readers (`fractionCompleted`) take the refresh lock, then walk down only the dirty part of the tree:
// for each queued child they clear its bits *before* reading its counts, so a concurrent writer either is
// seen by this read or re-queues the child for the next one. No update is ever lost.
//
// What a read sees: every update that returned before the read began, except while another update to the
// same part of the tree is still marking the path. A writer that stops at an ancestor already dirty relies
// on whoever set that bit to queue the ancestor one level up; if that other writer is still between the
// two steps, a read of the root does not reach the ancestor yet. The update then shows in the first read
// after the other writer returns, and that writer signals the root's observers, so an observer still gets
// it (test_an_update_stopping_at_an_ancestor_marked_by_a_writer_in_flight_shows_once_that_writer_returns).

extension ProgressNode {
    /// Serializes readers that bring cached sums up to date: two concurrent refreshes could otherwise split
    /// one dirty queue between them, and one could return before the part the other took was applied.
    /// Writers never take it. (Which updates a read sees: see the top of this file.)
    static let refreshLock = Lock<RefreshScratch>(RefreshScratch())

    // MARK: Writers

    /// Called after every change of the counts: finishes (detaches) the node if it just finished, then
    /// tells the ancestors. Iterative, so finishing a 10,000-deep chain at once does not recurse.
    @inline(__always)
    func countsDidChange(completed: Int64, total: Int64) {
        if FractionMath.isFinished(completed: completed, total: total) {
            if isAttached.load(ordering: .sequentiallyConsistent) {
                finishAndCreditAncestors()
                return
            }
            leavePauseIfFinishedWhilePaused()
        }
        markChanged()
    }

    /// A finished node is not paused (`pause()` skips it): one that finishes while paused leaves the pause
    /// as `resume()` does, so that its checkpoints return and its `resumingHandler` runs. Without this, a
    /// child that finished while paused would stay paused for ever, since its parent's `resume()` no longer
    /// reaches a detached child. One atomic load when not paused.
    @inline(__always)
    private func leavePauseIfFinishedWhilePaused() {
        if isPaused { resume() }
    }

    /// Marks this node, and the path above it up to the first ancestor already marked, as changed.
    /// Signals observers of every node it newly marks.
    @inline(__always)
    func markChanged() {
        if isDirty.load(ordering: .sequentiallyConsistent) { return }
        markChangedSlowPath()
    }

    @inline(never)
    private func markChangedSlowPath() {
        if isDirty.exchange(true, ordering: .sequentiallyConsistent) { return }
        var (parent, observers) = state.withLock { ($0.link.attachedParent, $0.observers.signalTargets) }
        observers?.signal()
        // Then one critical section of each ancestor, which queues the child in it, marks the ancestor and
        // reads what the next level needs. Queueing comes first: a read that takes this ancestor's queue
        // before that clears its `isDirty` before taking, so the exchange below finds it clear and goes on
        // to queue the ancestor one level up (the child is then seen by the next read); a read that takes the
        // queue after it sees the child.
        //
        // `held` keeps the child of the current level alive (the strong reference its own child's link
        // gave); the child itself is used through an unretained reference, so that the walk costs one
        // retain and one release per level (each an atomic operation), not one around every use.
        var child = Unmanaged.passUnretained(self)
        var held: ProgressNode?
        while let node = parent.take() {
            let queue = withExtendedLifetime(held) {
                child._withUnsafeGuaranteedRef { !$0.isQueuedInParent.exchange(true, ordering: .sequentiallyConsistent) }
            }
            let (next, nodeObservers, wasDirty) = withExtendedLifetime(held) {
                node.state.withLock { state -> (ProgressNode?, [any ChangeSignalReceiver]?, Bool) in
                    if queue { child._withUnsafeGuaranteedRef { state.children.enqueueDirty($0) } }
                    if node.isDirty.exchange(true, ordering: .sequentiallyConsistent) { return (nil, nil, true) }
                    return (state.link.attachedParent, state.observers.signalTargets, false)
                }
            }
            if wasDirty { return }
            nodeObservers?.signal()
            child = Unmanaged.passUnretained(node)
            held = consume node
            parent = next
        }
    }

    /// Detaches this finished node from its parent, credits the parent with the pending count, and goes on
    /// upward while credits finish further ancestors. Two node locks per level, one after the other: the
    /// child's (detach, and what it hands the parent) and the parent's (remove, fold and credit).
    @inline(never)
    private func finishAndCreditAncestors() {
        var node = self
        while true {
            var pending: Int64 = 0
            var files = FinishedFileFold.nothing
            let detachedFrom = node.detachFromParent(pendingUnitCount: &pending, files: &files)
            node.leavePauseIfFinishedWhilePaused()
            node.markChanged()
            guard let parent = detachedFrom else { return }
            // Descriptions (issue 5): the finished child's files and bytes, decided under the child's lock
            // by `detachFromParent` (nothing to hand, the usual case, or a leaf's own files) or, for a child
            // that still has attached children, summed now one lock at a time; then folded into the
            // parent below in the same critical section that removes it. Never two node locks at once.
            let finishedFiles = node.fileSummaryForFinishedParentFold(files)
            let (completed, total) = parent.state.withLock { state in
                // Remove and credit under the parent's lock, so no reader sees the child's share twice or
                // not at all.
                state.children.remove(node)
                state.metadata.foldFinishedChild(finishedFiles)
                let completed = parent.addToCompleted(pending)
                return (completed, parent.totalStorage.load(ordering: .sequentiallyConsistent))
            }
            guard FractionMath.isFinished(completed: completed, total: total),
                parent.isAttached.load(ordering: .sequentiallyConsistent)
            else {
                parent.markChanged()
                return
            }
            node = parent
        }
    }

    /// If attached, switches the link to `.detached` and returns the parent, with the pending count and what
    /// this node hands its parent's file summary, all read in the same critical section. (The two are
    /// passed back through `inout` rather than in an optional tuple or struct with the parent, which
    /// Swift destroys through generic runtime calls: more than the rest of the detach.)
    private func detachFromParent(
        pendingUnitCount: inout Int64, files: inout FinishedFileFold
    ) -> ProgressNode? {
        state.withLock { state -> ProgressNode? in
            guard let (parent, pending) = state.link.detach() else { return nil }
            // Only a hint for updates (a stale `true` makes one take this lock and find the link detached),
            // so no store-load barrier is needed: on x86 a plain store instead of an exchange.
            isAttached.store(false, ordering: .releasing)
            guard let parent else { return nil }
            pendingUnitCount = pending
            files = finishedFileFold(of: state)
            return parent
        }
    }

    // MARK: Readers

    /// Brings the cached sums of this node's dirty subtree up to date and returns its fraction.
    ///
    /// Iterative (an explicit stack), so a 10,000-deep chain does not exhaust a thread's stack. The stack
    /// and the other buffers live in the refresh lock's `RefreshScratch` and keep their capacity, so a read
    /// allocates nothing once they have grown to the size of the dirty part of the tree.
    func refresh() -> Double {
        // Fix (test_a_finished_child_released_last_by_a_read_is_deinitialized_outside_the_refresh_lock): a
        // child taken by the read may finish meanwhile and lose every other owner, so the read's reference
        // can be the last one. Dropped inside the lock, it ran the child's `deinit` (and that of what the
        // child held: handlers, user info, i.e. user code) under the refresh lock. The children a read takes
        // are kept in `scratch.taken`, moved out of the lock and released after it.
        var taken: [ProgressNode] = []
        let fraction = Self.refreshLock.withLock { scratch -> Double in
            isDirty.store(false, ordering: .sequentiallyConsistent)
            let fraction = refreshDirtySubtree(&scratch)
            if !scratch.taken.isEmpty { swap(&taken, &scratch.taken) }
            return fraction
        }
        if !taken.isEmpty {
            while taken.popLast() != nil {}  // the releases, outside the refresh lock (keeps the capacity)
            Self.refreshLock.withLock { scratch in
                // Hand the empty buffer back for the next read.
                if scratch.taken.capacity < taken.capacity { swap(&scratch.taken, &taken) }
            }
        }
        return fraction
    }

    /// The refresh itself, under the refresh lock. For each queued child it clears the child's bits
    /// *before* reading its counts (see the top of this file), then either records the child's fraction at
    /// once (no dirty child below it) or descends into it.
    private func refreshDirtySubtree(_ scratch: inout RefreshScratch) -> Double {
        // Fast path, the common case of a clean subtree: one lock, no allocation.
        if case .fraction(let fraction) = takeDirtyChildrenOrFraction(into: &scratch.pending) { return fraction }
        scratch.frames.append(RefreshFrame(node: .passUnretained(self), pendingBase: 0, resultsBase: 0))
        while true {
            let top = scratch.frames[scratch.frames.count - 1]
            if scratch.pending.count > top.pendingBase {
                // `taken` keeps the child alive until after the refresh lock; it is used through an
                // unretained reference (no retain and release around each use: atomic operations).
                let child = scratch.pending.removeLast()
                let node = Unmanaged.passUnretained(child)
                scratch.taken.append(consume child)
                let base = scratch.pending.count
                let outcome = node._withUnsafeGuaranteedRef { child in
                    child.isQueuedInParent.store(false, ordering: .sequentiallyConsistent)
                    child.isDirty.store(false, ordering: .sequentiallyConsistent)
                    return child.takeDirtyChildrenOrFraction(into: &scratch.pending)
                }
                switch outcome {
                case .fraction(let fraction):
                    scratch.results.append(RefreshResult(node: node, fraction: fraction))
                case .queued:
                    scratch.frames.append(
                        RefreshFrame(node: node, pendingBase: base, resultsBase: scratch.results.count))
                }
                continue
            }
            scratch.frames.removeLast()
            let fraction = top.node._withUnsafeGuaranteedRef { $0.applyRefresh(scratch.results[top.resultsBase...]) }
            while scratch.results.count > top.resultsBase { scratch.results.removeLast() }
            if scratch.frames.isEmpty { return fraction }
            scratch.results.append(RefreshResult(node: top.node, fraction: fraction))
        }
    }

    /// Moves this node's queued children to the end of `nodes` or, when none of them is still attached,
    /// returns the node's fraction, in one critical section.
    private func takeDirtyChildrenOrFraction(into nodes: inout [ProgressNode]) -> DirtyChildren {
        state.withLock { state -> DirtyChildren in
            if state.children.takeDirty(into: &nodes) { return .queued }
            return .fraction(currentFraction(state))
        }
    }

    /// Records the refreshed fractions of some children and returns this node's fraction, reading the
    /// counts and the children's sum under one lock so that a child finishing concurrently is counted once.
    private func applyRefresh(_ results: ArraySlice<RefreshResult>) -> Double {
        state.withLock { state in
            if !results.isEmpty { state.children.update(results) }
            return currentFraction(state)
        }
    }

    /// The node's fraction from its counts, its children's cached sum and the frozen share of its failed
    /// children; under its lock.
    private func currentFraction(_ state: borrowing NodeState) -> Double {
        FractionMath.fraction(
            completed: completedStorage.load(ordering: .sequentiallyConsistent),
            total: totalStorage.load(ordering: .sequentiallyConsistent),
            // Failure hook (ProgressNode+Failure.swift): a failed child left `children` and its share at
            // failure moved to `failedChildUnits` in one critical section of this lock, so it counts once.
            childUnits: state.children.contributionSum + state.control.outcomes.failedChildUnits)
    }
}

private enum DirtyChildren {
    /// The node had no queued child still attached: its fraction.
    case fraction(Double)
    /// Its queued children were added to the list of nodes to visit.
    case queued
}

/// The buffers of a refresh, kept in the refresh lock between reads so that they keep their capacity.
/// Empty between reads.
struct RefreshScratch {
    /// Children still to visit: each frame's are at the end, above those of the frames below it.
    var pending: [ProgressNode] = []
    /// The nodes being refreshed, root first.
    var frames: [RefreshFrame] = []
    /// Fractions of children not yet recorded in their parent: each frame's at the end.
    var results: [RefreshResult] = []
    /// Every child the refresh took, held until after the refresh lock (see `refresh()`).
    var taken: [ProgressNode] = []
}

/// One level of the dirty subtree being refreshed. The node is held by `RefreshScratch.taken` (or is the
/// node being read).
struct RefreshFrame {
    let node: Unmanaged<ProgressNode>
    /// Where this frame's children start in `RefreshScratch.pending`.
    let pendingBase: Int
    /// Where this frame's children's results start in `RefreshScratch.results`.
    let resultsBase: Int
}
