import Synchronization

// Finishing: a child that finished leaves its parent, and its share moves into the parent's count, as one
// step for readers (see `retire`). Marking and the overview of writers and readers are in
// ProgressNode+Propagation.swift; reads in ProgressNode+Refresh.swift.

extension ProgressNode {
    /// The parent, retained, while attached and alive. Takes this node's lock: code holding it calls
    /// `parentUnderOwnLock(_:)`.
    var parent: ProgressNode? { state.withLock { parentUnderOwnLock($0) } }

    /// Detaches this finished node from its parent, credits the parent with the pending count, and goes on
    /// upward while credits finish further ancestors.
    ///
    /// Per level: the child's lock (detach, the parent retained), then the credit, then leaving the parent
    /// (a pop off its fresh children, or its lock: remove from the table). The child's share and its
    /// summaries leave the parent's sums together with the credit, as one step for readers: a child the
    /// parent never held a share of, and that carries no summary, is credited with one atomic add;
    /// otherwise directly, under the domain lock, when no refresh runs, or the child is *retired* into the
    /// parent's dirty queue between two increments of the parent's `creditSequence`, and the refresh that
    /// drains it takes its share and summaries out (a refresh that saw the sequence move reads again).
    /// Updates never wait for a refresh.
    @inline(never)
    func finishAndCreditAncestors() {
        // One level per step; `self` is held by the caller, each ancestor by the step that returned it.
        var next = finishIntoParent()
        while let node = next { next = node.finishIntoParent() }
    }

    /// One level of `finishAndCreditAncestors`: detaches this finished node and credits its parent. Returns
    /// the parent (retained) when the credit finished it and it is attached, so that it finishes next.
    ///
    /// The parent is held for the whole step (retained under this node's lock, see `detachFromParent`):
    /// the step runs user code (a `resumingHandler`, an observer's release) and may release other nodes,
    /// and any of that may drop what was the parent's last other reference.
    private func finishIntoParent() -> ProgressNode? {
        guard let detached = detachFromParent() else {
            leavePauseIfFinishedWhilePaused()
            markChanged()
            return nil
        }
        leavePauseIfFinishedWhilePaused()
        if detached.signalsObservers { state.withLock({ $0.observers.signalTargets })?.signal() }
        guard let parent = detached.parent?.takeRetained() else { return nil }
        // The parent's reference goes last when the finish stops here: it may run the parent's `deinit`.
        return creditAndLeave(parent, detached) ? parent : nil
    }

    /// Leaves `parent`, into which this node just finished: a held node is listed as finished, any other
    /// leaves its table (or its stack of fresh children). Returns whether that emptied a held parent. (Its
    /// summaries left in `retire`, before.)
    @inline(__always)
    private func leave(_ parent: ProgressNode, held: Bool) -> Bool {
        if held {
            // Stays in the parent's table for transitions (ProgressNode+HeldChildren.swift); from here
            // on, readers of progress and shape see it finished.
            parent.state.withLock { _ in _ = flags.bitwiseOr(NodeFlags.listedAsFinished, ordering: .releasing) }
            return false
        }
        if parent.popFreshChild(self) {
            // The stack's reference; the caller still holds this node.
            UnownedNode(self).release()
            return parent.flags.load(ordering: .acquiring) & NodeFlags.held != 0
        }
        return parent.state.withLock { state in
            parent.settleFreshChildren(&state)
            state.children.remove(self)
            return parent.flags.load(ordering: .relaxed) & NodeFlags.held != 0 && state.hasNoChildren
        }
    }

    /// The rest of a step of `finishIntoParent`, with `parent` retained: credits it, leaves it (`leave`), and
    /// returns whether the credit finished it and it is attached, so that it finishes next.
    @inline(__always)
    private func creditAndLeave(_ parent: ProgressNode, _ detached: Detachment) -> Bool {
        let completed =
            detached.creditsWithoutShare
            ? parent.credit(detached.pending) : parent.retire(self, crediting: detached.pending)
        let parentFinished = FractionMath.isFinished(completed: completed, total: parent.totalUnitCount)
        let parentEmptied = leave(parent, held: detached.held)
        // A held parent lets go of its own parent once nothing is attached below it.
        if parentEmptied { parent.releaseFromHolderIfEmpty() }
        guard parentFinished, parent.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.attached != 0
        else {
            // A parent the credit finished is never left paused, attached or not (an attached one
            // leaves it in its own step).
            if parentFinished { parent.leavePauseIfFinishedWhilePaused() }
            parent.markChanged()
            return false
        }
        return true
    }

