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
}
