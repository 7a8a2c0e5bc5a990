import ProgressTree

/// Captures what a line shows from a node, at draw time (never on the update path).
enum NodeReader {
    /// The line of `node`. The root and nodes that describe files get what costs a walk of their subtree
    /// — the amount of files or bytes, throughput and time remaining, exactly as in
    /// `localizedAdditionalDescription`; other nodes show their unit counts (or a description set by the
    /// user).
    ///
    /// With `forWire` (json mode), the content also carries the node's wire-format record.
    static func content(of node: ProgressNode, depth: Int, forWire: Bool = false) -> LineContent {
        let snapshot = node.snapshot
        let status: LineContent.Status =
            snapshot.isFailed ? .failed
            : snapshot.isCancelled ? .cancelled
            : snapshot.isFinished ? .finished
            : snapshot.isPaused ? .paused
            : .running
        let isIndeterminate = snapshot.isIndeterminate && !snapshot.isFinished
        var content = LineContent(
            depth: depth,
            label: LabelSanitizer.sanitized(node.displayLabel ?? ""),
            fraction: snapshot.fractionCompleted,
            isIndeterminate: isIndeterminate,
            status: status,
            completedUnitCount: snapshot.completedUnitCount,
            totalUnitCount: snapshot.totalUnitCount,
            describedCounts: nil)
        content.failureReason = snapshot.failureDescription.map(LabelSanitizer.sanitized)
        content.outcomes = snapshot.descendantOutcomes
        if forWire { content.wire = node.wireRecord(id: 0, parentID: nil) }
        guard depth == 0 || node.describesFiles else {
            content.describedCounts = node.additionalDescriptionOverride
            return content
        }
        let details = node.displayDetails
        content.describedCounts = details.amount
        if status == .running {
            content.throughputValue = details.bytesPerSecond
            content.throughput = details.bytesPerSecond.flatMap(ProgressFormat.throughput)
            content.timeRemainingValue = details.secondsRemaining
            content.timeRemaining = details.secondsRemaining.flatMap(Self.shortDuration)
        }
        return content
    }

    /// A compact time for a column: "4s", "1m 05s", "2h 10m"; `nil` when not worth showing.
    static func shortDuration(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0, seconds <= ProgressFormat.longestTimeRemaining else { return nil }
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m " + twoDigits(total % 60) + "s" }
        if total < 86_400 { return "\(total / 3600)h " + twoDigits(total % 3600 / 60) + "m" }
        return "\(total / 86_400)d " + twoDigits(total % 86_400 / 3600) + "h"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
