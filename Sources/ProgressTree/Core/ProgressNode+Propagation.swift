import Synchronization

// How a change travels up the tree, and how a read brings cached sums up to date. This file holds the
// writers' side (marking); finishing is in ProgressNode+Finishing.swift, reads in ProgressNode+Refresh.swift,
// an update's own refresh of its path in ProgressNode+PathRefresh.swift.
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
        var signals: [any ChangeSignalReceiver]?
        if markDirty(collecting: &signals) {
            let walk = unretainedDomain.enterWalk()
            Self.markAncestors(of: UnownedNode(self), signals: &signals)
            walk.exit()
        }
        signals?.signal()  // after the walk: signalling may release the last reference to a node
    }

    /// Sets this node's `dirty` bit. If it was clear, collects the node's observers (when it has any) and
    /// returns whether the node is attached, so that the caller marks the path above it
    /// (`markAncestors`); returns `false` when it was set already (somebody above knows) or the node has no
    /// parent.
    func markDirty(collecting signals: inout [any ChangeSignalReceiver]?) -> Bool {
        let old = flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent).oldValue
        if old & NodeFlags.dirty != 0 { return false }
        if old & NodeFlags.observed != 0 { collectObservers(into: &signals) }
        return old & NodeFlags.attached != 0
    }

    /// Appends this node's observations to `signals` (takes the node's lock: only for nodes flagged
    /// `observed`).
    func collectObservers(into signals: inout [any ChangeSignalReceiver]?) {
        guard let targets = state.withLock({ $0.observers.signalTargets }) else { return }
        if signals == nil { signals = targets } else { signals!.append(contentsOf: targets) }
    }

    /// Queues `start`, which has just been marked `dirty` and is attached, in its parent, marks the parent,
    /// and so on up to the first ancestor already marked. Collects the observers of every node it marks.
    /// Inside a walk: every parent reached stays allocated; no reference is taken or dropped.
    static func markAncestors(of start: UnownedNode, signals: inout [any ChangeSignalReceiver]?) {
        var child = start
        while let parent = child.parent {
            // Queue first, then mark: a refresh that drains the parent's queue before the push cleared the
            // parent's `dirty` first, so the mark below finds it clear and goes on up (the child is seen by
            // the next refresh); one that drains after it sees the child.
            child.enqueue(in: parent)
            let parentOld = parent.setFlags(NodeFlags.dirty)
            if parentOld & NodeFlags.dirty != 0 { return }
            if parentOld & NodeFlags.observed != 0 { parent.collectObservers(into: &signals) }
            if parentOld & NodeFlags.attached == 0 { return }
            child = parent
        }
    }

    /// Puts this node in `parent`'s dirty queue unless it is there already, or has retired (its last
    /// change is the finish, which the parent's credit reports).
    @inline(__always)
    func enqueue(in parent: UnownedNode) {
        let old = updateFlags {
            $0 & (NodeFlags.queued | NodeFlags.retired) == 0 ? $0 | NodeFlags.queued | NodeFlags.shared : nil
        }
        if old & (NodeFlags.queued | NodeFlags.retired) == 0 { parent.push(queued: self) }
    }
}
