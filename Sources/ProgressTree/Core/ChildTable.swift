/// The attached, unfinished children of one node, with the weighted sum of their partial progress, and the
/// queue of those whose progress changed since the node was last refreshed.
///
/// Children keep their insertion order (renderers and `description` list them in the order they were
/// added). Removal leaves a hole that is compacted away once holes outnumber live children, so removal is
/// O(1) amortized and memory stays proportional to the live children, however many have come and gone.
///
/// Each child records its own slot in `ProgressNode.slotInParent`; the table updates it when it moves a
/// child. Only the owning node's lock guards the table and those slot numbers.
///
/// The dirty queue holds no reference to the children, neither strong (a finished child must not be kept
/// alive until the next read) nor weak (a weak reference gives every child a side table: an allocation,
/// and slow reference counting for its whole life). An entry names a slot and the attachment that occupied
/// it (`QueuedChild`); a child that finished and left the table, or a slot that was reused, no longer
/// matches and is skipped. The table itself holds each attached child strongly, so a matching entry always
/// leads to a live node.
struct ChildTable {
    /// One slot: a live child, or a hole (`id == 0`, no owner) left by a child that finished.
    ///
    /// Not optional, so that reading a field of a slot in place never copies the strong reference (a copy
    /// is a retain and a release of the child, atomic operations).
    struct Entry {
        /// The strong reference that keeps the attached child alive; `nil` in a hole.
        fileprivate(set) var owner: ProgressNode?
        /// The child's address, for identity checks that do not touch its reference count.
        fileprivate(set) var address: UnsafeMutableRawPointer?
        /// Unique within this table and never 0: tells this attachment from whatever occupied the slot
        /// before or after. 0 in a hole.
        fileprivate(set) var id: UInt64
        /// The share of the parent's `totalUnitCount` this child stands for.
        fileprivate(set) var pendingUnitCount: Int64
        /// `pendingUnitCount × fraction` of the child when last refreshed: what it adds to the parent.
        fileprivate(set) var contribution: Double

        static var hole: Entry { Entry(owner: nil, address: nil, id: 0, pendingUnitCount: 0, contribution: 0) }
    }

    /// A live child, as the table hands it out.
    struct Child {
        let node: ProgressNode
        let pendingUnitCount: Int64
    }

    /// A child in the dirty queue: its slot and the id of its entry, checked when the queue is read.
    struct QueuedChild {
        var slot: Int
        let id: UInt64
    }

    private(set) var slots: [Entry] = []
    private(set) var liveCount = 0
    /// Σ contribution over the live entries, in the parent's units.
    private(set) var contributionSum: Double = 0
    /// The largest contribution that has been part of `contributionSum` since it was last summed from
    /// scratch. Adding a huge contribution rounds small ones away; subtracting it later leaves a sum far
    /// below this value, which is the sign that the sum must be summed again (see `keepSumExact()`).
    private var largestContribution: Double = 0
    /// Incremental changes to `contributionSum` since it was last summed from scratch.
    private var incrementalSteps = 0
    private var nextID: UInt64 = 0
    /// Children whose progress changed since this node was last refreshed (each at most once, guarded by
    /// the child's `isQueuedInParent`). May hold entries of children that have finished since; they are
    /// skipped.
    private var dirty: [QueuedChild] = []

    var isEmpty: Bool { liveCount == 0 }

    /// The number of entries in the dirty queue, stale ones included (for tests).
    var queuedCount: Int { dirty.count }

    /// The live children in insertion order.
    var entries: some Sequence<Child> {
        slots.lazy.filter { $0.id != 0 }.map { Child(node: $0.owner!, pendingUnitCount: $0.pendingUnitCount) }
    }

