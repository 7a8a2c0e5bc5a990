// The failed children that left a node most recently, kept for writers of the wire format
// (`Docs/WireFormat.md`) and plain logs: a failed child leaves its parent's children at once, so a writer
// that walks the tree now and then would otherwise never see one that appeared and failed between two of
// its walks, nor the nodes below it that its failure cancelled.
//
// Invariants:
// - Recorded only by a failure, under the parent's lock, in the critical section that removes the child
//   from the parent's `ChildTable` (`fail(_:)`, `releaseChildThatFailedBeforeLinking(_:)`). So a walk that
//   lists the parent's children and then reads this list finds a failed child in one or the other, or
//   both: never in neither.
// - Nothing on the update path (advance, the count setters, finishing) reads or writes it. What it holds
//   is read on the failure path, with no lock held (`departure()`), after the failure cancelled the nodes
//   below the failing one.
// - Bounded: the last `capacity` failed children of the node, each with at most `descendantCapacity`
//   nodes below it; `count` says how many there ever were, so a reader that keeps its place (`since`)
//   learns how many it missed.
// - Values only, no strong reference: a failed child is released by its parent as before.

extension ProgressNode {
    /// A failed child as it left this node: enough to write its line of the wire format after it is gone,
    /// and the lines of the nodes below it.
    package struct FailedChild: Sendable {
        /// The child, while something else still holds it (a writer that named it holds it until it has
        /// written its final line).
        package weak var node: ProgressNode?
        /// Its line as it left (`wireRecord`, read with no lock held), without ids: `id` 0, no parent.
        package let record: ProgressWireRecord
        /// The nodes below it as its failure left them, in preorder (a parent before its children): the
        /// nodes it cancelled (its subtree) and the failed children it kept itself, with what was below
        /// them; the first `FailedChildren.descendantCapacity`. Empty for a node that failed before it was
        /// added to this node: the nodes its failure cancelled were not below this node then.
        package var descendants: [DepartedDescendant] = []
    }

    /// A node below a failed child, as that child's failure left it.
    package struct DepartedDescendant: Sendable {
        /// Its line, read after the failure cancelled it, without ids (as `FailedChild.record`).
        package let record: ProgressWireRecord
        /// The index of its parent in `FailedChild.descendants`, always lower than its own; -1 for the
        /// failed child itself.
        package let parentIndex: Int
    }

    /// The failed children recorded after the first `cursor` ones (at most the last
    /// `FailedChildren.capacity`, oldest first), and the cursor to pass next time.
    ///
    /// - Complexity: O(children returned); takes the node's lock once.
    package func failedChildren(since cursor: Int) -> (children: [FailedChild], next: Int) {
        state.withLock { state in
            guard state.hasExtras else { return ([], 0) }
            let recent = state.control.outcomes.failedChildren
            return (recent.since(cursor), recent.count)
        }
    }

    /// This failed node as its parent records it (`FailedChild`): its line and those of the first
    /// `FailedChildren.descendantCapacity` nodes below it, read now. Called by `fail(_:)` only, after the
    /// failure cancelled the nodes below, with no lock held.
    ///
    /// - Complexity: O(nodes read + the children of the nodes read), bounded by the capacity; one lock of
    ///   each node read at a time.
    func departure() -> FailedChild {
        enum Next {
            case node(ProgressNode, parentIndex: Int)
            case kept(FailedChild, parentIndex: Int)
        }
        let capacity = FailedChildren.descendantCapacity
        var descendants: [DepartedDescendant] = []
        // Preorder: below each node, the failed children it kept (they left it first), then its children.
        func below(_ node: ProgressNode, at index: Int) -> [Next] {
            node.failedChildren(since: 0).children.map { .kept($0, parentIndex: index) }
                + node.children.map { .node($0, parentIndex: index) }
        }
        var stack = Array(below(self, at: -1).reversed())
        while descendants.count < capacity, let next = stack.popLast() {
            switch next {
            case .node(let node, let parentIndex):
                let index = descendants.count
                descendants.append(
                    DepartedDescendant(record: node.wireRecord(id: 0, parentID: nil), parentIndex: parentIndex))
                stack.append(contentsOf: below(node, at: index).reversed())
            case .kept(let child, let parentIndex):
                let base = descendants.count
                descendants.append(DepartedDescendant(record: child.record, parentIndex: parentIndex))
                for kept in child.descendants.prefix(capacity - descendants.count) {
                    descendants.append(
                        DepartedDescendant(
                            record: kept.record, parentIndex: kept.parentIndex < 0 ? base : base + 1 + kept.parentIndex)
                    )
                }
            }
        }
        return FailedChild(node: self, record: wireRecord(id: 0, parentID: nil), descendants: descendants)
    }
}

extension ProgressNode.FailedChild {
    /// The nodes below this failed child, `depth` levels below a writer's root, down to `maximumDepth`
    /// levels, in tree order: each record in a final state (one still running or paused is `cancelled`:
    /// the failure cancelled it), its depth, and the index of its parent among those returned (-1: this
    /// child).
    package func descendants(
        at depth: Int, downTo maximumDepth: Int
    ) -> [(record: ProgressWireRecord, depth: Int, parentIndex: Int)] {
        var kept: [(record: ProgressWireRecord, depth: Int, parentIndex: Int)] = []
        // Where each of `descendants` went among those kept, by its index; nil below `maximumDepth`.
        var keptIndex: [Int?] = []
        keptIndex.reserveCapacity(descendants.count)
        for descendant in descendants {
            let parent: (index: Int, depth: Int)? =
                descendant.parentIndex < 0
                ? (-1, depth)
                : keptIndex.indices.contains(descendant.parentIndex)
                    ? keptIndex[descendant.parentIndex].map { ($0, kept[$0].depth) } : nil
            guard let parent, parent.depth < maximumDepth else {
                keptIndex.append(nil)
                continue
            }
            var record = descendant.record
            if !record.state.isFinal { record.state = .cancelled }
            keptIndex.append(kept.count)
            kept.append((record, parent.depth + 1, parent.index))
        }
        return kept
    }
}

/// The last failed children of a node (guarded by the node's lock, in `OutcomeState`).
struct FailedChildren {
    /// How many are kept: more than this many failures below one node between two walks of a writer
    /// leave the oldest of them unnamed (still counted in `failedBelow`).
    static let capacity = 64
    /// How many nodes below each failed child are kept (`FailedChild.descendants`): beyond them, the nodes
    /// below a child that appeared and failed between two walks go unnamed (still counted in
    /// `cancelledBelow` and `failedBelow`).
    static let descendantCapacity = 64

    /// How many failed children were ever recorded.
    private(set) var count = 0
    /// The last `min(count, capacity)`, the one recorded `n`-th at `n % capacity`.
    private var ring: [ProgressNode.FailedChild] = []

    mutating func record(_ child: ProgressNode.FailedChild) {
        if ring.count < Self.capacity {
            ring.append(child)
        } else {
            ring[count % Self.capacity] = child
        }
        count += 1
    }

    /// The children recorded after the first `cursor`, of those still kept, oldest first.
    func since(_ cursor: Int) -> [ProgressNode.FailedChild] {
        let first = max(cursor, count - ring.count, 0)
        guard first < count else { return [] }
        return (first..<count).map { ring[$0 % Self.capacity] }
    }
}
