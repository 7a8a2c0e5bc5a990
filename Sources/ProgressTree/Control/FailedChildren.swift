// The failed children that left a node most recently, kept for writers of the wire format
// (`Docs/WireFormat.md`): a failed child leaves its parent's children at once, so a writer that walks the
// tree now and then would otherwise never see one that appeared and failed between two of its walks.
//
// Invariants:
// - Recorded only by a failure, under the parent's lock, in the critical section that removes the child
//   from the parent's `ChildTable` (`fail(_:)`, `releaseChildThatFailedBeforeLinking(_:)`). So a walk that
//   lists the parent's children and then reads this list finds a failed child in one or the other, or
//   both: never in neither.
// - Nothing on the update path (advance, the count setters, finishing) reads or writes it.
// - Bounded: the last `capacity` failed children of the node; `count` says how many there ever were, so a
//   reader that keeps its place (`since`) learns how many it missed.
// - Values only, no strong reference: a failed child is released by its parent as before.

extension ProgressNode {
    /// A failed child as it left this node: enough to write its line of the wire format after it is gone.
    package struct FailedChild: Sendable {
        /// The child, while something else still holds it (a writer that named it holds it until it has
        /// written its final line).
        package weak var node: ProgressNode?
        /// Its line as it left (`wireRecord`, read with no lock held), without ids: `id` 0, no parent.
        package let record: ProgressWireRecord
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
}

/// The last failed children of a node (guarded by the node's lock, in `OutcomeState`).
struct FailedChildren {
    /// How many are kept: more than this many failures below one node between two walks of a writer
    /// leave the oldest of them unnamed (still counted in `failedBelow`).
    static let capacity = 64

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
