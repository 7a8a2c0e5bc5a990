/// The last line of a run with failures: how many nodes failed (and were cancelled) and why the first one
/// failed. Shown by the final live frame and at the end of plain mode.
enum OutcomeSummary {
    /// "1 failed: IMG_0005.jpg: timed out", "3 failed, 2 cancelled; first: timed out", or "Failed: …" for
    /// a root that failed itself with no failure below it; `nil` when nothing failed. Control characters
    /// in the reason are shown as spaces.
    ///
    /// It counts what a person would name: the nodes that failed, and the nodes cancelled other than by a
    /// failure (`cancelledCount - cancelledByFailureCount`). The nodes a failure cancelled below the
    /// failed node (a photo's download, when the photo failed) are part of that failure, not work anybody
    /// cancelled.
    static func text(for root: LineContent) -> String? {
        let outcomes = root.outcomes
        if outcomes.failedCount > 0 {
            var text = "\(outcomes.failedCount) failed"
            let cancelled = outcomes.cancelledCount - outcomes.cancelledByFailureCount
            if cancelled > 0 { text += ", \(cancelled) cancelled" }
            if let first = outcomes.firstFailureDescription.map(LabelSanitizer.sanitized) {
                text += (outcomes.failedCount == 1 ? ": " : "; first: ") + first
            }
            return text
        }
        if root.status == .failed { return "Failed: " + (root.failureReason ?? "") }
        return nil
    }

    /// Whether a summary would only repeat the root's own line: the root failed itself, nothing failed
    /// below it, and its line shows its reason whole in `columns` columns (always, in a log line). Then no
    /// summary is written: the reason is on screen once.
    static func repeatsRootLine(_ root: LineContent, columns: Int = .max) -> Bool {
        root.outcomes.failedCount == 0 && root.status == .failed && 2 + DisplayWidth.of(root.shownLabel) <= columns
    }

    /// `text` after "! ", wrapped at spaces into at most `limit` lines of at most `width` columns (later
    /// lines indented under the text); the last line holds the rest, cut with "…".
    static func lines(_ text: String, width: Int, limit: Int) -> [String] {
        let words = text.split(separator: " ").map(String.init)
        var lines: [String] = []
        var current = "! "
        var hasWord = false
        var index = 0
        while index < words.count {
            let candidate = hasWord ? current + " " + words[index] : current + words[index]
            if !hasWord || DisplayWidth.of(candidate) <= width {
                current = candidate
                hasWord = true
                index += 1
            } else if lines.count + 1 < limit {
                lines.append(DisplayWidth.truncate(current, toColumns: width))
                current = "  "
                hasWord = false
            } else {
                current += " " + words[index...].joined(separator: " ")
                break
            }
        }
        lines.append(DisplayWidth.truncate(current, toColumns: width))
        return lines
    }
}
