import ProgressTreePresentation

/// The sign-up flow: five screens on a `StepFlow`, and a simulated finger for swipes back.
///
/// Each step says how far along the whole flow it is; "review" says nothing, so the bar hides there.
struct SignUpFlow {
    static let steps: [(name: String, progress: Double?)] = [
        ("account", 0.2), ("profile", 0.4), ("address", 0.6), ("payment", 0.8), ("review", nil),
    ]

    enum Action: Equatable {
        case next, back, quit
        /// A swipe back: the finger drags the screen `distance` of the way, then lifts; the swipe
        /// completes (`finishes`) or the screen springs back.
        case swipeBack(distance: Double, finishes: Bool)
    }

    /// How long the simulated finger drags.
    static let dragDuration: Duration = .milliseconds(400)

    private(set) var flow = StepFlow(duration: .milliseconds(300))
    private var swipe: Swipe?
    /// Where the bar rested (or was heading) before a swipe that sprang back, to check it returns there
    /// exactly.
    private var springBackTarget: (display: StepFlow.Display, since: ContinuousClock.Instant)?
    private(set) var isDone = false

    private struct Swipe {
        let start: ContinuousClock.Instant
        let distance: Double
        let finishes: Bool
        let before: StepFlow.Display
    }

    var isBusy: Bool { swipe != nil || springBackTarget != nil }

    /// Performs `action` at `now`; returns what happened, in words.
    mutating func perform(_ action: Action, at now: ContinuousClock.Instant) -> String? {
        guard swipe == nil else { return nil }  // the finger is on the screen
        let count = flow.steps.count
        switch action {
        case .next where count < Self.steps.count:
            let step = Self.steps[count]
            flow.push(progress: step.progress, at: now)
            return "next → \(step.name)" + (step.progress == nil ? " (no progress: the bar hides)" : "")
        case .next:
            isDone = true
            return "sign up complete"
        case .back where count > 1:
            flow.pop(at: now)
            return "back → \(Self.steps[count - 2].name)"
        case .back:
            return nil
        case .quit:
            isDone = true
            return "quit"
        case .swipeBack(let distance, let finishes):
            guard count > 1 else { return nil }
            // Where the bar rests, or is heading when a step's animation still runs: a swipe that springs
            // back settles there.
            let before = flow.settledDisplay
            guard flow.beginInteractiveTransition(.pop, at: now) else { return nil }
            swipe = Swipe(start: now, distance: distance, finishes: finishes, before: before)
            return "swipe back begins (finger down on \(Self.steps[count - 1].name))"
        }
    }

    /// Moves the simulated finger to where it is at `now`; returns what happened, in words.
    mutating func update(at now: ContinuousClock.Instant) -> String? {
        if let swipe {
            let elapsed = swipe.start.duration(to: now) / Self.dragDuration
            flow.updateInteractiveTransition(min(elapsed, 1) * swipe.distance)
            guard elapsed >= 1 else { return nil }
            self.swipe = nil
            let percent = Int((swipe.distance * 100).rounded())
            if swipe.finishes {
                flow.finishInteractiveTransition(at: now)
                return "finger lifted at \(percent)%: the swipe completes → \(Self.steps[flow.steps.count - 1].name)"
            }
            flow.cancelInteractiveTransition(at: now)
            springBackTarget = (swipe.before, now)
            return "finger lifted at \(percent)%: cancelled, springing back"
        }
        if let (target, _) = springBackTarget, !flow.display(at: now).isTransitioning {
            springBackTarget = nil
            let shown = flow.display(at: now)
            let exact = shown.progress == target.progress && shown.visibility == target.visibility
            return exact
                ? "back exactly where it was: \(Self.percent(shown.progress)), \(Self.shownWords(shown.visibility))"
                : "NOT where it was: \(Self.percent(shown.progress)), \(Self.shownWords(shown.visibility)) instead of "
                    + "\(Self.percent(target.progress)), \(Self.shownWords(target.visibility))"
        }
        return nil
    }

    /// How much of the bar is shown, in words: "bar shown", "bar hidden", "bar 50% shown".
    static func shownWords(_ visibility: Double) -> String {
        visibility >= 0.999 ? "bar shown" : visibility <= 0.001 ? "bar hidden" : "bar \(percent(visibility)) shown"
    }

    /// The widest and narrowest bar, in cells.
    static let barWidths = 5...20

    /// One line for the flow's indicator at `now`, at most `columns` wide:
    /// `Step 2 of 5  [████████░░░░░░░░░░░░]  40%  profile`. When the line does not fit, the bar narrows
    /// (down to 5 cells) before anything else is cut: the step, its percentage and its name matter most.
    func line(at now: ContinuousClock.Instant, columns: Int, details: Bool = false) -> String {
        let display = flow.display(at: now)
        // "Not started" is as wide as "Step 1 of 5", so nothing moves when the first step comes.
        let position = display.stepIndex.map { "Step \($0 + 1) of \(Self.steps.count)" } ?? "Not started"
        let name = display.stepIndex.map { Self.steps[$0].name } ?? ""
        let fixed = position.count + 2 + 2 + 1 + 4 + 2 + 8  // "  [", "] ", the percentage, "  ", the name
        let barWidth = min(Self.barWidths.upperBound, max(Self.barWidths.lowerBound, columns - fixed))
        var line = position + "  " + Self.bar(display, width: barWidth) + "  " + pad(name, 8)
        if details {
            line +=
                "  exactly " + String(format: "%.1f%%", display.progress * 100) + ", "
                + Self.shownWords(display.visibility)
        }
        return line
    }

    /// A bar of `width` cells and the percentage; its characters fade as the bar is hidden, and a hidden
    /// bar is blank.
    static func bar(_ display: StepFlow.Display, width: Int) -> String {
        let visibility = display.visibility
        guard visibility > 0.001 else { return String(repeating: " ", count: width + 2 + 5) }
        let filled = Int((display.progress * Double(width)).rounded())
        let (full, empty): (Character, Character) =
            visibility >= 0.999 ? ("█", "░") : visibility >= 0.5 ? ("▓", "░") : ("▒", " ")
        return "[" + String(repeating: full, count: filled) + String(repeating: empty, count: width - filled) + "] "
            + pad(percent(display.progress), 4, right: true)
    }

    static func percent(_ value: Double) -> String {
        "\(Int((value * 100).rounded()))%"
    }

    private func pad(_ text: String, _ width: Int) -> String { Self.pad(text, width) }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}
