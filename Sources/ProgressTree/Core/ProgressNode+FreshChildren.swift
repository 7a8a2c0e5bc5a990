import Synchronization

// Fresh children: a child created attached (`init(totalUnitCount:parent:pendingUnitCount:)`) joins its
// parent without the parent's lock, and a fresh child that finishes before a younger sibling joins leaves
// the same way. Create, attach, finish is how most work is split (a download per photo, a step per file),
// and the parent's lock taken twice per child was a third of that cycle.
//
// Invariants:
// - A fresh child is pushed once, onto its parent's `freshChildren` (a lock-free stack linked by
//   `freshNext`, which never changes after the push), and the stack holds one reference to it. (`freshNext`
//   is the word `freshNextOrSlot`, which is the child's table slot once the child is off the stack.) The stack's
//   top lives in the parent's `ChildSums` (its parent part), created here before the first push.
// - Under the parent's lock, `settleFreshChildren` takes the whole stack (one exchange) and moves it, oldest
//   first, into the `ChildTable`, with those references. Code that reads or changes the table settles first,
//   so the table holds every attached child in the order they were added (`addChild` settles before it
//   inserts).
// - A child leaves the stack either in a settle or by popping itself while it is on top
//   (`popFreshChild`: a compare-and-exchange from itself to its `freshNext`). The pop needs no lock: the top
//   can only be replaced by a push of a younger child or by a settle's exchange, and the child is never
//   pushed again, so finding itself on top means nothing below it changed. A child that is not on top takes
//   the parent's lock, settles, and leaves the table as before.
// - A fresh child counts in the parent's summaries (Summaries/) as any child does: a start of the parent's
//   summaries settles first, and a fresh child that may have a summary is marked changed (created with a
//   user info that describes files, or by its first value), so the refresh records it.
// - Cancelling and pausing reach a fresh child as they reach one in the table: the push and the
//   transition's settle are ordered by sequential consistency against the transition's change of the
//   parent's flags and the child's read of them (each side writes, then reads what the other writes), so
//   the transition lists the child or the child sees the parent's new state (or both, which is harmless).

extension ProgressNode {
    /// Adds `child`, in its initializer, to this node's fresh children. Nobody else has seen the child, so it
    /// cannot have a parent already nor be an ancestor of this node: no claim under its lock, no cycle walk.
    /// It has no progress yet, so it is not queued: its first update queues it. It gets this node's cancelled
    /// or paused state.
    ///
    /// `child` is passed unretained: its initializer holds it, and a retain and release around the call would
    /// cost two atomic operations. The stack takes its own reference, retained non-atomically
    /// (`retainUnpublished`: the push publishes the child).
    func attachFreshChild(_ child: UnownedNode, withPendingUnitCount pendingUnitCount: Int64) {
        // Before the child is reachable from here, so that a `deinit` of this node (once its creator lets go
        // of it) looks for children; and its summary, made of its children's from now on, is recorded anew
        // (`summaryChanged`, before the mark below).
        if flags.load(ordering: .relaxed) & NodeFlags.hasHadChildren == 0 {
            flags.bitwiseOr(NodeFlags.hasHadChildren | NodeFlags.summaryChanged, ordering: .relaxed)
        }
        // A parent has its domain before its first fresh child, so that the child can adopt it, and its parent
        // part, which holds the stack.
        _ = unretainedDomain
        retainUnpublished(child, childOf: self)
        domainAndPart.push(fresh: child)
        markChanged()
        let inherited = ControlFlags(rawValue: controlFlags.load(ordering: .sequentiallyConsistent))
        if !inherited.isEmpty { child.node.inheritControlState(inherited, from: self) }
    }

    /// Moves the fresh children into the table, oldest first, with the stack's references. Under this
    /// node's lock; one atomic load when there are none.
    @inline(__always)
    func settleFreshChildren(_ state: inout NodeState) {
        if domainAndPart.freshTop != 0 { moveFreshChildren(into: &state) }
    }

    @inline(never)
    private func moveFreshChildren(into state: inout NodeState) {
        // Reversed in place, oldest first, then inserted: no buffer. These nodes left the stack with the
        // exchange, so a pop of one of them now fails whatever `freshNext` it reads (the top is never it
        // again: a node is pushed once).
        var entry = domainAndPart.takeFresh()
        var oldestFirst: UInt = 0
        while let node = UnownedNode(address: entry) {
            entry = node.freshNext
            node.freshNext = oldestFirst
            oldestFirst = node.address
        }
        while let node = UnownedNode(address: oldestFirst) {
            // The link read before the insert, which writes the node's slot into the same word.
            oldestFirst = node.freshNext
            state.children.insert(retained: node)
        }
    }

    /// Takes all fresh children, with the stack's references, for a node going away (`deinit`).
    func takeFreshChildren(appendingTo nodes: inout [ProgressNode]) {
        var entry = domainAndPart.takeFresh()
        while let node = UnownedNode(address: entry) {
            entry = node.freshNext
            node.setSlotInParent(-1)  // off the stack, in no table
            nodes.append(node.takeRetained())
        }
    }

    /// Takes `child` off this node's fresh children if it is on top; returns whether it did (the caller then
    /// owns the stack's reference to it). No lock (see the top of this file).
    @inline(__always)
    func popFreshChild(_ child: ProgressNode) -> Bool {
        guard domainAndPart.popFresh(UnownedNode(child)) else { return false }
        child.setSlotInParent(-1)  // off the stack, in no table: only this thread reaches the word now
        return true
    }
}
