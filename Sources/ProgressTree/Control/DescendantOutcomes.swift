extension ProgressNode {
    /// What happened below a node: how many of its descendants failed and how many were cancelled, and
    /// the description of the first failure. Read from `descendantOutcomes` or a `Snapshot`.
    ///
    /// A node keeps these counts itself, so they survive the nodes they count: a failed or finished child
    /// is released by its parent, and its failure still shows here ("11 of 12 imported, 1 failed").
    ///
    /// Each descendant is counted once, when its outcome happens, in every ancestor it is attached to at
    /// that moment: a node that finished or failed is no longer attached to its parent, so outcomes below it
    /// after that do not reach the ancestors above it (as its progress no longer does). A node that failed
    /// before it was added to a parent leaves that parent at once, as a failed child does, and counts there
    /// as failed (the nodes its failure cancelled were cancelled before, and do not count there).
    public struct DescendantOutcomes: Sendable, Hashable {
        /// How many descendants failed (`fail(_:)`).
        public var failedCount: Int
        /// How many descendants were cancelled, by `cancel()` on them or an ancestor, or by the failure of
        /// an ancestor (which cancels the nodes below it): every cancelled node, `cancelledByFailureCount`
        /// included.
        public var cancelledCount: Int
        /// How many of the `cancelledCount` descendants were cancelled by a failure: the nodes below a node
        /// that failed, cancelled as it failed or as they were attached below it (or below a node it
        /// cancelled). What a person calls cancelled is the rest, `cancelledCount - cancelledByFailureCount`:
        /// a photo's download cancelled because the photo failed is part of that failure, not work
        /// somebody cancelled.
        public var cancelledByFailureCount: Int
        /// The `Snapshot.failureDescription` of the first descendant that failed, or `nil` when none has.
        public var firstFailureDescription: String?

        /// Outcomes with the given counts.
        public init(
            failedCount: Int = 0, cancelledCount: Int = 0, cancelledByFailureCount: Int = 0,
            firstFailureDescription: String? = nil
        ) {
            self.failedCount = failedCount
            self.cancelledCount = cancelledCount
            self.cancelledByFailureCount = cancelledByFailureCount
            self.firstFailureDescription = firstFailureDescription
        }
    }
}

/// A child cancelled on its own, as its parent remembers it (`OutcomeState.cancelledChildren`).
struct CancelledChild: Sendable {
    weak var node: ProgressNode?
}

/// A node's own failure and the outcomes of its descendants, guarded by the node's lock (in
/// `ControlState`).
struct OutcomeState {
    /// The error given to `fail(_:)`; set once, in the critical section that sets `ControlFlags.failed`.
    /// (`any Error` is `Sendable`: `Error` refines `Sendable`.)
    var failure: (any Error)?
    /// `failure`'s description, computed once (outside the lock) when the node failed.
    var failureDescription: String?
    /// Counted into this node's outcomes by `record(failed:cancelled:byFailure:firstFailure:)`.
    var descendants = ProgressNode.DescendantOutcomes()
    /// This node's share in its parent when it failed (`pendingUnitCount × fraction`), until the parent's
    /// sums hold it (`ChildSums.failedUnits`; see `ProgressNode.retire(_:crediting:failedShare:)`).
    var shareAtFailure: Double = 0
    /// The units of this node that its failed children will never do: for each child that failed and left
    /// it, its pending units less its share at failure. Not work remaining: the time-remaining estimate
    /// leaves it out (Estimates/ProgressNode+Estimates.swift).
    var failedRemainder: Double = 0
    /// Children cancelled on their own (their `cancel()`, not an ancestor's) while attached to this node:
    /// their undone share is not work remaining either (`ProgressNode.undoneShareOfCancelledChildren()`).
    /// Weak: a child that goes away leaves only an empty entry, dropped at the next estimate.
    var cancelledChildren: [CancelledChild] = []
    /// The failed children that left this node most recently (see `FailedChildren.swift`).
    var failedChildren = FailedChildren()

    /// Counts `failed` failures and `cancelled` cancellations below the node; `byFailure`: the
    /// cancellations are a failure's (see `DescendantOutcomes.cancelledByFailureCount`).
    mutating func record(failed: Int, cancelled: Int, byFailure: Bool = false, firstFailure: String?) {
        descendants.failedCount += failed
        descendants.cancelledCount += cancelled
        if byFailure { descendants.cancelledByFailureCount += cancelled }
        if descendants.firstFailureDescription == nil { descendants.firstFailureDescription = firstFailure }
    }
}
