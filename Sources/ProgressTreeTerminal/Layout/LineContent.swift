import ProgressTree

/// What one line of the display is about, captured from a node when a frame is drawn.
struct LineContent: Equatable, Sendable {
    enum Status: String, Sendable {
        case running, paused, cancelled, failed, finished
    }

    var depth: Int
    var label: String
    var fraction: Double
    var isIndeterminate: Bool
    var status: Status
    var completedUnitCount: Int64
    var totalUnitCount: Int64
    /// Counts or bytes as described by the node (`"3 of 10 files"`, `"4.5 MB of 9 MB"`), or `nil` for the
    /// plain unit counts, formatted only when shown (see `counts`).
    var describedCounts: String?
    /// Bytes per second, when known.
    var throughputValue: Int?
    var throughput: String?
    /// Seconds, when known.
    var timeRemainingValue: Double?
    var timeRemaining: String?
    /// Why the node failed (`status == .failed`), control characters shown as spaces; `nil` otherwise.
    var failureReason: String?
    /// How many nodes below failed or were cancelled, and the first failure's description (raw).
    var outcomes = ProgressNode.DescendantOutcomes()
    /// json mode only: the node's wire-format line as read (pending count, metadata); the composer
    /// overrides its ids, time and what this content says (state, label, estimates).
    var wire: ProgressWireRecord?

    /// The label column's text: the label, then the failure's reason ("IMG_0005.jpg — failed: timed out")
    /// or, on a line whose node did not fail itself, how many nodes below it failed ("Importing · 1 failed").
    var shownLabel: String {
        if let failureReason {
            return label.isEmpty ? "failed: " + failureReason : label + " — failed: " + failureReason
        }
        guard outcomes.failedCount > 0 else { return label }
        let failed = "\(outcomes.failedCount) failed"
        return label.isEmpty ? failed : label + " · " + failed
    }

    /// The counts column: the described counts, or `"16 of 42"` (nothing for an indeterminate node).
    var counts: String {
        if let describedCounts { return describedCounts }
        if isIndeterminate { return "" }
        return ProgressFormat.count(completedUnitCount) + " of " + ProgressFormat.count(totalUnitCount)
    }
}