    /// What `detachFromParent` hands the finish.
    private struct Detachment {
        /// The detach marked the node `dirty` and it is observed: its observers must be signalled.
        let signalsObservers: Bool
        /// The parent, retained (+1, handed over without reference counting on the way), if the node was
        /// linked to one that is not going away; the other fields are those of a detach from it.
        var parent: UnownedNode?
        var pending: Int64 = 0
        /// The parent never held a share of this node (`NodeFlags.shared` was clear) and the node carries no
        /// summary: `retired` is set, and the credit is one atomic add (`credit`), with nothing to take out.
        var creditsWithoutShare = false
        /// Nodes are still attached below it: the parent holds it (`NodeFlags.held`).
        var held = false
    }

    /// If attached, switches the link to `.detached`, marks the node changed, and returns the parent
    /// (retained) with the pending count and what this node hands its parent's file summary and custom
    /// properties, all in one critical section.
    ///
    /// One compare-and-exchange on `flags` clears `attached`, sets `dirty` (the node's fraction is now 1)
    /// and, when the parent never held a share of the node, `retired` (no walk queues it any more, and no
    /// refresh records it: `claimShare`). The parent is retained with `swift_tryRetain`, without a walk:
    /// under this lock the pointer is either cleared or points to allocated memory, because a parent going
    /// away clears it under this same lock before its memory goes (`orphan`); the retain fails once that
    /// parent's `deinit` has begun, and then there is nobody to credit.
    private func detachFromParent() -> Detachment? {
        state.withLock { state -> Detachment? in
            // A failed node is never finished, whatever its counts: it is never credited. (Only a node that
            // failed before `addChild` linked it can still be attached; `addChild` lets it go as failed.)
            guard !currentControlFlags.contains(.failed), state.link.detach() else { return nil }
            let address = parentAddress.load(ordering: .sequentiallyConsistent)
            let parent = retainNode(at: address, weakLink: state.weakParent)
            // Work still attached below it keeps it in the parent's reach (ProgressNode+HeldChildren.swift).
            settleFreshChildren(&state)
            let held = parent != nil && !state.hasNoChildren
            if held {
                state.holderAddress = address
            } else if currentControlFlags.contains(.pausedThrough) {
                // Out of every ancestor's reach from here.
                _ = updateControlFlags(removing: .pausedThrough, under: state)
            }
            // A node that may carry a summary (`summarized`, or work attached below it) leaves through
            // `retire`, which takes its summaries out with its share (Summaries/ProgressNode+Summaries.swift).
            let mayLeaveWithoutShare = parent != nil && !held
            let shareOrSummary = NodeFlags.shared | NodeFlags.queued | NodeFlags.summarized
            // From here on updates no longer look at the parent.
            let current = updateFlags { current in
                var desired = current & ~NodeFlags.attached | NodeFlags.dirty
                if mayLeaveWithoutShare && current & shareOrSummary == 0 { desired |= NodeFlags.retired }
                return held ? desired | NodeFlags.held : desired
            }
            let withoutShare = mayLeaveWithoutShare && current & shareOrSummary == 0
            checkDetached(state)
            let signalsObservers = current & (NodeFlags.dirty | NodeFlags.observed) == NodeFlags.observed
            guard let parent else { return Detachment(signalsObservers: signalsObservers) }
            if !withoutShare { joinDomain(of: parent) }
            // No later walk reaches the parent from here. (Walks read it inside a walk of the domain, which a
            // parent going away waits for, so this store needs no stronger order.)
            parentAddress.store(0, ordering: .releasing)
            // What it leaves in the parent's summaries is folded under the domain lock (`retire`); the parent,
            // should the credit finish it, must leave the same way: it carries a summary from here on.
            if held || current & NodeFlags.summarized != 0 { _ = parent.setFlags(NodeFlags.summarized) }
            return Detachment(
                signalsObservers: signalsObservers, parent: parent, pending: pendingInParent.load(ordering: .relaxed),
                creditsWithoutShare: withoutShare, held: held)
        }
    }

    /// Gives this node `parent`'s domain if it has none yet. Under this node's lock, before the detach that
    /// clears the parent pointer is over: a node that leaves through `retire` is read under its former tree's
    /// lock (`leaveSummaries` refreshes its subtree there), so a child attached to it later must join that
    /// tree (`adoptDomain` finds no parent then), not a domain of its own whose reads would race with it.
    func joinDomain(of parent: UnownedNode) {
        if domainAndPart.domain == nil, let domain = parent.domain {
            _ = domainAndPart.storeDomainIfNone(domain.domain)
        }
    }

