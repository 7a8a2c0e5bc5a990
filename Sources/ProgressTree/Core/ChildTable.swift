/// The attached, unfinished children of one node, with the weighted sum of their partial progress.
///
/// Children keep their insertion order (renderers and `description` list them in the order they were
/// added). Removal leaves a hole that is compacted away once holes outnumber live children, so removal is
/// O(1) amortized and memory stays proportional to the live children, however many have come and gone.
///
/// Each child records its own slot in `ProgressNode.slotInParent`; the table updates it when it moves a
/// child. Only the owning node's lock guards the table and those slot numbers.
struct ChildTable {
    struct Entry {
        let node: ProgressNode
        /// The share of the parent's `totalUnitCount` this child stands for.
        let pendingUnitCount: Int64
        /// `pendingUnitCount × fraction` of the child when last refreshed: what it adds to the parent.
        var contribution: Double
    }

    private(set) var slots: [Entry?] = []
    private(set) var liveCount = 0
    /// Σ contribution over the live entries, in the parent's units.
    private(set) var contributionSum: Double = 0

    var isEmpty: Bool { liveCount == 0 }

    /// The live children in insertion order.
    var entries: some Sequence<Entry> { slots.lazy.compactMap { $0 } }

    mutating func insert(_ node: ProgressNode, pendingUnitCount: Int64) {
        node.slotInParent.store(slots.count, ordering: .relaxed)
        slots.append(Entry(node: node, pendingUnitCount: pendingUnitCount, contribution: 0))
        liveCount += 1
    }

    /// The entry of `node`, if `node` is a live child of this table.
    func slot(of node: ProgressNode) -> Int? {
        let slot = node.slotInParent.load(ordering: .relaxed)
        guard slot >= 0, slot < slots.count, let entry = slots[slot], entry.node === node else { return nil }
        return slot
    }

    func contains(_ node: ProgressNode) -> Bool { slot(of: node) != nil }

    /// Removes `node`, subtracting what it contributed. Returns the removed entry, or `nil` when `node`
    /// was not a live child.
    @discardableResult
    mutating func remove(_ node: ProgressNode) -> Entry? {
        guard let slot = slot(of: node), let entry = slots[slot] else { return nil }
        slots[slot] = nil
        liveCount -= 1
        node.slotInParent.store(-1, ordering: .relaxed)
        if liveCount == 0 {
            // Reset exactly: no rounding residue survives the last child.
            slots.removeAll(keepingCapacity: slots.count <= 64)
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
        liveCount = 0
        contributionSum = 0
        return nodes
    }

    /// Records the latest fractions of some children. When a large part of the children changed, the sum is
    /// recomputed from scratch, which costs no more than the updates themselves and removes any rounding
    /// drift that incremental updates accumulate.
    mutating func update(_ fractions: [(node: ProgressNode, fraction: Double)]) {
        var changed = 0
        for (node, fraction) in fractions {
            guard let slot = slot(of: node) else { continue }
            let contribution = Double(slots[slot]!.pendingUnitCount) * fraction
            contributionSum += contribution - slots[slot]!.contribution
            slots[slot]!.contribution = contribution
            changed += 1
        }
        if changed * 2 >= liveCount {
            contributionSum = entries.reduce(0) { $0 + $1.contribution }
        }
        if contributionSum < 0 { contributionSum = 0 }
    }

    private mutating func compact() {
        var compacted: [Entry?] = []
        compacted.reserveCapacity(liveCount)
        for case let entry? in slots {
            entry.node.slotInParent.store(compacted.count, ordering: .relaxed)
            compacted.append(entry)
        }
        slots = compacted
    }
}
