import ProgressTreePlatform

/// The progress indicator of a flow of steps (a wizard, an onboarding, a checkout): a stack of steps whose
/// top step decides what the indicator shows, with animated and interactive transitions.
///
/// Each step reports how far along the whole flow it is (`0...1`), or nothing. The indicator shows the top
/// step's progress; when the top step reports nothing (or the stack is empty) the indicator is hidden.
/// `push`, `pop` and `popToRoot` animate the indicator's value and visibility from what was on screen to
/// the new state over `duration`. The very first push animates too (from hidden at 0).
///
/// Animations are functions of time: ask for the indicator with `display(at:)` whenever you draw (from a
/// display link, a `TimelineView`, a timer), and stop drawing when `Display.isTransitioning` is `false`.
///
/// ```swift
/// var flow = StepFlow(duration: .milliseconds(300))
/// flow.push(progress: 0.25)              // "Shipping address": the bar fades in, sliding to 25%
/// flow.push(progress: 0.5)               // "Payment": slides to 50%
/// flow.push(progress: nil)               // "Help": the bar fades out where it is
/// let display = flow.display(at: .now)   // sample while drawing
/// ```
///
/// ## Hidden states keep their value
/// When the indicator hides, its value stays where it was, so it fades out in place instead of sliding to
/// 0; when it shows again it slides from that value to the new one while fading in. The empty flow's
/// indicator is hidden at 0.
///
/// ## Interruptions
/// An operation during an animation starts from what is on screen at that moment, so the indicator never
/// jumps. An operation during an interactive transition first cancels it, without animation. An operation
/// that would not change the stack (`pop` on an empty flow, `popToRoot` with at most one step) does nothing.
///
/// ## Interactive transitions
/// `beginInteractiveTransition(_:at:)` starts a transition (typically `.pop`, following a swipe back) without
/// changing the stack. `updateInteractiveTransition(_:)` sets how far along it is: value and visibility are
/// interpolated *linearly* between the state on screen when it began (fraction 0) and the new state
/// (fraction 1), so the indicator follows the finger. `finishInteractiveTransition(at:animated:)` performs
/// the operation and animates the rest of the way; `cancelInteractiveTransition(at:animated:)` leaves the
/// stack unchanged and animates back, ending **exactly** (bit for bit) at the value and visibility the
/// indicator had before the transition began. Both take the remaining fraction of `duration`.
///
/// ## Easing
/// Animated transitions use `easing`, by default `.easeInOut`: the cubic smoothstep `3t² − 2t³`. It starts
/// and ends at rest (zero velocity, so interrupting and chaining look smooth), is symmetric, passes through
/// the middle at half time, stays within `0...1` (the bar never overshoots its target) and costs a few
/// multiplications. The values are computed as `(1 − e)·from + e·to`, which is exact at both ends; a finished
/// animation reports its target exactly.
///
/// ## Thread safety
/// `StepFlow` is a value type: all its state is in stored `Sendable` values, so it is `Sendable`, a copy is
/// an independent snapshot, and Swift's exclusivity rules make each mutation exclusive. Navigation belongs to
/// one owner (typically the main actor's view state), so a value fits better than a locked class: no lock,
/// no clock inside, and `display(at:)` is a pure function of the state and the time you pass, which makes
/// every frame exactly reproducible in tests. To share one flow between threads, keep it in a `Mutex`.
///
/// ## Complexity
/// Every operation is O(1) except `popToRoot`, which is O(steps removed); `display(at:)` is O(1).
public struct StepFlow: Sendable, Equatable {
    /// A step of the flow.
    public struct Step: Sendable, Equatable {
        /// How far along the whole flow this step is, in `0...1`; `nil` when it does not show progress.
        public var progress: Double?

        /// Creates a step; `progress` is clamped into `0...1`, and NaN means no progress.
        public init(progress: Double?) {
            self.progress = progress.flatMap { $0.isNaN ? nil : min(max($0, 0), 1) }
        }
    }

