import Synchronization

// Finishing: a child that finished leaves its parent, and its share moves into the parent's count, as one
// step for readers (see `retire`). Marking and the overview of writers and readers are in
// ProgressNode+Propagation.swift; reads in ProgressNode+Refresh.swift.

extension ProgressNode {
    /// The parent, retained, while attached and alive.
    var parent: ProgressNode? { parent(clearing: false) }

    /// Detaches this finished node from its parent, credits the parent with the pending count, and goes on
    /// upward while credits finish further ancestors.
    ///
    /// Per level: the child's lock (detach, and what it hands the parent's file summary), then the credit,
    /// then the parent's lock (remove from the table, fold the files). The child's share leaves the parent's
    /// sum together with the credit, as one step for readers: directly, under the domain lock, when no
    /// refresh runs; otherwise the child is *retired* into the parent's dirty queue between two increments
    /// of the parent's `creditSequence`, and the refresh that drains it removes the share (a refresh that
    /// saw the sequence move reads again). Updates never wait for a refresh.
    @inline(never)
    func finishAndCreditAncestors() {
        // One level per step; `self` is held by the caller, each ancestor by the step that returned it.
        var next = finishIntoParent()
        while let node = next { next = node.finishIntoParent() }
    }

    /// One level of `finishAndCreditAncestors`: detaches this finished node and credits its parent. Returns
    /// the parent (retained) when the credit finished it and it is attached, so that it finishes next.
    private func finishIntoParent() -> ProgressNode? {
        var files = FinishedFileFold.nothing
        guard let (parent, pending) = detachFromParent(files: &files) else {
            leavePauseIfFinishedWhilePaused()
            markChanged()
            return nil
        }
        leavePauseIfFinishedWhilePaused()
        markChanged()
        let finishedFiles = fileSummaryForFinishedParentFold(files)
        let completed = parent.retire(self, crediting: pending)
        let parentFinished = FractionMath.isFinished(
            completed: completed, total: parent.totalStorage.load(ordering: .sequentiallyConsistent))
        parent.state.withLock { state in
            state.children.remove(self)
            state.metadata.foldFinishedChild(finishedFiles)
        }
        guard parentFinished, parent.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.attached != 0 else {
            // A parent the credit finished is never left paused, attached or not (an attached one leaves
            // it in its own step).
            if parentFinished { parent.leavePauseIfFinishedWhilePaused() }
            parent.markChanged()
            return nil
        }
        return parent
    }

    /// If attached, switches the link to `.detached` and returns the parent (retained) and the pending
    /// count, with what this node hands its parent's file summary, all in one critical section.
    private func detachFromParent(files: inout FinishedFileFold) -> (ProgressNode, Int64)? {
        state.withLock { state -> (ProgressNode, Int64)? in
            // A failed node is never finished, whatever its counts: it is never credited. (Only a node that
            // failed before `addChild` linked it can still be attached; `addChild` lets it go as failed.)
            guard !currentControlFlags.contains(.failed), state.link.detach() else { return nil }
            let pending = pendingInParent.load(ordering: .relaxed)
            // From here on updates no longer look at the parent.
            flags.bitwiseAnd(~NodeFlags.attached, ordering: .sequentiallyConsistent)
            let parent = self.parent(clearing: true)
            guard let parent else { return nil }
            files = finishedFileFold(of: state)
            return (parent, pending)
        }
    }

    /// The parent, retained (nil if it is going away), read inside a walk; `clearing` also clears the
    /// pointer, so no later walk reaches the parent from here.
    func parent(clearing: Bool) -> ProgressNode? {
        guard let domain = domainStorage.unretained() else { return nil }
        let walk = domain._withUnsafeGuaranteedRef { $0.enterWalk() }
        defer { walk.exit() }
        let address =
            clearing
            ? parentAddress.exchange(0, ordering: .sequentiallyConsistent)
            : parentAddress.load(ordering: .sequentiallyConsistent)
        guard let pointer = UnsafeMutableRawPointer(bitPattern: address), swiftTryRetain(pointer) else { return nil }
        return Unmanaged<ProgressNode>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Takes `child`, which just detached, out of this node's sums, credits `pending` units of it (a
    /// finished child) or keeps `failedShare` of it (a failed one), as one step for readers (see
    /// `finishAndCreditAncestors`). Returns the completed count then. The child's table entry is removed
    /// by the caller.
    ///
    /// Marking the child `retired` ends its walks' pushes: a walk never queues a retired node. A walk that
    /// queued it just before may still be pushing it, so the queue is handed a reference whenever the child
    /// is, or is about to be, in it; the refresh that drains it releases that reference.
    func retire(_ child: ProgressNode, crediting pending: Int64, failedShare: Double = 0) -> Int64 {
        let me = Unmanaged.passUnretained(self)
        var released: [ProgressNode] = []
        let domain = unretainedDomain
        let direct = domain._withUnsafeGuaranteedRef { $0.withRepresentativeLockIfAvailable { scratch -> Int64 in
            // No refresh runs in the tree: take the share out and credit, as one step for readers.
            let old = child.flags.bitwiseOr(NodeFlags.retired, ordering: .sequentiallyConsistent).oldValue
            childSums.load()?.remove(.passUnretained(child))
            if failedShare > 0 {
                childSumsForRefresh.addFailedShare(failedShare)
                _ = child.takeShareAtFailure()  // kept here: a refresh that drains the child adds nothing
            }
            let completed = pending == 0 ? completedStorage.load(ordering: .sequentiallyConsistent) : addToCompleted(pending)
            if old & NodeFlags.queued != 0 {
                _ = Unmanaged.passRetained(child)  // the queue's reference
                // Drain it now rather than at the next read: a finished child costs no memory for long.
                _ = refreshDirtySubtree(&scratch)
                swap(&released, &scratch.released)
            }
            return completed
        } }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
        if let direct { return direct }
        // A refresh runs: retire the child into the queue, between two moves of the credit sequence. The
        // refresh that drains it takes its share out (and keeps its share at failure).
        let sums = childSumsForRefresh
        sums.beginCredit()
        let old = child.flags.bitwiseOr(NodeFlags.retired | NodeFlags.queued, ordering: .sequentiallyConsistent).oldValue
        _ = Unmanaged.passRetained(child)  // the queue's reference, released by the refresh that drains it
        if old & NodeFlags.queued == 0 {
            child.push(onto: me)
        } else {
            // A walk may still be pushing it: wait for the walks in progress (they never block), so that the
            // child is in the queue before the sequence settles.
            domain._withUnsafeGuaranteedRef { $0.waitForWalksAlongForwards() }
        }
        let completed = pending == 0 ? completedStorage.load(ordering: .sequentiallyConsistent) : addToCompleted(pending)
        sums.endCredit()
        return completed
    }

    /// This node's share at failure, once: 0 afterwards (and for a node that did not fail). The node's lock.
    func takeShareAtFailure() -> Double {
        guard flags.load(ordering: .relaxed) & NodeFlags.retired != 0, isFailed else { return 0 }
        return state.withLock { state in
            defer { state.control.outcomes.shareAtFailure = 0 }
            return state.control.outcomes.shareAtFailure
        }
    }
}
