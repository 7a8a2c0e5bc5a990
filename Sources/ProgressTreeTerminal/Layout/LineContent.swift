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
    var shownLabel: String { label + failureText }

    /// What the line says about failure, after the label: `" — failed: reason"` (`"failed: reason"` without a
    /// label), `" · 2 failed"` (`"2 failed"`), or `""` when nothing failed.
    var failureText: String {
        if let failureReason {
            return (label.isEmpty ? "failed: " : Self.failedLead) + shownReason(failureReason)
        }
        guard outcomes.failedCount > 0 else { return "" }
        return (label.isEmpty ? "" : " · ") + "\(outcomes.failedCount) failed"
    }

    /// The reason without a leading "label: " (an error that names its file, "IMG_0004.jpg: timed out",
    /// on the line of that file), which the line says already.
    private func shownReason(_ reason: String) -> String {
        let lead = label + ": "
        guard !label.isEmpty, reason.hasPrefix(lead), reason.count > lead.count else { return reason }
        return String(reason.dropFirst(lead.count))
    }

    /// What comes between the label and the reason of a failed node.
    static let failedLead = " — failed: "

    /// Whether the label column tells of a failure (the node's own or below it).
    var showsFailure: Bool { !failureText.isEmpty }

    /// The counts column: the described counts, or `"16 of 42"` (nothing for an indeterminate node).
    var counts: String {
        if let describedCounts { return describedCounts }
        if isIndeterminate { return "" }
        return ProgressFormat.count(completedUnitCount) + " of " + ProgressFormat.count(totalUnitCount)
    }
}
