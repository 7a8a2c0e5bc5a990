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
    static let refreshLock = Lock<Void>(())

    // MARK: Writers

    /// Called after every change of the counts: finishes (detaches) the node if it just finished, then
    /// tells the ancestors. Iterative, so finishing a 10,000-deep chain at once does not recurse.
    @inline(__always)
    func countsDidChange(completed: Int64, total: Int64) {
        if FractionMath.isFinished(completed: completed, total: total),
            isAttached.load(ordering: .sequentiallyConsistent)
        {
            finishAndCreditAncestors()
            return
        }
        markChanged()
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
        var node = self
        while true {
            if node.isDirty.exchange(true, ordering: .sequentiallyConsistent) { return }
            let (parent, observers) = node.state.withLock { ($0.link.attachedParent, $0.observers.signalTargets) }
            observers?.signal()
            guard let parent else { return }
            if !node.isQueuedInParent.exchange(true, ordering: .sequentiallyConsistent) {
                _ = parent.state.withLock { $0.enqueueDirty(node) }  // released after the lock (see there)
            }
            node = parent
        }
    }

    /// Detaches this finished node from its parent, credits the parent with the pending count, and goes on
    /// upward while credits finish further ancestors.
    @inline(never)
    private func finishAndCreditAncestors() {
        var node = self
        while true {
            guard let (parent, pending) = node.detachFromParent() else {
                node.markChanged()
                return
            }
            node.markChanged()
            // Descriptions (issue 5): the finished child's files and bytes, read under the child's lock
            // only (`nil`, after one uncontended lock, when it has no file metadata), then folded into the
            // parent below in the same critical section that removes it. Never two node locks at once.
            let finishedFiles = node.fileSummaryForFinishedParentFold()
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

    /// If attached, switches the link to `.detached` and returns the parent and pending count.
    private func detachFromParent() -> (ProgressNode, Int64)? {
        state.withLock { state -> (ProgressNode, Int64)? in
            guard case .attached(let parent, let pending) = state.link else { return nil }
            state.link = .detached(pendingUnitCount: pending)
            isAttached.store(false, ordering: .sequentiallyConsistent)
            return parent.node.map { ($0, pending) }
        }
    }

    // MARK: Readers

    /// Brings the cached sums of this node's dirty subtree up to date and returns its fraction.
    ///
    /// Iterative (an explicit stack), so a 10,000-deep chain does not exhaust a thread's stack.
    func refresh() -> Double {
        // Fix (test_a_finished_child_released_last_by_a_read_is_deinitialized_outside_the_refresh_lock): a
        // queued child that finished may have no other owner left, so the strong reference taken from its
        // weak queue entry can be the last one. Dropped inside the lock, it ran the child's `deinit` (and
        // that of what the child held: handlers, user info, i.e. user code) under the refresh lock. The
        // children taken from the queues are kept here and released after the lock.
        var taken: [ProgressNode] = []
        return Self.refreshLock.withLock { _ in
            isDirty.store(false, ordering: .sequentiallyConsistent)
            // Fast path, the common case of a clean subtree: one lock, no allocation.
            let queued = state.withLock { state -> [WeakNode]? in
                guard !state.dirtyChildren.isEmpty else { return nil }
                defer { state.dirtyChildren = [] }
                return state.dirtyChildren
            }
            guard let queued else { return applyRefresh([]) }
            var stack = [RefreshFrame(node: self, queued: queued)]
            while true {
                if let entry = stack[stack.count - 1].queued.popLast() {
                    // A queued child that finished and was released since has nothing left to report.
                    guard let child = entry.node else { continue }
                    taken.append(child)
                    child.isQueuedInParent.store(false, ordering: .sequentiallyConsistent)
                    child.isDirty.store(false, ordering: .sequentiallyConsistent)
                    let grandchildren = child.takeDirtyChildren()
                    if grandchildren.isEmpty {
                        stack[stack.count - 1].results.append((child, child.applyRefresh([])))
                    } else {
                        stack.append(RefreshFrame(node: child, queued: grandchildren))
                    }
                    continue
                }
                let frame = stack.removeLast()
                let fraction = frame.node.applyRefresh(frame.results)
                if stack.isEmpty { return fraction }
                stack[stack.count - 1].results.append((frame.node, fraction))
            }
        }
    }

    private func takeDirtyChildren() -> [WeakNode] {
        state.withLock { state in
            guard !state.dirtyChildren.isEmpty else { return [] }
            defer { state.dirtyChildren = [] }
            return state.dirtyChildren
        }
    }

    /// Records the refreshed fractions of some children and returns this node's fraction, reading the
    /// counts and the children's sum under one lock so that a child finishing concurrently is counted once.
    private func applyRefresh(_ results: [(node: ProgressNode, fraction: Double)]) -> Double {
        state.withLock { state in
            if !results.isEmpty { state.children.update(results) }
            return FractionMath.fraction(
                completed: completedStorage.load(ordering: .sequentiallyConsistent),
                total: totalStorage.load(ordering: .sequentiallyConsistent),
                childUnits: state.children.contributionSum)
        }
    }
}

/// One level of the dirty subtree being refreshed.
private struct RefreshFrame {
    let node: ProgressNode
    var queued: [WeakNode]
    var results: [(node: ProgressNode, fraction: Double)] = []
}
