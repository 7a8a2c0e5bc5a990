/// The last line of a run with failures: how many nodes failed (and were cancelled) and why the first one
/// failed. Shown by the final live frame and at the end of plain mode.
enum OutcomeSummary {
    /// "1 failed: IMG_0005.jpg: timed out", "3 failed, 2 cancelled; first: timed out", or "Failed: …" for
    /// a root that failed itself with no failure below it; `nil` when nothing failed. Control characters
    /// in the reason are shown as spaces.
    static func text(for root: LineContent) -> String? {
        let outcomes = root.outcomes
        if outcomes.failedCount > 0 {
            var text = "\(outcomes.failedCount) failed"
            if outcomes.cancelledCount > 0 { text += ", \(outcomes.cancelledCount) cancelled" }
            if let first = outcomes.firstFailureDescription.map(LabelSanitizer.sanitized) {
                text += (outcomes.failedCount == 1 ? ": " : "; first: ") + first
            }
            return text
        }
        if root.status == .failed { return "Failed: " + (root.failureReason ?? "") }
        return nil
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