    /// Adds `node`; `queued` also puts it in the dirty queue (its `isQueuedInParent` must be set).
    mutating func insert(_ node: ProgressNode, pendingUnitCount: Int64, queued: Bool) {
        let slot = slots.count
        node.slotInParent.store(slot, ordering: .relaxed)
        nextID += 1
        slots.append(
            Entry(
                owner: node, address: Unmanaged.passUnretained(node).toOpaque(), id: nextID,
                pendingUnitCount: pendingUnitCount, contribution: 0))
        liveCount += 1
        if queued { appendDirty(QueuedChild(slot: slot, id: nextID)) }
    }

    /// The entry of `node`, if `node` is a live child of this table.
    func slot(of node: ProgressNode) -> Int? { slot(of: Unmanaged.passUnretained(node)) }

    func slot(of node: Unmanaged<ProgressNode>) -> Int? {
        let slot = node._withUnsafeGuaranteedRef { $0.slotInParent.load(ordering: .relaxed) }
        guard slot >= 0, slot < slots.count, slots[slot].address == node.toOpaque() else { return nil }
        return slot
    }

    func contains(_ node: ProgressNode) -> Bool { slot(of: node) != nil }

    /// Whether a queue entry still names a live entry.
    private func matches(_ queued: QueuedChild) -> Bool {
        queued.slot < slots.count && slots[queued.slot].id == queued.id
    }

    // MARK: The dirty queue

    /// Queues `node` for the next refresh, if it is still a live child (one that finished meanwhile has
    /// nothing left to report). The caller has set its `isQueuedInParent`.
    mutating func enqueueDirty(_ node: ProgressNode) {
        guard let slot = slot(of: node) else { return }
        appendDirty(QueuedChild(slot: slot, id: slots[slot].id))
    }

    /// Keeps the queue proportional to the live children even when nobody reads this node while many
    /// children come and go: stale entries are dropped once they could make up half of it.
    private mutating func appendDirty(_ queued: QueuedChild) {
        if dirty.count >= 16 && dirty.count >= 2 * liveCount {
            var kept = 0
            for index in dirty.indices where matches(dirty[index]) {
                dirty[kept] = dirty[index]
                kept += 1
            }
            dirty.removeLast(dirty.count - kept)
        }
        dirty.append(queued)
    }

    /// Moves the queued children that are still attached to the end of `nodes`, last queued first (strong
    /// references, taken under this node's lock, so each is alive when taken) and empties the queue,
    /// keeping its capacity. Returns whether it added any.
    mutating func takeDirty(into nodes: inout [ProgressNode]) -> Bool {
        guard !dirty.isEmpty else { return false }
        let count = nodes.count
        while let queued = dirty.popLast() {
            if matches(queued) { nodes.append(slots[queued.slot].owner!) }
        }
        return nodes.count > count
    }

    // MARK: Removing

    /// Removes `node`, subtracting what it contributed. Returns `false` when `node` was not a live child.
    /// Its queue entry, if any, is dropped when it is the last one (the usual case: the child was queued by
    /// its own last update); otherwise it is left to be skipped. The caller holds `node`, so the table's
    /// reference dropped here is never the last one.
    @discardableResult
    mutating func remove(_ node: ProgressNode) -> Bool {
        guard let slot = slot(of: node) else { return false }
        let id = slots[slot].id
        let contribution = slots[slot].contribution
        slots[slot] = .hole
        liveCount -= 1
        node.slotInParent.store(-1, ordering: .relaxed)
        if let last = dirty.last, last.slot == slot, last.id == id { dirty.removeLast() }
        // Trailing holes go at once (a child that comes and goes alone costs no compaction); an entry
        // naming a slot beyond the end is stale, and a new child there gets a new id.
        while let last = slots.last, last.id == 0 { slots.removeLast() }
        if liveCount == 0 {
            // Reset exactly: no rounding residue survives the last child, and no queue entry can match.
            if slots.capacity > 64 { slots = [] }
            if dirty.capacity > 64 { dirty = [] } else if !dirty.isEmpty { dirty.removeAll(keepingCapacity: true) }
            resetSum()
        } else {
            contributionSum -= contribution
            incrementalSteps += 1
            keepSumExact()
            if slots.count > 32 && liveCount * 2 < slots.count { compact() }
        }
        return true
    }

