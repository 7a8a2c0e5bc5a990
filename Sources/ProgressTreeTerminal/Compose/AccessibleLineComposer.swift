/// Decides which sentences accessible mode writes: few, each one worth hearing, for a person listening
/// through a screen reader (`TerminalRenderer.Mode.accessible`). A pure state machine: frames' captures
/// in, sentences out (worded by `LineContent+Sentences.swift`).
///
/// - A start sentence, once, at the first frame ("Importing 12 photos: started, 0 of 12.").
/// - Then, for the root, a progress sentence when it crosses another `step` of its fraction (a quarter by
///   default) or, when `interval` passed since the last sentence about it, if it moved (an indeterminate
///   root: whenever `interval` passed, "still working after …"); a sentence when it becomes
///   determinate or indeterminate, is paused or resumed. At most one sentence about the root per frame.
/// - Every failure below the root, once, in a full sentence with its reason ("IMG_0007.jpg failed:
///   connection reset."); the nodes a failure cancelled are not named.
/// - The outcome, once, last: when the root ends (finished, failed, cancelled), or at the final frame
///   ("… stopped at 50 percent"). Nothing about the tree after it.
///
/// No sentence repeats the root's path: each names what changed.
struct AccessibleLineComposer {
    let step: Double
    let interval: Duration

    /// What the last sentence about the root said, and when.
    private struct Said {
        var time: Duration
        var step: Int
        var percent: Int?
        var amounts: [String]
        var status: LineStatus
        var isIndeterminate: Bool
    }

    private var said: Said?
    private var hasEnded = false
    /// The rows whose failure was said (a failed node keeps its row's id while the mirror keeps it).
    private var failuresSaid = Set<Int>()

    init(step: Double, interval: Duration) {
        self.step = step > 0 && step <= 1 ? step : 0.25
        self.interval = interval
    }

    /// The sentences of one frame, `now` being the time since the renderer started; with `final` (the
    /// renderer stops), the outcome is said if it was not.
    mutating func lines(for rows: [TreeMemory.Row], root: LineContent?, now: Duration, final: Bool) -> [String] {
        guard !hasEnded else { return [] }
        var lines: [String] = []
        var labels: [Int: String] = [:]
        for row in rows {
            labels[row.id] = row.content.label
            guard row.parentID != nil, row.content.status == .failed, !failuresSaid.contains(row.id) else { continue }
            failuresSaid.insert(row.id)
            let parent = row.parentID.flatMap { labels[$0] }.map(LineContent.spokenLabel) ?? ""
            let name = row.content.spokenName(placeholder: parent.isEmpty ? "A step" : "A step of " + parent)
            lines.append(row.content.failureSentence(name: name))
        }
        guard let root else { return lines }
        let name = root.spokenName(placeholder: "The work")
        if said == nil {
            lines.append(root.startSentence(name: name))
            said = remembered(root, now: now)
        }
        if root.status == .finished || root.status == .failed || root.status == .cancelled || final {
            lines.append(root.outcomeSentence(name: name))
            hasEnded = true
            return lines
        }
        if let sentence = milestone(of: root, name: name, now: now) {
            lines.append(sentence)
            said = remembered(root, now: now)
        }
        return lines
    }

    /// The sentence about the running or paused root this frame, if any.
    private func milestone(of root: LineContent, name: String, now: Duration) -> String? {
        guard let said else { return nil }
        if root.status != said.status {
            if root.status == .paused { return root.pauseSentence(name: name, resumed: false) }
            if said.status == .paused { return root.pauseSentence(name: name, resumed: true) }
        }
        guard root.status == .running else { return nil }
        if root.isIndeterminate != said.isIndeterminate || stepIndex(of: root) > said.step {
            return root.progressSentence(name: name, elapsed: now)
        }
        guard now - said.time >= interval else { return nil }
        let moved =
            root.isIndeterminate || root.spokenPercent != said.percent.map { "\($0) percent" }
            || root.spokenAmounts != said.amounts
        return moved ? root.progressSentence(name: name, elapsed: now) : nil
    }

    private func stepIndex(of root: LineContent) -> Int {
        guard !root.isIndeterminate, root.fraction.isFinite else { return 0 }
        // A millionth of a step's slack, as `WholePercent`: 0.75 / 0.25 is exactly 3, 0.29 × 100 is not 29.
        return Int((min(max(root.fraction, 0), 1) / step + 1e-9).rounded(.down))
    }

    private func remembered(_ root: LineContent, now: Duration) -> Said {
        Said(
            time: now, step: stepIndex(of: root),
            percent: root.isIndeterminate ? nil : WholePercent.of(root.fraction, isFinished: root.status == .finished),
            amounts: root.spokenAmounts, status: root.status, isIndeterminate: root.isIndeterminate)
    }
}