    /// What the indicator shows at one instant.
    public struct Display: Sendable, Equatable {
        /// The indicator's value, in `0...1`. Meaningful also while hidden: it is where it fades out or in.
        public var progress: Double
        /// How visible the indicator is: 0 hidden, 1 shown, in between while fading (multiply it into the
        /// indicator's opacity).
        public var visibility: Double
        /// The index of the top step (0 for the root), or `nil` when the flow is empty. During an interactive
        /// transition, the index before it.
        public var stepIndex: Int?
        /// The number of steps in the stack. During an interactive transition, the number before it.
        public var stepCount: Int
        /// `true` while an animation runs or an interactive transition is in progress: keep drawing.
        public var isTransitioning: Bool

        /// Creates a display value.
        public init(progress: Double, visibility: Double, stepIndex: Int?, stepCount: Int, isTransitioning: Bool) {
            self.progress = progress
            self.visibility = visibility
            self.stepIndex = stepIndex
            self.stepCount = stepCount
            self.isTransitioning = isTransitioning
        }
    }

    /// How an animation's time maps to its progress.
    public enum Easing: Sendable, Equatable {
        /// Constant speed: `e(t) = t`.
        case linear
        /// The cubic smoothstep `e(t) = 3t² − 2t³`: starts and ends at rest, symmetric, no overshoot.
        case easeInOut

        /// The eased progress for the time fraction `t` (clamped into `0...1`); exactly 0 at 0 and 1 at 1.
        ///
        /// - Complexity: O(1).
        public func callAsFunction(_ t: Double) -> Double {
            let t = min(max(t, 0), 1)
            switch self {
            case .linear: return t
            case .easeInOut: return t * t * (3 - 2 * t)
            }
        }
    }

    /// An operation on the stack, for `beginInteractiveTransition(_:at:)`.
    public enum Operation: Sendable, Equatable {
        /// Pushes a step.
        case push(Step)
        /// Pops the top step.
        case pop
        /// Pops every step above the root.
        case popToRoot
    }

    /// The value and visibility of the indicator.
    private struct Visual: Equatable {
        var progress: Double
        var visibility: Double

        static let hiddenAtZero = Visual(progress: 0, visibility: 0)

        static func interpolate(_ from: Visual, _ to: Visual, _ e: Double) -> Visual {
            if e <= 0 { return from }
            if e >= 1 { return to }
            return Visual(
                progress: (1 - e) * from.progress + e * to.progress,
                visibility: (1 - e) * from.visibility + e * to.visibility)
        }
    }

    private enum Motion: Equatable {
        case settled
        /// Animating from `from` to the flow's `target`.
        case animating(from: Visual, start: ContinuousClock.Instant, duration: Duration)
        /// An interactive transition: `steps` and `target` are still those from before it began.
        case interactive(from: Visual, to: Visual, fraction: Double, stepsAfter: [Step])
    }

    /// How long a push, a pop or a complete interactive transition animates.
    public let duration: Duration
    /// The easing of animated transitions (not of the interactive fraction, which is linear).
    public let easing: Easing
    /// The steps, root first. Changes when an operation is performed, not while it animates.
    public private(set) var steps: [Step] = []

    /// Where the indicator settles for the current stack.
    private var target = Visual.hiddenAtZero
    private var motion = Motion.settled

    /// Creates an empty flow; its indicator is hidden.
    ///
    /// - Parameters:
    ///   - duration: how long transitions animate (300 ms by default); `.zero` or less makes them immediate.
    ///   - easing: the easing of animated transitions (`.easeInOut` by default).
    /// - Complexity: O(1).
    public init(duration: Duration = .milliseconds(300), easing: Easing = .easeInOut) {
        self.duration = max(duration, .zero)
        self.easing = easing
    }

    // MARK: Operations

    /// Pushes a step that reports `progress` (`nil`: none, which hides the indicator), animating from what
    /// is on screen at `time`.
    ///
    /// - Complexity: O(1) amortized.
    public mutating func push(progress: Double?, at time: ContinuousClock.Instant = .now) {
        push(Step(progress: progress), at: time)
    }

