#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import Synchronization

// How a change travels up the tree, and how a read brings cached sums up to date.
//
// Writers (the hot path) never walk the tree: a change sets the node's `dirty` bit and, only if that bit was
// clear, queues the node in its parent's dirty queue (a lock-free intrusive stack) and repeats one level up,
// without taking a lock. The walk stops at the first ancestor already dirty, so a burst of updates between
// two reads costs one atomic load each.
//
// Readers (`fractionCompleted`) of a clean node load its cached fraction: two atomic loads, no lock.
// Otherwise they take their tree's refresh domain lock (`RefreshDomain`), then walk down only the dirty part
// of the tree: for each queued child they clear its bits *before* reading its counts, so a concurrent writer
// either is seen by this read or re-queues the child for the next one. No update is ever lost. The sums of
// the children's progress (`ChildSums`) belong to the domain lock: a read takes no node lock at all.
//
// What a read sees: every update that returned before the read began, except while another update to the
// same part of the tree is still marking the path. A writer that stops at an ancestor already dirty relies
// on whoever set that bit to queue the ancestor one level up; if that other writer is still between the
// two steps, a read of the root does not reach the ancestor yet. The update then shows in the first read
// after the other writer returns, and that writer signals the root's observers, so an observer still gets
// it.
//
// Why a clean read is right: a refresh replaces `dirty` by `refreshing` before it reads the counts, and
// clears `refreshing` only after it stored the new `cachedFraction`. An update that returned before the read
// began left `dirty` set, or a refresh cleared it after the update's store and so computed a fraction that
// includes it. A reader that finds neither bit therefore loads a fraction at least as new as that update.
// Refreshes of one tree are serialized by its domain lock, so a later store is never older.
//
// Memory order. Two exchanges are Dekker-style (each side stores, then loads what the other stores) and need
// sequential consistency on both sides: (1) an update stores its count, then loads `flags`; a refresh
// clears bits of `flags`, then loads the counts; (2) a walk registers in its domain's counter, then loads
// `parentAddress`; a parent going away clears `parentAddress`, then loads the counters. Acquire/release would
// let each side miss the other's store. The read-modify-writes on `flags`, the queues and the credit
// sequence are sequentially consistent too: they take part in (1), and on the processors measured here a
// read-modify-write costs the same at any ordering. Relaxed or acquire/release where the argument is local:
// `cachedFraction` is stored before the read-modify-write that clears `refreshing` (which publishes it) or,
// by an update's path refresh, with a releasing store under the domain lock, and a clean read loads it after
// loading `flags`; `queueNext` is published by the push's compare-and-exchange; `ChildSums` fields belong to
// the domain lock.

extension ProgressNode {
    // MARK: Writers

    /// Called after every change of the counts: finishes (detaches) the node if it just finished, then
    /// tells the ancestors. Iterative, so finishing a 10,000-deep chain at once does not recurse.
    @inline(__always)
    func countsDidChange(completed: Int64, total: Int64) {
        if FractionMath.isFinished(completed: completed, total: total) {
            if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.attached != 0 {
                finishAndCreditAncestors()
                return
            }
            leavePauseIfFinishedWhilePaused()
        }
        markChanged()
    }

    /// A finished node is not paused (`pause()` skips it): one that finishes while paused leaves the pause
    /// as `resume()` does, so that its checkpoints return and its `resumingHandler` runs. One atomic load
    /// when not paused.
    @inline(__always)
    func leavePauseIfFinishedWhilePaused() {
        if isPaused { resume() }
    }

    /// Marks this node, and the path above it up to the first ancestor already marked, as changed.
    /// Signals observers of every node it newly marks.
    @inline(__always)
    func markChanged() {
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.dirty != 0 { return }
        markChangedSlowPath()
    }

