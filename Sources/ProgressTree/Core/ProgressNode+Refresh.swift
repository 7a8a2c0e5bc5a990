import ProgressTreePlatform
import Synchronization

// Reads: a clean node's cached fraction, or a refresh of the dirty part of its subtree under the tree's
// domain lock. Why a refresh loses no update, and why a clean read is right: the top of
// ProgressNode+Propagation.swift.

extension ProgressNode {
    /// Returns this node's fraction: the cached one when nothing changed below it since the last refresh (two
    /// atomic loads), otherwise the one computed by bringing the cached sums of its dirty subtree up to date.
    ///
    /// Inlined into callers in other modules, so that a clean read costs the same wherever the caller's
    /// code and this module's code land in memory (an out-of-line clean read measured 3.6 or 4.8 ns with the
    /// same instructions, depending on its address).
    @inlinable @inline(__always)
    func refresh() -> Double {
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.stale == 0 {
            let fraction = Double(bitPattern: cachedFraction.load(ordering: .sequentiallyConsistent))
            domainAndPart.domain?.noteCleanRead()
            return fraction
        }
        return refreshDirty()
    }

    /// Brings the cached sums of this node's dirty subtree up to date and returns its fraction, under the
    /// tree's domain lock.
    ///
    /// Iterative (an explicit stack), so a 10,000-deep chain does not exhaust a thread's stack. The stack
    /// and the other buffers live in the domain's `RefreshScratch` and keep their capacity, so a read
    /// allocates nothing once they have grown to the size of the dirty part of the tree.
    @inline(never)
    @usableFromInline func refreshDirty() -> Double {
        // Retired children drained by the read hold the queue's reference, released after the domain lock so
        // that no `deinit` (nor the user code a child holds: handlers, user info) runs under it.
        var released: [ProgressNode] = []
        let domain = unretainedDomain
        domain.noteRead()
        let fraction = domain.withRepresentativeLock { scratch -> Double in
            let fraction = refreshDirtySubtree(&scratch)
            if !scratch.released.isEmpty { swap(&released, &scratch.released) }
            return fraction
        }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
        return fraction
    }

    /// Releases the retired children a refresh drained, outside the domain lock, then hands the emptied
    /// buffer back to the domain, so that later refreshes allocate nothing.
    func releaseOutsideTheLock(_ released: inout [ProgressNode]) {
        while released.popLast() != nil {}  // keeps the capacity
        unretainedDomain.withRepresentativeLock { scratch in
            if scratch.released.capacity < released.capacity { swap(&scratch.released, &released) }
        }
    }

    /// A queued node taken from its parent's queue: `dirty` and `queued` replaced by `refreshing`, as
    /// `refreshDirtySubtree` does for the node it starts from, or for a retired node only the end of `queued`.
    /// Returns the flags as they were. One compare-and-exchange decides between the two, so that a node that
    /// retires meanwhile is never left `refreshing` (the caller refreshes no more of a retired node).
    @inline(__always)
    func takeFromQueue() -> UInt32 {
        updateFlags {
            $0 & NodeFlags.retired != 0
                ? $0 & ~NodeFlags.queued : $0 & ~(NodeFlags.dirty | NodeFlags.queued) | NodeFlags.refreshing
        }
    }

    /// Publishes the fraction the refresh computed, then clears `refreshing` (keeping a `dirty` set since).
    @inline(__always)
    func endRefresh(_ fraction: Double) {
        cachedFraction.store(fraction.bitPattern, ordering: .releasing)  // published by the next line
        flags.bitwiseAnd(~NodeFlags.refreshing, ordering: .sequentiallyConsistent)
    }

    /// The number of children in this node's dirty queue (for tests; not safe while it changes).
    var queuedChildCount: Int {
        var count = 0
        var entry = domainAndPart.queueTop
        while let node = UnownedNode(address: entry) {
            count += 1
            entry = node.nextInQueue
        }
        return count
    }

    /// A refresh's frame of this node: its credit sequence once no credit is in progress
    /// (`ChildSums.isSettled`; a credit between its two steps takes a few atomic operations and no lock),
    /// then its queue, drained (one exchange).
    @inline(__always)
    func drainedFrame() -> RefreshFrame {
        var sequence = domainAndPart.creditSequence
        while !ChildSums.isSettled(sequence) {
            CurrentThread.yield()
            sequence = domainAndPart.creditSequence
        }
        return RefreshFrame(node: UnownedNode(self), next: domainAndPart.takeQueue(), sequence: sequence)
    }