    /// Empties the table and returns the nodes it held: for a node going away (`ProgressNode.deinit`).
    mutating func removeAllNodes() -> [ProgressNode] {
        guard liveCount > 0 else { return [] }
        let nodes = slots.compactMap(\.owner)
        slots = []
        dirty = []
        liveCount = 0
        resetSum()
        return nodes
    }

    /// Records the latest fractions of some children. A child that left the table meanwhile is skipped.
    ///
    /// The sum is kept incrementally (O(changed children)) only where that is exact enough: a table of
    /// few children, or one where a large part of the children changed, is summed from scratch, which
    /// costs no more than the updates themselves; otherwise `keepSumExact()` sums again when rounding
    /// could have swallowed a contribution.
    mutating func update(_ fractions: ArraySlice<RefreshResult>) {
        var changed = 0
        for result in fractions {
            guard let slot = slot(of: result.node) else { continue }
            let contribution = Double(slots[slot].pendingUnitCount) * result.fraction
            contributionSum += contribution - slots[slot].contribution
            slots[slot].contribution = contribution
            if contribution > largestContribution { largestContribution = contribution }
            changed += 1
        }
        incrementalSteps += changed
        if changed * 2 >= liveCount || liveCount <= Self.alwaysSummedCount {
            sumFromScratch()
        } else {
            keepSumExact()
        }
    }

    /// Tables with at most this many children are summed from scratch on every update: exact sums for the
    /// common small trees, at the cost of a handful of additions.
    private static let alwaysSummedCount = 16

    /// Sums the contributions again when the incremental sum may be wrong by more than rounding in its
    /// last bits: when it fell far below the largest contribution it held (a huge contribution came and
    /// went, and took the small ones added meanwhile with it, or contributions that went back to 0 left a
    /// residue), or after many incremental steps (drift). Each case costs O(live children) and needs as
    /// many changes to happen again, so updates stay O(1) amortized.
    private mutating func keepSumExact() {
        if contributionSum < largestContribution * 0x1p-20 || incrementalSteps > liveCount + 1_024 {
            sumFromScratch()
        } else if contributionSum < 0 {
            contributionSum = 0
        }
    }

    /// The sum of no children: exactly 0, with nothing to recompute.
    private mutating func resetSum() {
        contributionSum = 0
        largestContribution = 0
        incrementalSteps = 0
    }

    private mutating func sumFromScratch() {
        var sum = 0.0
        var largest = 0.0
        for index in slots.indices {  // 0 in the holes
            let contribution = slots[index].contribution
            sum += contribution
            if contribution > largest { largest = contribution }
        }
        contributionSum = sum
        largestContribution = largest
        incrementalSteps = 0
    }

    /// Closes the holes, in place, keeping the order. The slots of the queued children change, so the
    /// queue's stale entries are dropped first and its live ones then moved to their children's new slots
    /// (ids do not change).
    private mutating func compact() {
        var kept = 0
        for index in dirty.indices where matches(dirty[index]) {
            dirty[kept] = dirty[index]
            kept += 1
        }
        dirty.removeLast(dirty.count - kept)
        var newSlots = [Int](repeating: -1, count: slots.count)
        var newSlot = 0
        for index in slots.indices where slots[index].id != 0 {
            if newSlot != index {
                slots.swapAt(newSlot, index)  // the hole moves back; no reference count changes
            }
            slots[newSlot].owner!.slotInParent.store(newSlot, ordering: .relaxed)
            newSlots[index] = newSlot
            newSlot += 1
        }
        slots.removeLast(slots.count - newSlot)
        for index in dirty.indices { dirty[index].slot = newSlots[dirty[index].slot] }
    }
}

/// A child's refreshed fraction, waiting to be recorded in its parent's table. The node is not retained:
/// the refresh that makes these holds each node it visits until the domain lock is released.
struct RefreshResult {
    let node: Unmanaged<ProgressNode>
    let fraction: Double
}
