/// The rarely used part of a node's `Metadata`: description overrides, a kind other than `.file`, and the
/// throughput and time-remaining estimators with the clock they read.
/// A reference type so that `Metadata` stays small (creating a node copies it); it is only ever reached
/// under the node's lock and never leaves it.
final class MetadataExtras {
    var customKind: ProgressNode.Kind?
    var localizedDescriptionOverride: String?
    var localizedAdditionalDescriptionOverride: String?
    /// The clock of the estimates; `nil` uses the nearest ancestor's (see `ProgressNode.estimationClock`).
    var clock: (any ProgressClock)?
    /// Completed bytes of the subtree's files (`FileSummary.completedByteCount`): `throughput`.
    var bytes = ThroughputEstimator()
    /// Completed work in the node's own units, `fractionCompleted × totalUnitCount` (which includes the
    /// partial work of children and does not jump when the total is re-weighted): `estimatedTimeRemaining`.
    var work = ThroughputEstimator()
}