    /// Pushes `step`, animating from what is on screen at `time`.
    ///
    /// - Complexity: O(1) amortized.
    public mutating func push(_ step: Step, at time: ContinuousClock.Instant = .now) {
        perform(.push(step), at: time)
    }

    /// Pops the top step, animating from what is on screen at `time`; popping the root empties the flow and
    /// hides the indicator.
    ///
    /// - Returns: the step removed, or `nil` if the flow was empty (then nothing changes).
    /// - Complexity: O(1).
    @discardableResult
    public mutating func pop(at time: ContinuousClock.Instant = .now) -> Step? {
        guard let top = steps.last else { return nil }
        perform(.pop, at: time)
        return top
    }

    /// Pops every step above the root, animating from what is on screen at `time`.
    ///
    /// - Returns: the steps removed, bottom first (empty if there were none; then nothing changes).
    /// - Complexity: O(steps removed).
    @discardableResult
    public mutating func popToRoot(at time: ContinuousClock.Instant = .now) -> [Step] {
        let removed = Array(steps.dropFirst())
        perform(.popToRoot, at: time)
        return removed
    }

    // MARK: Interactive transitions

    /// Whether an interactive transition is in progress.
    public var isInteractive: Bool {
        if case .interactive = motion { return true }
        return false
    }

    /// Begins an interactive transition performing `operation` (for example `.pop` on a swipe back) at
    /// fraction 0. The stack does not change until `finishInteractiveTransition(at:animated:)`.
    ///
    /// Starts from what is on screen at `time`; an interactive transition already in progress is cancelled
    /// first (without animation).
    ///
    /// - Returns: `false`, and nothing changes, when `operation` would not change the stack (`.pop` on an
    ///   empty flow, `.popToRoot` with at most one step).
    /// - Complexity: O(steps) (the stack after the operation is prepared).
    @discardableResult
    public mutating func beginInteractiveTransition(_ operation: Operation, at time: ContinuousClock.Instant = .now)
        -> Bool
    {
        guard let stepsAfter = apply(operation) else { return false }
        cancelInteractiveTransition(at: time, animated: false)
        let from = visual(at: time)
        motion = .interactive(
            from: from, to: Self.target(for: stepsAfter, holding: from), fraction: 0, stepsAfter: stepsAfter)
        return true
    }

    /// Moves the interactive transition to `fraction` (clamped into `0...1`): value and visibility are
    /// interpolated linearly between where it began (0) and the new state (1). Does nothing when no
    /// interactive transition is in progress.
    ///
    /// - Complexity: O(1).
    public mutating func updateInteractiveTransition(_ fraction: Double) {
        guard case .interactive(let from, let to, _, let stepsAfter) = motion else { return }
        let fraction = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        motion = .interactive(from: from, to: to, fraction: fraction, stepsAfter: stepsAfter)
    }

    /// Completes the interactive transition: the operation is performed and the indicator animates from where
    /// the transition is to the new state over the remaining `(1 − fraction) × duration` (at once when
    /// `animated` is `false`). Does nothing when no interactive transition is in progress.
    ///
    /// - Complexity: O(1).
    public mutating func finishInteractiveTransition(at time: ContinuousClock.Instant = .now, animated: Bool = true) {
        guard case .interactive(let from, let to, let fraction, let stepsAfter) = motion else { return }
        steps = stepsAfter
        target = to
        animate(
            from: Visual.interpolate(from, to, fraction), at: time,
            for: animated ? scaled(duration, by: 1 - fraction) : .zero)
    }

    /// Cancels the interactive transition: the stack stays as it was, and the indicator animates back over
    /// the remaining `fraction × duration` (at once when `animated` is `false`) to exactly the value and
    /// visibility it had before the transition began. (If the transition began while an animation was
    /// running, it settles where that animation was heading.) Does nothing when no interactive transition is
    /// in progress.
    ///
    /// - Complexity: O(1).
    public mutating func cancelInteractiveTransition(at time: ContinuousClock.Instant = .now, animated: Bool = true) {
        guard case .interactive(let from, let to, let fraction, _) = motion else { return }
        animate(
            from: Visual.interpolate(from, to, fraction), at: time,
            for: animated ? scaled(duration, by: fraction) : .zero)
    }

