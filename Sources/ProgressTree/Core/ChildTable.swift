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
    struct Entry {
        let node: ProgressNode
        /// Unique within this table: tells this attachment from whatever occupied the slot before or after.
        let id: UInt64
        /// The share of the parent's `totalUnitCount` this child stands for.
        let pendingUnitCount: Int64
        /// `pendingUnitCount × fraction` of the child when last refreshed: what it adds to the parent.
        var contribution: Double
    }

    /// A child in the dirty queue: its slot and the id of its entry, checked when the queue is read.
    struct QueuedChild {
        var slot: Int
        let id: UInt64
    }

    private(set) var slots: [Entry?] = []
    private(set) var liveCount = 0
    /// Σ contribution over the live entries, in the parent's units.
    private(set) var contributionSum: Double = 0
    private var nextID: UInt64 = 0
    /// Children whose progress changed since this node was last refreshed (each at most once, guarded by
    /// the child's `isQueuedInParent`). May hold entries of children that have finished since; they are
    /// skipped.
    private var dirty: [QueuedChild] = []

    var isEmpty: Bool { liveCount == 0 }

    /// The number of entries in the dirty queue, stale ones included (for tests).
    var queuedCount: Int { dirty.count }

    /// The live children in insertion order.
    var entries: some Sequence<Entry> { slots.lazy.compactMap { $0 } }

    /// Adds `node`; `queued` also puts it in the dirty queue (its `isQueuedInParent` must be set).
    mutating func insert(_ node: ProgressNode, pendingUnitCount: Int64, queued: Bool) {
        let slot = slots.count
        node.slotInParent.store(slot, ordering: .relaxed)
        nextID &+= 1
        slots.append(Entry(node: node, id: nextID, pendingUnitCount: pendingUnitCount, contribution: 0))
        liveCount += 1
        if queued { appendDirty(QueuedChild(slot: slot, id: nextID)) }
    }

    /// The entry of `node`, if `node` is a live child of this table.
    func slot(of node: ProgressNode) -> Int? {
        let slot = node.slotInParent.load(ordering: .relaxed)
        guard slot >= 0, slot < slots.count, let entry = slots[slot], entry.node === node else { return nil }
        return slot
    }

    func contains(_ node: ProgressNode) -> Bool { slot(of: node) != nil }

    /// The live entry a queue entry names, if it still names one.
    private func node(of queued: QueuedChild) -> ProgressNode? {
        guard queued.slot < slots.count, let entry = slots[queued.slot], entry.id == queued.id else { return nil }
        return entry.node
    }

    // MARK: The dirty queue

    /// Queues `node` for the next refresh, if it is still a live child (one that finished meanwhile has
    /// nothing left to report). The caller has set its `isQueuedInParent`.
    mutating func enqueueDirty(_ node: ProgressNode) {
        guard let slot = slot(of: node), let entry = slots[slot] else { return }
        appendDirty(QueuedChild(slot: slot, id: entry.id))
    }

    /// Keeps the queue proportional to the live children even when nobody reads this node while many
    /// children come and go: stale entries are dropped once they could make up half of it.
    private mutating func appendDirty(_ queued: QueuedChild) {
        if dirty.count >= 16 && dirty.count >= 2 * liveCount {
            let slots = slots
            dirty.removeAll { queued in
                queued.slot >= slots.count || slots[queued.slot]?.id != queued.id
            }
        }
        dirty.append(queued)
    }

    /// Moves the queued children that are still attached to the end of `nodes` (strong references, taken
    /// under this node's lock, so each is alive when taken) and empties the queue, keeping its capacity.
    /// Returns whether it added any.
    mutating func takeDirty(into nodes: inout [ProgressNode]) -> Bool {
        guard !dirty.isEmpty else { return false }
        let count = nodes.count
        for queued in dirty {
            if let node = node(of: queued) { nodes.append(node) }
        }
        dirty.removeAll(keepingCapacity: true)
        return nodes.count > count
    }

    // MARK: Removing

    /// Removes `node`, subtracting what it contributed. Returns the removed entry, or `nil` when `node`
    /// was not a live child. Its queue entry, if any, is dropped when it is the last one (the usual case:
    /// the child was queued by its own last update); otherwise it is left to be skipped.
    @discardableResult
    mutating func remove(_ node: ProgressNode) -> Entry? {
        guard let slot = slot(of: node), let entry = slots[slot] else { return nil }
        slots[slot] = nil
        liveCount -= 1
        node.slotInParent.store(-1, ordering: .relaxed)
        if let last = dirty.last, last.slot == slot, last.id == entry.id { dirty.removeLast() }
        if liveCount == 0 {
            // Reset exactly: no rounding residue survives the last child, and no queue entry can match.
            slots.removeAll(keepingCapacity: slots.count <= 64)
            dirty.removeAll(keepingCapacity: dirty.capacity <= 64)
            contributionSum = 0
        } else {
            contributionSum -= entry.contribution
            if slots.count > 32 && liveCount * 2 < slots.count { compact() }
        }
        return entry
    }

    /// Empties the table and returns the nodes it held: for a node going away (`ProgressNode.deinit`).
    mutating func removeAllNodes() -> [ProgressNode] {
        guard liveCount > 0 else { return [] }
        let nodes = entries.map(\.node)
        slots = []
        dirty = []
        liveCount = 0
        contributionSum = 0
        return nodes
    }

    /// Records the latest fractions of some children. When a large part of the children changed, the sum is
    /// recomputed from scratch, which costs no more than the updates themselves and removes any rounding
    /// drift that incremental updates accumulate. A child that left the table meanwhile is skipped.
    mutating func update(_ fractions: ArraySlice<RefreshResult>) {
        var changed = 0
        for result in fractions {
            guard let slot = slot(of: result.node.takeUnretainedValue()) else { continue }
            let contribution = Double(slots[slot]!.pendingUnitCount) * result.fraction
            contributionSum += contribution - slots[slot]!.contribution
            slots[slot]!.contribution = contribution
            changed += 1
        }
        if changed * 2 >= liveCount {
            contributionSum = entries.reduce(0) { $0 + $1.contribution }
        }
        if contributionSum < 0 { contributionSum = 0 }
    }

    /// Closes the holes. The slots of the queued children change, so the queue is rebuilt: its live
    /// entries are resolved to their nodes first, and take the nodes' new slots after.
    private mutating func compact() {
        // Strong references to live children (the table holds them too): releasing them below, under the
        // node's lock, never releases the last reference.
        let queuedNodes = dirty.compactMap { node(of: $0) }
        var compacted: [Entry?] = []
        compacted.reserveCapacity(liveCount)
        for case let entry? in slots {
            entry.node.slotInParent.store(compacted.count, ordering: .relaxed)
            compacted.append(entry)
        }
        slots = compacted
        dirty.removeAll(keepingCapacity: true)
        for node in queuedNodes {
            let slot = node.slotInParent.load(ordering: .relaxed)
            dirty.append(QueuedChild(slot: slot, id: slots[slot]!.id))
        }
    }
}

/// A child's refreshed fraction, waiting to be recorded in its parent's table. The node is not retained:
/// the refresh that makes these holds each node it visits until the refresh lock is released.
struct RefreshResult {
    let node: Unmanaged<ProgressNode>
    let fraction: Double
}
