/// How a line reads in accessible mode: sentences in words, for a screen reader, one per milestone. The
/// one place they are worded (`Docs/Terminal.md`, "Accessible mode", shows each; the web page's live
/// region says the same).
///
/// No glyph carries meaning (no mark, bar or spinner), no control character reaches the output (labels,
/// reasons and summaries are sanitized when captured), and each sentence ends with a full stop (or the
/// question or exclamation mark a reason ends with).
extension LineContent {
    /// The work's name in a sentence: the label without a trailing ellipsis (said aloud, it is noise), or
    /// `placeholder` for a node without one.
    func spokenName(placeholder: String) -> String {
        let name = Self.spokenLabel(label)
        return name.isEmpty ? placeholder : name
    }

    /// `label` without its trailing ellipsis and the spaces around it.
    static func spokenLabel(_ label: String) -> String {
        var name = Substring(label)
        while name.hasSuffix("…") || name.hasSuffix("...") { name = name.dropLast(name.hasSuffix("…") ? 1 : 3) }
        return String(name.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// "50 percent", or `nil` for an indeterminate line.
    var spokenPercent: String? {
        guard !isIndeterminate else { return nil }
        return "\(WholePercent.of(fraction, isFinished: status == .finished)) percent"
    }

    /// What the line counts, in the order a sentence says them: the counts ("6 of 12", "1.2 MB of 4 MB"),
    /// the program's summaries ("2 skipped"), the failures below ("1 failed").
    var spokenAmounts: [String] {
        var parts: [String] = []
        if !counts.isEmpty { parts.append(counts) }
        parts.append(contentsOf: summaries)
        if outcomes.failedCount > 0, status != .failed { parts.append("\(outcomes.failedCount) failed") }
        return parts
    }

    /// "Importing 12 photos: started, 0 of 12."
    func startSentence(name: String) -> String {
        Self.sentence(name + ": started", counts.isEmpty || isIndeterminate ? [] : [counts], after: ", ")
    }

    /// "Importing 12 photos: 50 percent, 6 of 12, 2 skipped, about 20 seconds left."; for an indeterminate
    /// line, "Loading customers: still working after 20 seconds, 3 found."
    func progressSentence(name: String, elapsed: Duration) -> String {
        guard let percent = spokenPercent else {
            return Self.sentence(
                name + ": still working after " + Self.spokenDuration(elapsed), spokenAmounts, after: ", ")
        }
        var parts = [percent] + spokenAmounts
        if let left = timeRemaining.flatMap(Self.spokenTimeLeft) { parts.append(left) }
        return Self.sentence(name + ": " + parts.joined(separator: ", "))
    }

    /// "Importing 12 photos: paused at 50 percent, 6 of 12." or "…: resumed at 50 percent, 6 of 12."
    func pauseSentence(name: String, resumed: Bool) -> String {
        let state = resumed ? "resumed" : "paused"
        let head = name + ": " + state + (spokenPercent.map { " at " + $0 } ?? "")
        return Self.sentence(head, spokenAmounts, after: ", ")
    }

    /// The outcome, said once, last: "Importing 12 photos finished: 12 of 12, 2 failed.", "… cancelled at
    /// 50 percent, 6 of 12.", "… failed at 83 percent, 10 of 12: 2 of 12 photos failed.", or, when the
    /// renderer stops while the work still runs, "… stopped at 50 percent, 6 of 12."
    func outcomeSentence(name: String) -> String {
        switch status {
        case .finished:
            return Self.sentence(name + " finished", spokenAmounts, after: ": ")
        case .failed:
            let head = name + " failed" + (spokenPercent.map { " at " + $0 } ?? "")
            let amounts = spokenAmounts.isEmpty ? "" : ", " + spokenAmounts.joined(separator: ", ")
            guard let reason = failureReason.map(shownReason), !reason.isEmpty else {
                return Self.sentence(head + amounts)
            }
            return Self.sentence(head + amounts + ": " + reason)
        case .cancelled, .running, .paused:
            let verb = status == .cancelled ? " cancelled" : " stopped"
            let head = name + verb + (spokenPercent.map { " at " + $0 } ?? "")
            return Self.sentence(head, spokenAmounts, after: ", ")
        }
    }

    /// "IMG_0007.jpg failed: connection reset."
    func failureSentence(name: String) -> String {
        guard let reason = failureReason.map(shownReason), !reason.isEmpty else {
            return Self.sentence(name + " failed")
        }
        return Self.sentence(name + " failed: " + reason)
    }

    /// `head`, then `parts` after `lead`, separated by commas, ending with a full stop unless it ends with a
    /// sentence's own end already (a reason that ends with one).
    private static func sentence(_ head: String, _ parts: [String] = [], after lead: String = ", ") -> String {
        var text = head
        if !parts.isEmpty { text += lead + parts.joined(separator: ", ") }
        if let last = text.last, ".!?".contains(last) { return text }
        return text + "."
    }

    /// A time left as a person says it: "about 7 seconds left", "about 20 seconds left" (to 5 s from 15 s
    /// on), "about 1 minute left", "about 3 hours left"; `nil` when not worth saying (not finite, negative,
    /// over 100 years).
    static func spokenTimeLeft(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0, seconds <= 100 * 365 * 86_400 else { return nil }
        return "about " + spokenAmountOfTime(seconds) + " left"
    }

    /// "20 seconds", "1 minute", "2 hours": for "still working after …".
    static func spokenDuration(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return spokenAmountOfTime(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    private static func spokenAmountOfTime(_ seconds: Double) -> String {
        func amount(_ value: Int, _ unit: String) -> String { "\(value) \(unit)" + (value == 1 ? "" : "s") }
        if seconds < 14.5 { return amount(max(1, Int(seconds.rounded())), "second") }
        if seconds < 57.5 { return amount(Int((seconds / 5).rounded()) * 5, "second") }
        if seconds < 3570 { return amount(max(1, Int((seconds / 60).rounded())), "minute") }
        if seconds < 86_400 - 1800 { return amount(Int((seconds / 3600).rounded()), "hour") }
        return amount(Int((seconds / 86_400).rounded()), "day")
    }
}