    // MARK: Sampling

    /// What the indicator shows at `time`.
    ///
    /// A pure function of the flow and `time`: sampling never changes the flow, and the same arguments always
    /// give the same result. Times before the current animation began show its starting point; times after
    /// it ended show its target exactly.
    ///
    /// - Complexity: O(1).
    public func display(at time: ContinuousClock.Instant = .now) -> Display {
        let shown = visual(at: time)
        let isTransitioning: Bool
        switch motion {
        case .settled: isTransitioning = false
        case .interactive: isTransitioning = true
        case .animating(_, let start, let duration): isTransitioning = time < start + duration
        }
        return Display(
            progress: shown.progress, visibility: shown.visibility,
            stepIndex: steps.isEmpty ? nil : steps.count - 1, stepCount: steps.count,
            isTransitioning: isTransitioning)
    }

    /// Where the indicator settles for the current stack once the running animation ends (during an
    /// interactive transition: where a cancellation returns to).
    ///
    /// - Complexity: O(1).
    public var settledDisplay: Display {
        Display(
            progress: target.progress, visibility: target.visibility,
            stepIndex: steps.isEmpty ? nil : steps.count - 1, stepCount: steps.count, isTransitioning: false)
    }

    // MARK: Implementation

    /// Performs `operation` at once, animating from what is on screen at `time`.
    private mutating func perform(_ operation: Operation, at time: ContinuousClock.Instant) {
        guard let stepsAfter = apply(operation) else { return }
        cancelInteractiveTransition(at: time, animated: false)
        let from = visual(at: time)
        steps = stepsAfter
        target = Self.target(for: stepsAfter, holding: from)
        animate(from: from, at: time, for: duration)
    }

    /// The stack after `operation`, or `nil` if it would not change.
    private func apply(_ operation: Operation) -> [Step]? {
        switch operation {
        case .push(let step): return steps + [step]
        case .pop: return steps.isEmpty ? nil : Array(steps.dropLast())
        case .popToRoot: return steps.count <= 1 ? nil : [steps[0]]
        }
    }

    /// Where the indicator settles for `steps`: shown at the top step's progress, or hidden where it is.
    private static func target(for steps: [Step], holding current: Visual) -> Visual {
        if let progress = steps.last?.progress { return Visual(progress: progress, visibility: 1) }
        return Visual(progress: current.progress, visibility: 0)
    }

    private mutating func animate(from: Visual, at time: ContinuousClock.Instant, for duration: Duration) {
        motion =
            from == target || duration <= .zero ? .settled : .animating(from: from, start: time, duration: duration)
    }

    private func visual(at time: ContinuousClock.Instant) -> Visual {
        switch motion {
        case .settled:
            return target
        case .interactive(let from, let to, let fraction, _):
            return Visual.interpolate(from, to, fraction)
        case .animating(let from, let start, let duration):
            if time <= start { return from }
            let elapsed = time - start
            if elapsed >= duration { return target }
            return Visual.interpolate(
                from, target, easing(Double(elapsed.totalAttoseconds) / Double(duration.totalAttoseconds)))
        }
    }

    /// `duration × factor` (`factor` in `0...1`), rounded to whole nanoseconds. A duration too long for
    /// `Int64` nanoseconds (over 292 years, which `init` accepts) is scaled as a `Duration` instead of
    /// trapping.
    private func scaled(_ duration: Duration, by factor: Double) -> Duration {
        let nanoseconds = (Double(duration.totalAttoseconds / 1_000_000_000) * factor).rounded()
        guard nanoseconds < 0x1p63 else { return duration * factor }
        return .nanoseconds(Int64(nanoseconds))
    }
}