    /// This node's fraction from its counts and sums, read together: `nil` when its credit sequence moved
    /// since `sequence` (a child finished meanwhile: its credit may be in the count and its share still in
    /// the sum).
    @inline(__always)
    func settledFraction(since sequence: UInt64, _ scratch: borrowing RefreshScratch) -> Double? {
        let completed = completedStorage.load(ordering: .sequentiallyConsistent)
        let total = totalStorage.load(ordering: .sequentiallyConsistent)
        let sums = domainAndPart.sums  // loaded once for both (none: no child ever, no sums, the sequence 0)
        let childUnits = sums?.total(scratch) ?? 0
        guard sums?.creditSequence ?? 0 == sequence else { return nil }
        return FractionMath.fraction(completed: completed, total: total, childUnits: childUnits)
    }

    /// Takes `child`, which finished or failed and retired, out of this node's summaries and sums, keeping
    /// `failedShare` of it (a failed child's share at failure) apart.
    func takeOut(_ child: ProgressNode, failedShare: Double, _ scratch: inout RefreshScratch) {
        leaveSummaries(of: child, &scratch)
        domainAndPart.remove(child, scratch)
        if failedShare > 0 { domainAndPart.partCreatingIfNone().addFailedShare(failedShare, scratch) }
    }

    /// The refresh itself (`scratch` is the domain lock's). Depth first over the dirty part of the tree: each node's
    /// queue is drained, its queued children are refreshed (each cleared *before* its counts are read, see
    /// the top of this file) and recorded in its sums, then its own fraction is computed from its counts and
    /// sums, read between two equal values of its credit sequence.
    ///
    /// A drained queue is followed through its `queueNext` links, one child at a time, rather than copied
    /// into a buffer: a read after a million children changed needs no 8 MB list of them. The link of a
    /// child is read before its `queued` bit is cleared (`takeFromQueue`): only the push that sets `queued`
    /// writes `queueNext`, so the rest of the drained chain cannot change while it is followed. Each node in
    /// it is alive: attached (its parent's table or fresh stack holds it) or retired (the queue holds a
    /// reference to it, handed over by `retire`).
    ///
    /// Re-entrant: a refresh that lets a finished child leave its summaries refreshes that child's subtree
    /// first (`leaveSummaries`), on the frames above its own, and returns when they are done.
    func refreshDirtySubtree(_ scratch: inout RefreshScratch) -> Double {
        // `dirty` replaced by `refreshing` (and, for a node taken from its parent's queue, `queued` too: see
        // `takeFromQueue`): from here on an update marks this node again (and queues it again), and a clean
        // read waits for `endRefresh`. Before the counts are read (see the top of this file). The node a read
        // starts from keeps `queued`: it may sit in its parent's queue.
        _ = updateFlags { $0 & ~NodeFlags.dirty | NodeFlags.refreshing }
        let base = scratch.frames.count
        scratch.frames.append(drainedFrame())
        while true {
            let last = scratch.frames.count - 1
            let top = scratch.frames[last]
            if let child = UnownedNode(address: top.next) {
                let (next, old) = child.takeFromQueue()  // the link read before `queued` is cleared
                scratch.frames[last].next = next
                if old & NodeFlags.retired != 0 {
                    // Finished and credited, or failed: it leaves the summaries, its share leaves the sum (a
                    // failed child's share at failure stays, apart), and the queue's reference goes.
                    top.node.takeOutRetired(child, &scratch)
                    scratch.released.append(child.takeRetained())
                } else {
                    scratch.frames.append(child.drainedFrame())
                }
                continue
            }
            // Every queued child is recorded: the node's fraction, from counts and sums read together. If a
            // child finished meanwhile, its credit retired it into the queue: drain again, and read again.
            guard let fraction = top.node.settledFraction(since: top.sequence, scratch) else {
                scratch.frames[last] = top.node.drainedFrame()
                continue
            }
            scratch.frames.removeLast()
            top.node.endRefresh(fraction)
            guard scratch.frames.count > base, let below = scratch.frames.last else { return fraction }
            below.node.recordInSums(top.node, fraction: fraction, &scratch)
        }
    }
}

/// One level of the dirty subtree being refreshed.
struct RefreshFrame {
    let node: UnownedNode
    /// The next child of the node's drained queue still to visit (0: none left), linked by `queueNext`.
    var next: UInt
    /// The node's credit sequence when its queue was drained.
    var sequence: UInt64
}
