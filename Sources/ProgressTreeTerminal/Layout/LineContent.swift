import ProgressTree

/// What one line of the display is about, captured from a node when a frame is drawn.
struct LineContent: Equatable, Sendable {
    enum Status: String, Sendable {
        case running, paused, cancelled, finished
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

    /// The counts column: the described counts, or `"16 of 42"` (nothing for an indeterminate node).
    var counts: String {
        if let describedCounts { return describedCounts }
        if isIndeterminate { return "" }
        return ProgressFormat.count(completedUnitCount) + " of " + ProgressFormat.count(totalUnitCount)
    }
}
