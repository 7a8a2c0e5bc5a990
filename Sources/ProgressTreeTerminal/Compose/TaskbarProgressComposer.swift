/// The terminal's own progress indicator (`OSC 9;4`, in the tab or taskbar), driven by the root's line:
/// which sequence to write after a live frame, and nothing when the indicator shows that already.
struct TaskbarProgressComposer {
    /// The last sequence written, `nil` before the first (or after the terminal forgot it).
    private var shown: String?

    /// The sequence to write after this frame, or "". The root decides: error when it or a node below it
    /// failed, cleared when it was cancelled and at the final frame, paused, indeterminate, else the
    /// percentage.
    mutating func update(root: LineContent?, final: Bool) -> String {
        let sequence: String
        if !final, let root {
            let percent = WholePercent.of(root.fraction, isFinished: root.status == .finished)
            switch root.status {
            case .failed: sequence = ANSI.taskbarProgress(.error, percent: percent)
            case _ where root.outcomes.failedCount > 0: sequence = ANSI.taskbarProgress(.error, percent: percent)
            case .cancelled: sequence = ANSI.taskbarProgress(.cleared)
            case .paused: sequence = ANSI.taskbarProgress(.paused, percent: percent)
            case _ where root.isIndeterminate: sequence = ANSI.taskbarProgress(.indeterminate)
            case .running, .finished: sequence = ANSI.taskbarProgress(.normal, percent: percent)
            }
        } else {
            guard shown != nil else { return "" }  // never shown: nothing to clear
            sequence = ANSI.taskbarProgress(.cleared)
        }
        guard sequence != shown else { return "" }
        shown = sequence
        return sequence
    }

    /// The indicator was cleared behind the renderer's back (by the Ctrl-Z handler): the next update
    /// writes whatever it shows.
    mutating func forget() {
        shown = nil
    }
}
