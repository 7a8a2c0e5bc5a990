import ProgressTree

/// What one line of the display is about, captured from a node when a frame is drawn: raw values only.
/// How they read on screen (the label with its failure, the counts, a throughput or a time) is decided by
/// the layout stage (`Layout/LineContent+Text.swift`), so each value has one form here and one formatter there.
struct LineContent: Equatable, Sendable {
    var depth: Int
    var label: String
    var fraction: Double
    var isIndeterminate: Bool
    var status: LineStatus
    var completedUnitCount: Int64
    var totalUnitCount: Int64
    /// Counts or bytes as the node describes them (`"3 of 10 files"`, `"4.5 MB of 9 MB"`: the node's own
    /// text), or `nil` for the plain unit counts, which the layout formats.
    var describedCounts: String?
    /// Bytes (or units) per second, when known; only while running.
    var throughput: Int?
    /// Seconds, when known; only while running.
    var timeRemaining: Double?
    /// Why the node failed (`status == .failed`), control characters shown as spaces; `nil` otherwise.
    var failureReason: String?
    /// The summaries of custom properties the line shows after its name (`TerminalRenderer.show(_:_:)`), as
    /// the program worded them, control characters shown as spaces: the root's line (plain mode: every
    /// line, each its own subtree's summary).
    var summaries: [String] = []
    /// How many nodes below failed or were cancelled, and the first failure's description (raw).
    var outcomes = ProgressNode.DescendantOutcomes()
    /// Whether the node had children when the line was read: its line may come to count failures below it
    /// ("Downloading 5 files · 2 failed"), so the column plan keeps room for that note.
    var hasChildren = false
    /// Whether the line is read with its estimates (the root, and nodes that describe files): with a size,
    /// it may come to show a throughput and a time remaining.
    var readsEstimates = false
    /// json mode only: the node's wire-format line as read (pending count, metadata); the composer
    /// overrides its ids, time and what this content says (state, label, estimates).
    var wire: ProgressWireRecord?
    /// plain mode only: the node's own values of its `WireProgressProperty` properties, by wire name, as
    /// the wire carries them (`ProgressNode.wireProperties()`).
    var properties: [String: ProgressWireValue] = [:]
    /// plain mode only: how many of the node's own property values cannot cross the wire (not finite, too
    /// large, an empty name), left out of `properties` (`ProgressNode.wireProperties()`).
    var skippedProperties = 0
}