    /// After a detach, under this node's lock (PROGRESSTREE_INTERNAL_CHECKS): the link is detached, `attached`
    /// is clear (unless `addChild` may still set it: it flags a node attached after its lock, and a node
    /// that fails in between leaves with the flag set, cleared by `releaseChildThatFailedBeforeLinking`),
    /// and the node is held exactly when it records a holder.
    @inline(__always)
    func checkDetached(_ state: borrowing NodeState, attachedFlagMayFollow: Bool = false) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        let flags = flags.load(ordering: .sequentiallyConsistent)
        precondition(
            state.link.kind == .detached && (attachedFlagMayFollow || flags & NodeFlags.attached == 0)
                && (flags & NodeFlags.held != 0) == (state.holderAddress != 0),
            "ProgressTree internal check failed: a node detached from its parent is attached, or held without a holder")
        #endif
    }

    /// Credits `pending` units of a finished child whose share this node never held (see `Detachment`):
    /// nothing leaves the sums, so the credit alone is one step for readers. Returns the completed count.
    @inline(__always)
    private func credit(_ pending: Int64) -> Int64 {
        pending == 0 ? completedStorage.load(ordering: .sequentiallyConsistent) : addToCompleted(pending)
    }

    /// For a parent going away, which took this node out of its table: clears the parent pointer, under
    /// this node's lock, where a finish reads and retains it (`detachFromParent`), so that a finish either
    /// finds it cleared or retains the parent while its memory is still there (and fails to, its `deinit`
    /// having begun).
    func orphan() {
        state.withLock { state in
            parentAddress.store(0, ordering: .sequentiallyConsistent)
            state.holderAddress = 0  // a held child is in its holder's table too (ProgressNode+HeldChildren.swift)
        }
    }

    /// The parent, retained (nil when there is none or its `deinit` has begun), for code that holds this
    /// node's lock: under it the pointer is cleared before a parent goes away (`orphan`), so a parent found
    /// here is allocated, and `swift_tryRetain` refuses one whose `deinit` began. `clearing` also clears the
    /// pointer, so no later walk reaches the parent from here (an exchange: `addChild` stores the pointer
    /// outside this lock).
    func parentUnderOwnLock(_ state: borrowing NodeState, clearing: Bool = false) -> ProgressNode? {
        let address =
            clearing
            ? parentAddress.exchange(0, ordering: .sequentiallyConsistent)
            : parentAddress.load(ordering: .sequentiallyConsistent)
        return retainNode(at: address, weakLink: state.weakParent)?.takeRetained()
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
        var released: [ProgressNode] = []
        let domain = unretainedDomain
        let direct = domain.withRepresentativeLockIfAvailable { scratch -> Int64 in
            // No refresh runs in the tree: take the summaries and the share out and credit, as one step for
            // readers.
            let old = child.flags.bitwiseOr(NodeFlags.retired, ordering: .sequentiallyConsistent).oldValue
            takeOut(child, failedShare: failedShare, &scratch)
            // Kept here: a refresh that drains the child adds nothing.
            if failedShare > 0 { _ = child.takeShareAtFailure() }
            let completed = credit(pending)
            if old & NodeFlags.queued != 0 {
                UnownedNode(child).retain()  // the queue's reference
                // Drain it now rather than at the next read: a finished child costs no memory for long.
                _ = refreshDirtySubtree(&scratch)
            }
            if !scratch.released.isEmpty { swap(&released, &scratch.released) }
            return completed
        }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
        if let direct { return direct }
        // A refresh runs: retire the child into the queue, between two moves of the credit sequence. The
        // refresh that drains it takes its share out (and keeps its share at failure).
        let sums = domainAndPart.partCreatingIfNone()
        sums.beginCredit()
        let old = child.flags.bitwiseOr(NodeFlags.retired | NodeFlags.queued, ordering: .sequentiallyConsistent)
            .oldValue
        UnownedNode(child).retain()  // the queue's reference, released by the refresh that drains it
        if old & NodeFlags.queued == 0 {
            domainAndPart.push(queued: child)
        } else {
            // A walk may still be pushing it: wait for the walks in progress (they never block), so that the
            // child is in the queue before the sequence settles.
            domain.waitForWalksAlongForwards()
        }
        let completed = credit(pending)
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
