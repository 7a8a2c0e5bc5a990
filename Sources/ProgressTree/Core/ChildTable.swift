/// The attached children of one node, in the order they were added, and those it holds after they finished
/// (see ProgressNode+HeldChildren.swift). Guarded by the node's lock.
///
/// The table holds the strong references that keep attached children alive (a parent retains its unfinished
/// children, as Foundation does); what the children contribute to the parent's fraction is kept apart, by the
/// refreshes (`ChildSums`). Removal leaves a hole that is compacted away once holes outnumber live children,
/// so removal is O(1) amortized and memory stays proportional to the live children, however many have come
/// and gone. Each child records its own slot (`ProgressNode.slotInParent`); the table updates it when it moves
/// a child.
struct ChildTable {
    /// One slot: a live child, or a hole (`owner == nil`) left by a child that finished.
    struct Entry {
        fileprivate(set) var owner: ProgressNode?
    }

    /// A live child, as the table hands it out.
    struct Child {
        let node: ProgressNode
    }

    private(set) var slots: [Entry] = []
    /// 32 bits, so that `NodeState` packs the link into the same word (the node stays in its malloc size class).
    private(set) var liveCount: Int32 = 0

    var isEmpty: Bool { liveCount == 0 }

    /// The children a reader of progress and shape sees, in insertion order: the live children but those
    /// held after they finished (see ProgressNode+HeldChildren.swift).
    var unfinishedEntries: some Sequence<Child> {
        entries.lazy.filter { !$0.node.isListedAsFinished }
    }

    /// Calls `body` with each child `unfinishedEntries` lists, in insertion order, as the table holds it:
    /// no `Child` is made, so no reference is counted per child (a start of a root's summaries visits every
    /// child once, under the node's lock, which keeps the table and its references as they are).
    func forEachUnfinished(_ body: (ProgressNode) -> Void) {
        for index in slots.indices {
            guard let node = slots[index].owner, !node.isListedAsFinished else { continue }
            body(node)
        }
    }

    /// The live children in insertion order, held ones included: what a control transition reaches.
    var entries: some Sequence<Child> {
        slots.lazy.compactMap { $0.owner.map(Child.init) }
    }

    /// Adds `node` (its `pendingInParent` is set).
    mutating func insert(_ node: ProgressNode) {
        UnownedNode(node).retain()
        insert(retained: UnownedNode(node))
    }

    /// Adds `node`, taking over the reference the caller retained for the table.
    mutating func insert(retained node: UnownedNode) {
        node.setSlotInParent(slots.count)
        slots.append(Entry(owner: node.takeRetained()))
        liveCount += 1
        checkInvariants(afterRemoval: false)
    }

    /// Removes `node`; returns `false` when it was not a live child. The caller holds `node`, so the
    /// reference dropped here is never the last one.
    @discardableResult
    mutating func remove(_ node: ProgressNode) -> Bool {
        // The slot the node records, if it is this table's and holds the node.
        let slot = node.slotInParent
        guard slot >= 0, slot < slots.count, slots[slot].owner === node else { return false }
        slots[slot].owner = nil
        liveCount -= 1
        node.setSlotInParent(-1)
        // Trailing holes go at once (a child that comes and goes alone costs no compaction).
        while let last = slots.last, last.owner == nil { slots.removeLast() }
        if liveCount == 0 {
            if slots.capacity > 64 { slots = [] }
        } else if slots.count > 32 && Int(liveCount) * 2 < slots.count {
            compact()
        }
        checkInvariants()
        return true
    }

    /// Empties the table and returns the nodes it held: for a node going away (`ProgressNode.deinit`).
    mutating func removeAllNodes() -> [ProgressNode] {
        let nodes = slots.compactMap(\.owner)
        self = ChildTable()
        return nodes
    }

    /// Closes the holes, in place, keeping the order.
    private mutating func compact() {
        var newSlot = 0
        for index in slots.indices where slots[index].owner != nil {
            if newSlot != index { slots.swapAt(newSlot, index) }  // the hole moves back; no reference count changes
            slots[newSlot].owner!.setSlotInParent(newSlot)
            newSlot += 1
        }
        slots.removeLast(slots.count - newSlot)
        checkInvariants(whole: true)
    }

    /// The table's invariants, one line each, empty when they hold: each live child records its slot, the
    /// live count is the live slots', the last slot is live (trailing holes go at once), and holes outnumber
    /// live children only in a table of at most 32 slots (otherwise the removal that made them compacts: an
    /// insert does not, so after one it may hold more, and `afterRemoval: false` leaves that out).
    func violations(afterRemoval: Bool = true) -> [String] {
        var found: [String] = []
        var live = 0
        for (slot, entry) in slots.enumerated() {
            guard let node = entry.owner else { continue }
            live += 1
            if node.slotInParent != slot { found.append("the child in slot \(slot) records slot \(node.slotInParent)") }
        }
        if live != liveCount { found.append("its table counts \(liveCount) live children and holds \(live)") }
        if slots.last.map({ $0.owner == nil }) == true { found.append("its table ends with a hole") }
        if afterRemoval && slots.count > 32 && live * 2 < slots.count {
            found.append("its table of \(slots.count) slots holds \(live) children: not compacted")
        }
        return found
    }

    /// After each change (PROGRESSTREE_INTERNAL_CHECKS): all of `violations()` for a table of at most 64 slots
    /// or after a compaction (O(slots), as the compaction); otherwise what is O(1): the count, and the last
    /// slot live and knowing its slot.
    @inline(__always)
    private func checkInvariants(whole: Bool = false, afterRemoval: Bool = true) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            liveCount >= 0 && Int(liveCount) <= slots.count
                && (slots.last.map { $0.owner?.slotInParent == slots.count - 1 } ?? true),
            "ProgressTree internal check failed: a table of \(slots.count) slots counts \(liveCount) children")
        if whole || slots.count <= 64, let first = violations(afterRemoval: afterRemoval).first {
            preconditionFailure("ProgressTree internal check failed: \(first)")
        }
        #endif
    }
}

extension ProgressNode {
    /// This node's slot in its parent's `ChildTable`, -1 when it has none: the word `freshNextOrSlot` while
    /// the node is off its parent's fresh stack. Under the parent's lock. (Read of a node still on a fresh
    /// stack, it is the stack's link, an address: no slot of any table, which `ChildTable` checks by the
    /// slot's owner.)
    var slotInParent: Int { Int(bitPattern: freshNextOrSlot.load(ordering: .relaxed)) }

    /// Records `slot` (-1: none) as this node's slot in its parent's `ChildTable`. Under the parent's lock,
    /// once the node is off its fresh stack.
    func setSlotInParent(_ slot: Int) { freshNextOrSlot.store(UInt(bitPattern: slot), ordering: .relaxed) }
}
