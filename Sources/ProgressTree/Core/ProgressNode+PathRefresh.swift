import Synchronization

// The refresh an update does itself, when its own thread reads the tree between updates.
//
// An update that finds its node clean usually only marks the path up (see ProgressNode+Propagation.swift),
// and the next read brings the marked part up to date. When the updating thread itself reads after every
// update (a loop that polls its root), that read revisits every level the update just marked, and both pay
// an atomic read-modify-write per level twice over, on the same thread. So when this thread was the last to
// read a node of the tree since the last such refresh (`RefreshDomain.lastReader`, a hint), the updated
// node has no observer (its observers read it on their own queues) and nobody holds the tree's lock (a
// try-lock: an update never waits), the update does what the read would have done for its path, under the
// lock: it computes each node's fraction from its counts and sums, stores it in `cachedFraction` and
// records it in the parent's sums, and leaves the path clean. The next read is then two loads. When another
// thread reads (an observer's queue, a UI polling a worker's tree), updates only mark, and the reader does
// the work: that keeps it off the updating threads.
//
// Why the cached fractions stay right. Nothing here sets or clears `dirty`, and no refresh runs while the
// lock is held, so every node on the path is in one of two cases when the walk reaches it:
// - clean (neither `dirty` nor `refreshing`), with an empty queue and a settled credit sequence: its counts
//   and sums are all there is, so the fraction computed is its fraction, and storing it is what a refresh
//   would store. A writer that changes something below it meanwhile marks it `dirty` (queue first, then
//   mark), so readers refresh it instead of trusting the store; a credit meanwhile moves its sequence, and
//   the walk then marks it instead.
// - dirty, or with something queued or a credit in progress: the child below is recorded in its sums (the
//   sums belong to the lock, which this walk holds) and the node is marked as a writer would mark it, so the
//   next read brings it and the path above it up to date, seeing the recorded child.
// A concurrent update of a node already passed marks that node `dirty` itself (it found the node clean) and
// its path, so no update is lost. The sums only ever receive values computed under the lock, in lock
// order, so a later record is never older.

extension ProgressNode {
    /// Brings the cached fractions from this node up to its root up to date, if this thread read the tree
    /// since the last time an update did so, this node is not observed and nobody holds the tree's lock. Returns `false` when it did nothing
    /// (the caller marks the path instead). For an update that found this node clean.
    @inline(__always)
    func refreshPathOnUpdate() -> Bool {
        // An observed node is read by its observers' deliveries, on their queues: leave the work to them.
        let flags = flags.load(ordering: .relaxed)
        guard flags & NodeFlags.observed == 0 else { return false }
        let storage: UnownedDomain
        if let existing = domainAndPart.domain {
            storage = existing
        } else if flags & NodeFlags.attached != 0 {
            storage = UnownedDomain(adoptDomain())  // a fresh child's first update: its tree may be read
        } else {
            return false  // a root nobody has read
        }
        let domain = storage.representative
        return domain.isLastReadByThisThread && refreshPathUnderLock(of: domain)
    }

    @inline(never)
    private func refreshPathUnderLock(of domain: UnownedDomain) -> Bool {
        var signals: [any ChangeSignalReceiver]?
        var released: [ProgressNode] = []
        // Merged into another tree meanwhile (`nil` inside): that tree's lock is the one that counts.
        let refreshed = domain.withLockIfAvailable { scratch -> Bool in
            domain.clearLastReader()
            let walk = domain.enterWalk()
            var node = UnownedNode(self)
            var below: UnownedNode?
            var fraction = 0.0
            while let next = node.refreshPathStep(below: below, fraction: &fraction, signals: &signals, &scratch) {
                below = node
                node = next
            }
            walk.exit()
            if !scratch.released.isEmpty { swap(&released, &scratch.released) }
            return true
        }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
        signals?.signal()  // after the lock: signalling may release the last reference to a node
        return refreshed == true
    }

    /// One level of the path refresh, inside a walk (every parent reached stays
    /// allocated): records `below` (the level under this one, with its `fraction`) in this node's sums, then
    /// stores this node's fraction and returns its parent, or marks it and returns `nil` (the walk stops).
    @inline(__always)
    func refreshPathStep(
        below: UnownedNode?, fraction: inout Double, signals: inout [any ChangeSignalReceiver]?,
        _ scratch: inout RefreshScratch
    ) -> UnownedNode? {
        let flags = flags.load(ordering: .sequentiallyConsistent)
        if let below { below.record(in: self, fraction: fraction, &scratch) }
        guard flags & NodeFlags.stale == 0, let own = quietFraction(scratch) else {
            // Marked as an update would mark it: the next read brings it, and the path above it, up to date.
            if markDirty(collecting: &signals) { Self.markAncestors(of: UnownedNode(self), signals: &signals) }
            return nil
        }
        cachedFraction.store(own.bitPattern, ordering: .releasing)
        // An observer registering meanwhile passes the domain lock after setting `observed` and before
        // reading its baseline (`observe`): it is seen in `flags` here, or reads this store.
        if flags & NodeFlags.observed != 0 { collectObservers(into: &signals) }
        fraction = own
        guard flags & NodeFlags.attached != 0 else { return nil }
        return UnownedNode(address: parentAddress.load(ordering: .sequentiallyConsistent))
    }

    /// This node's fraction from its counts and sums, if they are all there is: nothing queued for a refresh
    /// and no credit in progress or made while they were read.
    @inline(__always)
    private func quietFraction(_ scratch: borrowing RefreshScratch) -> Double? {
        guard let sums = domainAndPart.sums else {
            // It never had a child: no sums, no queue, no credit.
            return FractionMath.fraction(completed: completedUnitCount, total: totalUnitCount)
        }
        let sequence = sums.creditSequence
        guard ChildSums.isSettled(sequence), sums.queueTop == 0 else { return nil }
        let completed = completedStorage.load(ordering: .sequentiallyConsistent)
        let total = totalStorage.load(ordering: .sequentiallyConsistent)
        let childUnits = sums.total(scratch)
        guard sums.creditSequence == sequence else { return nil }
        return FractionMath.fraction(completed: completed, total: total, childUnits: childUnits)
    }
}
