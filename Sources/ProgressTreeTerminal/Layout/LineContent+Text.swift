import ProgressTree

/// How the values of a captured line read on screen and in logs: the one place they are formatted.
extension LineContent {
    /// The label column's text: the name, the summaries the program shows ("Importing · 2 skipped"), then
    /// the failure's reason ("IMG_0005.jpg — failed: timed out") or, on a line whose node did not fail
    /// itself, how many nodes below it failed ("Importing · 1 failed").
    var shownLabel: String { name + summaryText + failureText }

    /// The summaries after the label: `" · 2 skipped"` (`"2 skipped"` without a label), `" · "` between
    /// two; `""` when none.
    var summaryText: String {
        guard !summaries.isEmpty else { return "" }
        return (label.isEmpty ? "" : " · ") + summaries.joined(separator: " · ")
    }

    /// The label as the line shows it: a line whose work ended (finished, failed, cancelled) drops the
    /// label's trailing ellipsis, which says the work goes on ("✓ Copying 8 files", not "Copying 8 files…").
    var name: String {
        guard status != .running, status != .paused, label.hasSuffix("…") else { return label }
        return String(label.dropLast())
    }

    /// What the line says about failure, after the label and its summaries: `" — failed: reason"`
    /// (`"failed: reason"` with neither), `" · 2 failed"` (`"2 failed"`), or `""` when nothing failed.
    var failureText: String {
        let alone = label.isEmpty && summaries.isEmpty
        if let failureReason {
            return (alone ? "failed: " : Self.failedLead) + shownReason(failureReason)
        }
        guard outcomes.failedCount > 0 else { return "" }
        return (alone ? "" : " · ") + "\(outcomes.failedCount) failed"
    }

    /// The reason without a leading "label: " (an error that names its file, "IMG_0004.jpg: timed out",
    /// on the line of that file), which the line says already.
    func shownReason(_ reason: String) -> String {
        let lead = label + ": "
        guard !label.isEmpty, reason.hasPrefix(lead), reason.count > lead.count else { return reason }
        return String(reason.dropFirst(lead.count))
    }

    /// What comes between the label and the reason of a failed node.
    static let failedLead = " — failed: "

    /// Whether the label column tells of a failure (the node's own or below it).
    var showsFailure: Bool { !failureText.isEmpty }

    /// The counts column: the described counts, or `"16 of 42"` (nothing for an indeterminate node, but
    /// for one made indeterminate by a count taken below zero with a known total, `"-3 of 10"`: the
    /// numbers say why there is no percentage).
    var counts: String {
        if let describedCounts { return describedCounts }
        if isIndeterminate && !(completedUnitCount < 0 && totalUnitCount > 0) { return "" }
        return ProgressFormat.count(completedUnitCount) + " of " + ProgressFormat.count(totalUnitCount)
    }

    /// The throughput column and log detail: "12.3 MB/s".
    var throughputText: String? { throughput.flatMap(ProgressFormat.throughput) }

    /// The time remaining column: "4s", "1m 05s".
    var timeRemainingColumnText: String? { timeRemaining.flatMap(Self.shortDuration) }

    /// The time remaining in a log line, in words ("About 1 minute remaining").
    var timeRemainingLogText: String? { timeRemaining.flatMap(ProgressFormat.timeRemaining) }

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