    @inline(never)
    private func markChangedSlowPath() {
        // Someone reads this tree between updates: bring the path up to date now, if nobody holds the lock.
        if refreshPathOnUpdate() { return }
        let old = flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent).oldValue
        if old & NodeFlags.dirty != 0 { return }
        var signals = old & NodeFlags.observed != 0 ? observerTargets() : nil
        if old & NodeFlags.attached != 0, let domain = domainStorage.unretained() {
            let walk = domain._withUnsafeGuaranteedRef { $0.enterWalk() }
            Self.markAncestors(of: .passUnretained(self), signals: &signals)
            walk.exit()
        }
        signals?.signal()  // after the walk: signalling may release the last reference to a node
    }

    /// Queues `start`, which has just been marked `dirty` and is attached, in its parent, marks the parent,
    /// and so on up to the first ancestor already marked. Collects the observers of every node it marks.
    /// Inside a walk: every parent reached stays allocated; no reference is taken or dropped.
    static func markAncestors(of start: Unmanaged<ProgressNode>, signals: inout [any ChangeSignalReceiver]?) {
        var child = start
        while true {
            let address = child._withUnsafeGuaranteedRef { $0.parentAddress.load(ordering: .sequentiallyConsistent) }
            guard let pointer = UnsafeRawPointer(bitPattern: address) else { return }
            let parent = Unmanaged<ProgressNode>.fromOpaque(pointer)
            // Queue first, then mark: a refresh that drains the parent's queue before the push cleared the
            // parent's `dirty` first, so the mark below finds it clear and goes on up (the child is seen by
            // the next refresh); one that drains after it sees the child.
            child._withUnsafeGuaranteedRef { $0.enqueue(in: parent) }
            let parentOld = parent._withUnsafeGuaranteedRef {
                $0.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent).oldValue
            }
            if parentOld & NodeFlags.dirty != 0 { return }
            if parentOld & NodeFlags.observed != 0 {
                let targets = parent._withUnsafeGuaranteedRef { $0.observerTargets() }
                if let targets {
                    if signals == nil { signals = targets } else { signals!.append(contentsOf: targets) }
                }
            }
            if parentOld & NodeFlags.attached == 0 { return }
            child = parent
        }
    }

    /// The observations to signal, read under the lock (only for nodes flagged `observed`).
    func observerTargets() -> [any ChangeSignalReceiver]? {
        state.withLock { $0.observers.signalTargets }
    }

    /// Puts this node in `parent`'s dirty queue unless it is there already, or has retired (its last
    /// change is the finish, which the parent's credit reports).
    @inline(__always)
    func enqueue(in parent: Unmanaged<ProgressNode>) {
        var current = flags.load(ordering: .sequentiallyConsistent)
        while current & (NodeFlags.queued | NodeFlags.retired) == 0 {
            let (exchanged, original) = flags.compareExchange(
                expected: current, desired: current | NodeFlags.queued,
                successOrdering: .sequentiallyConsistent, failureOrdering: .sequentiallyConsistent)
            if exchanged {
                push(onto: parent)
                return
            }
            current = original
        }
    }

    /// Pushes this node onto `parent`'s dirty queue; the caller set `queued`.
    @inline(__always)
    private func push(onto parent: Unmanaged<ProgressNode>) {
        let me = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        parent._withUnsafeGuaranteedRef { parent in
            var head = parent.queueHead.load(ordering: .relaxed)
            while true {
                queueNext.store(head, ordering: .relaxed)
                let (exchanged, original) = parent.queueHead.compareExchange(
                    expected: head, desired: me, successOrdering: .sequentiallyConsistent, failureOrdering: .relaxed)
                if exchanged { return }
                head = original
            }
        }
    }

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
    private func finishAndCreditAncestors() {
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
            guard state.link.detach() else { return nil }
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
        sums.creditSequence.add(1, ordering: .sequentiallyConsistent)
        let old = child.flags.bitwiseOr(NodeFlags.retired | NodeFlags.queued, ordering: .sequentiallyConsistent).oldValue
        _ = Unmanaged.passRetained(child)  // the queue's reference, released by the refresh that drains it
        if old & NodeFlags.queued == 0 {
            child.push(onto: me)
        } else {
            // A walk may still be pushing it: wait for the walks in progress (they never block), so that the
            // child is in the queue before the sequence settles.
            domain._withUnsafeGuaranteedRef { $0.representative.waitForWalks() }
        }
        let completed = pending == 0 ? completedStorage.load(ordering: .sequentiallyConsistent) : addToCompleted(pending)
        sums.creditSequence.add(1, ordering: .sequentiallyConsistent)
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

    // MARK: Readers

    /// Returns this node's fraction: the cached one when nothing changed below it since the last refresh (two
    /// atomic loads), otherwise the one computed by bringing the cached sums of its dirty subtree up to date.
    @inline(__always)
    func refresh() -> Double {
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.stale == 0 {
            let fraction = Double(bitPattern: cachedFraction.load(ordering: .sequentiallyConsistent))
            if let domain = domainStorage.unretained() { RefreshDomain.noteRead(domain) }
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
    private func refreshDirty() -> Double {
        // Retired children drained by the read hold the queue's reference, released after the domain lock so
        // that no `deinit` (nor the user code a child holds: handlers, user info) runs under it.
        var released: [ProgressNode] = []
        let domain = unretainedDomain
        RefreshDomain.noteRead(domain)
        let fraction = domain._withUnsafeGuaranteedRef { $0.withRepresentativeLock { scratch -> Double in
            let fraction = refreshDirtySubtree(&scratch)
            if !scratch.released.isEmpty { swap(&released, &scratch.released) }
            return fraction
        } }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
        return fraction
    }

    /// Releases the retired children a refresh drained, outside the domain lock, then hands the emptied
    /// buffer back to the domain, so that later refreshes allocate nothing.
    private func releaseOutsideTheLock(_ released: inout [ProgressNode]) {
        while released.popLast() != nil {}  // keeps the capacity
        unretainedDomain._withUnsafeGuaranteedRef { $0.withRepresentativeLock { scratch in
            if scratch.released.capacity < released.capacity { swap(&scratch.released, &released) }
        } }
    }

    /// Replaces `dirty` (and, for a node taken from its parent's queue, `queued`) by `refreshing`: from here
    /// on an update marks this node again (and queues it again), and a clean read waits for `endRefresh`.
    /// Before the counts are read (see the top of this file). Returns the flags as they were. Under the
    /// domain lock. The node a read starts from keeps `queued`: it may sit in its parent's queue.
    @inline(__always)
    private func beginRefresh(takenFromQueue: Bool = false) -> UInt32 {
        let cleared = takenFromQueue ? NodeFlags.dirty | NodeFlags.queued : NodeFlags.dirty
        var current = flags.load(ordering: .sequentiallyConsistent)
        while true {
            let desired = current & ~cleared | NodeFlags.refreshing
            let (exchanged, original) = flags.compareExchange(
                expected: current, desired: desired,
                successOrdering: .sequentiallyConsistent, failureOrdering: .sequentiallyConsistent)
            if exchanged { return current }
            current = original
        }
    }

    /// A queued node taken from its parent's queue: `beginRefresh()`, or for a retired node only the end of
    /// `queued`. Returns the flags as they were.
    @inline(__always)
    private func takeFromQueue() -> UInt32 {
        let current = flags.load(ordering: .sequentiallyConsistent)
        if current & NodeFlags.retired != 0 {
            return flags.bitwiseAnd(~NodeFlags.queued, ordering: .sequentiallyConsistent).oldValue
        }
        return beginRefresh(takenFromQueue: true)
    }

    /// Publishes the fraction the refresh computed, then clears `refreshing` (keeping a `dirty` set since).
    @inline(__always)
    private func endRefresh(_ fraction: Double) {
        cachedFraction.store(fraction.bitPattern, ordering: .releasing)  // published by the next line
        flags.bitwiseAnd(~NodeFlags.refreshing, ordering: .sequentiallyConsistent)
    }

    /// The number of children in this node's dirty queue (for tests; not safe while it changes).
    var queuedChildCount: Int {
        var count = 0
        var entry = queueHead.load(ordering: .sequentiallyConsistent)
        while let pointer = UnsafeRawPointer(bitPattern: entry) {
            count += 1
            entry = Unmanaged<ProgressNode>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.queueNext.load(ordering: .relaxed) }
        }
        return count
    }

    /// Takes this node's whole dirty queue, appending it to `nodes`; returns whether it added any.
    @inline(__always)
    private func drainQueue(into nodes: inout [Unmanaged<ProgressNode>]) -> Bool {
        var entry = queueHead.exchange(0, ordering: .sequentiallyConsistent)
        guard entry != 0 else { return false }
        while let pointer = UnsafeRawPointer(bitPattern: entry) {
            let node = Unmanaged<ProgressNode>.fromOpaque(pointer)
            entry = node._withUnsafeGuaranteedRef { $0.queueNext.load(ordering: .relaxed) }
            nodes.append(node)
        }
        return true
    }

    /// The credit sequence once no credit is in progress (an odd value: a credit between its two steps,
    /// which take a few atomic operations and no lock).
    @inline(__always)
    func settledCreditSequence() -> UInt64 {
        while true {
            let sequence = creditSequenceNow()
            if sequence & 1 == 0 { return sequence }
            sched_yield()
        }
    }

    /// The credit sequence of this node's sums, 0 before they exist (their creation keeps it even).
    @inline(__always)
    func creditSequenceNow() -> UInt64 {
        guard let sums = childSums.unretained() else { return 0 }
        return sums._withUnsafeGuaranteedRef { $0.creditSequence.load(ordering: .sequentiallyConsistent) }
    }

    /// The refresh itself, under the domain lock. Depth first over the dirty part of the tree: each node's
    /// queue is drained, its queued children are refreshed (each cleared *before* its counts are read, see
    /// the top of this file) and recorded in its sums, then its own fraction is computed from its counts and
    /// sums, read between two equal values of its credit sequence.
    private func refreshDirtySubtree(_ scratch: inout RefreshScratch) -> Double {
        _ = beginRefresh()
        scratch.frames.append(
            RefreshFrame(
                node: .passUnretained(self), pendingBase: scratch.pending.count,
                sequence: settledCreditSequence()))
        _ = drainQueue(into: &scratch.pending)
        while true {
            let top = scratch.frames[scratch.frames.count - 1]
            let node = top.node
            if scratch.pending.count > top.pendingBase {
                let child = scratch.pending.removeLast()
                let old = child._withUnsafeGuaranteedRef { $0.takeFromQueue() }
                if old & NodeFlags.retired != 0 {
                    // Finished and credited, or failed: its share leaves the sum (a failed child's share at
                    // failure stays, apart), and the queue's reference goes.
                    node._withUnsafeGuaranteedRef { node in
                        node.childSums.unretained()?._withUnsafeGuaranteedRef { $0.remove(child) }
                        let failedShare = child._withUnsafeGuaranteedRef { $0.takeShareAtFailure() }
                        if failedShare > 0 { node.childSumsForRefresh.addFailedShare(failedShare) }
                    }
                    scratch.released.append(child.takeRetainedValue())
                    continue
                }
                let sequence = child._withUnsafeGuaranteedRef { $0.settledCreditSequence() }
                scratch.frames.append(RefreshFrame(node: child, pendingBase: scratch.pending.count, sequence: sequence))
                _ = child._withUnsafeGuaranteedRef { $0.drainQueue(into: &scratch.pending) }
                continue
            }
            // Every queued child is recorded: the node's fraction, from counts and sums read together.
            let (fraction, settled) = node._withUnsafeGuaranteedRef { node -> (Double, Bool) in
                let completed = node.completedStorage.load(ordering: .sequentiallyConsistent)
                let total = node.totalStorage.load(ordering: .sequentiallyConsistent)
                let childUnits = node.childSums.unretained()?._withUnsafeGuaranteedRef { $0.total } ?? 0
                let sequence = node.creditSequenceNow()
                guard sequence == top.sequence else { return (0, false) }
                return (FractionMath.fraction(completed: completed, total: total, childUnits: childUnits), true)
            }
            if !settled {
                // A child finished meanwhile: its credit may be in the count and its share still in the sum.
                // The credit retired it into the queue: drain again, and read again.
                scratch.frames[scratch.frames.count - 1].sequence = node._withUnsafeGuaranteedRef {
                    $0.settledCreditSequence()
                }
                _ = node._withUnsafeGuaranteedRef { $0.drainQueue(into: &scratch.pending) }
                continue
            }
            scratch.frames.removeLast()
            node._withUnsafeGuaranteedRef { $0.endRefresh(fraction) }
            guard let below = scratch.frames.last else { return fraction }
            below.node._withUnsafeGuaranteedRef { $0.recordInSums(node, fraction: fraction) }
        }
    }
}

/// The buffers of a refresh, kept in the domain lock between reads so that they keep their capacity.
/// Empty between reads.
struct RefreshScratch {
    /// Nodes still to visit: each frame's are at the end, above those of the frames below it. Each is
    /// alive: attached (its parent's table holds it) or retired (its parent's queue holds it).
    var pending: [Unmanaged<ProgressNode>] = []
    /// The nodes being refreshed, root first.
    var frames: [RefreshFrame] = []
    /// Retired children the refresh drained, released after the domain lock.
    var released: [ProgressNode] = []
}

/// One level of the dirty subtree being refreshed.
struct RefreshFrame {
    let node: Unmanaged<ProgressNode>
    /// Where this frame's children start in `RefreshScratch.pending`.
    let pendingBase: Int
    /// The node's credit sequence when its queue was drained.
    var sequence: UInt64
}
