import Dispatch
import ProgressTreePlatform

/// Paces a stream of `(progress, label)` messages into what a progress bar with a label should show, so a
/// person can read every label that appears, the bar is never late, and the screen never falls behind.
///
/// Work reports messages faster than a person can read them, or in bursts. Send each one with
/// `send(progress:label:)` from any thread; the pacer calls `handler` with a `Display` on its scheduler
/// (by default a `DispatchQueue` of your choice) whenever what should be on screen changes.
///
/// ```swift
/// let pacer = LabelPacer(queue: .main) { display in
///     bar.isHidden = display.progress == nil
///     bar.value = display.progress ?? 0
///     label.text = display.label
/// }
/// pacer.send(progress: 0.1, label: "Downloading photo 1 of 10")   // from any thread
/// pacer.send(progress: 0.15, label: nil)                          // progress only: shown at once
/// pacer.reset()                                                   // done: clear the display
/// ```
///
/// ## Messages
/// - `progress` (clamped into `0...1`) replaces the progress shown; `nil` (or NaN) leaves it as it is.
/// - `label` is a new label; `nil` leaves the label as it is. A label equal to the newest one already
///   received is not a new label (repeating it changes nothing and costs nothing).
/// - Both `nil` (or `reset()`) resets: the progress is cleared at once, waiting labels are discarded, and the
///   label on screen disappears as soon as it has been visible for `minimumDisplayTime`.
///
/// ## Guarantees
/// 1. **The progress shown is always the latest.** A message is applied at the scheduler's next turn; the
///    progress never waits for a label's minimum time. Messages that arrive between two turns coalesce.
/// 2. **Every label stays visible at least `minimumDisplayTime`** (unless `invalidate()` is called).
///    A label that arrives while the screen is free (no label, or the current one has had its time) is
///    shown at once. A single message is therefore shown, and stays until something replaces it.
/// 3. **The screen is never more than `maximumLag` behind the work.** From the moment a label newer than the
///    one on screen arrives, at most `maximumLag` passes before the screen moves on. So a label is either
///    shown within `maximumLag` of its arrival, or dropped because newer ones made it stale.
/// 4. **The backlog is bounded**: at most `maximumPendingLabels` labels wait, whatever the message rate.
///
/// ## Drop policy
/// A naive first-in first-out queue shows every label for `minimumDisplayTime`; a burst of *n* labels then
/// takes *n* × `minimumDisplayTime` to show, and each burst that arrives faster than that adds to the delay,
/// without bound. The pacer instead decides, each time the screen is free for the next label, which waiting
/// label to show: it drops the oldest waiting label while the label *after it* has already waited at least
/// `maximumLag − minimumDisplayTime` (showing the older one for its minimum time would keep the newer one
/// waiting `maximumLag` or longer; the boundary is inclusive). The newest label is never dropped. When more than `maximumPendingLabels`
/// wait, the oldest is dropped as well.
///
/// With the default `maximumLag` (equal to `minimumDisplayTime`) this reads simply: when the screen is free,
/// show the newest label; every label that was superseded while the previous one was on screen is skipped.
/// Larger values of `maximumLag` show more of a burst at the price of showing older labels (an unbounded
/// `maximumLag` is the naive FIFO).
///
/// Worked timeline, `minimumDisplayTime` 250 ms, default `maximumLag`: labels A at 0 ms, B at 100, C at 200,
/// D at 600. A is shown at 0. At 250 A has had its time; B and C wait, C supersedes B, so C is shown at 250
/// (B is dropped). D arrives at 600 when the screen is free and is shown at once. The FIFO would have shown
/// B at 250, C at 500 and D at 750 — 150 ms late — and would lag more with every further burst.
///
/// ## Thread safety
/// `send(progress:label:)`, `reset()` and `invalidate()` may be called from any thread, including from inside
/// the handler. The handler is called on the scheduler, one call at a time, in order, and never while the
/// pacer holds the lock of its state; it runs inside a delivery gate (the one observation handlers use),
/// which lets `invalidate()` wait for it.
///
/// ## Structure
/// `LabelPacerStateMachine` holds the state and makes every decision (with `LabelPacerDropPolicy`); this
/// class keeps it under a lock and runs what it returns — scheduling a turn or a timer, delivering a
/// display — after unlocking. Lock order: delivery gate → state (the state's lock is taken inside the gate
/// to record what the handler receives, and never held while the gate is taken).
///
/// ## Complexity
/// `send(progress:label:)` is O(1) amortized (plus O(`maximumPendingLabels`) in the worst case of a drop)
/// and schedules at most one turn on the scheduler however many messages arrive before it runs.
public final class LabelPacer: Sendable {
    /// What should be on screen: the progress bar's value (`nil`: no bar) and the label (`nil`: no label).
    public struct Display: Sendable, Equatable, CustomStringConvertible {
        /// The latest progress, in `0...1`, or `nil` when there is none (at first and after a reset).
        public var progress: Double?
        /// The label to show, or `nil` for none.
        public var label: String?

        /// Creates a display value.
        public init(progress: Double?, label: String?) {
            self.progress = progress
            self.label = label
        }

        /// `(progress, "label")`, for test failures and logs.
        public var description: String {
            "(\(progress.map { "\($0)" } ?? "nil"), \(label.map { "\"\($0)\"" } ?? "nil"))"
        }
    }

    /// The least time each label stays on screen.
    public var minimumDisplayTime: Duration { policy.minimumDisplayTime }
    /// The most the screen may lag behind the newest label (see "Drop policy"); at least `minimumDisplayTime`.
    public var maximumLag: Duration { policy.maximumLag }
    /// The most labels that wait to be shown; at least 1.
    public var maximumPendingLabels: Int { policy.maximumPendingLabels }

    private let policy: LabelPacerDropPolicy
    private let scheduler: any PresentationScheduler
    private let handler: @Sendable (Display) -> Void
    private let state: Lock<LabelPacerStateMachine>
    /// Runs the handler; closed by `invalidate()`, which then waits for a call already running.
    private let gate = DeliveryGate<Void>(())

    /// Creates a pacer that calls `handler` on `queue`.
    ///
    /// - Parameters:
    ///   - minimumDisplayTime: the least time each label stays on screen (250 ms by default).
    ///   - maximumLag: the most the screen may lag behind the newest label; `nil` (the default) means
    ///     `minimumDisplayTime`, i.e. "show the newest label whenever the screen is free". Smaller values are
    ///     raised to `minimumDisplayTime`.
    ///   - maximumPendingLabels: the most labels that wait; values below 1 are raised to 1.
    ///   - queue: where `handler` runs (one call at a time, even on a concurrent queue).
    ///   - handler: receives each new `Display`.
    /// - Complexity: O(1).
    public convenience init(
        minimumDisplayTime: Duration = .milliseconds(250),
        maximumLag: Duration? = nil,
        maximumPendingLabels: Int = 16,
        queue: DispatchQueue,
        handler: @escaping @Sendable (Display) -> Void
    ) {
        self.init(
            minimumDisplayTime: minimumDisplayTime, maximumLag: maximumLag,
            maximumPendingLabels: maximumPendingLabels, scheduler: DispatchPresentationScheduler(queue: queue),
            handler: handler)
    }

    /// Creates a pacer that reads the time from `scheduler` and calls `handler` through it.
    ///
    /// Use it to drive the pacer with your own clock, for example a manual one in tests. The parameters
    /// are those of `init(minimumDisplayTime:maximumLag:maximumPendingLabels:queue:handler:)`.
    ///
    /// - Complexity: O(1).
    public init(
        minimumDisplayTime: Duration = .milliseconds(250),
        maximumLag: Duration? = nil,
        maximumPendingLabels: Int = 16,
        scheduler: some PresentationScheduler,
        handler: @escaping @Sendable (Display) -> Void
    ) {
        let minimum = max(minimumDisplayTime, .zero)
        policy = LabelPacerDropPolicy(
            minimumDisplayTime: minimum, maximumLag: max(maximumLag ?? minimum, minimum),
            maximumPendingLabels: max(maximumPendingLabels, 1))
        state = Lock(LabelPacerStateMachine(policy: policy))
        self.scheduler = scheduler
        self.handler = handler
    }

    /// Reports a message: the latest progress, a new label, or both; both `nil` resets (see `reset()`).
    ///
    /// Returns at once; the handler runs later on the scheduler. Safe from any thread.
    ///
    /// - Parameters:
    ///   - progress: the latest progress, clamped into `0...1`; `nil` or NaN leaves it unchanged (so NaN with
    ///     a `nil` label is an empty message, which resets).
    ///   - label: a new label; `nil` leaves the label unchanged.
    /// - Complexity: O(1) amortized; O(`maximumPendingLabels`) when labels are dropped.
    public func send(progress: Double?, label: String?) {
        let progress = progress.flatMap { $0.isNaN ? nil : min(max($0, 0), 1) }
        if progress == nil, label == nil {
            reset()
            return
        }
        let scheduleTurn = state.withLock { $0.send(progress: progress, label: label, now: scheduler.now) }
        if scheduleTurn { scheduleMessageTurn() }
    }

    /// Resets the display: clears the progress at once, discards the labels waiting, and removes the label on
    /// screen as soon as it has been visible for `minimumDisplayTime`. Same as `send(progress: nil, label: nil)`.
    ///
    /// - Complexity: O(`maximumPendingLabels`).
    public func reset() {
        let scheduleTurn = state.withLock { $0.reset(now: scheduler.now) }
        if scheduleTurn { scheduleMessageTurn() }
    }

    /// Stops the pacer: after it returns no new handler call starts, later messages are ignored, and a
    /// handler call already running has returned — except when waiting for it could never end, where it
    /// returns at once and that call finishes afterwards: called from inside this pacer's own handler (on the
    /// thread running it; a task started from the handler is another thread and waits), or from a handler
    /// (of a pacer or an observation) that the running call is itself waiting for, as when two handlers
    /// invalidate each other.
    ///
    /// - Complexity: O(`maximumPendingLabels`), plus the wait for a running handler.
    public func invalidate() {
        state.withLock { $0.invalidate() }
        gate.close()
    }

    /// The last display the handler received, or `nil` before the first. (The handler is not called for an
    /// empty display before anything was shown: the screen is empty to begin with.) A display that a turn
    /// chose but that `invalidate()` kept from the handler is not recorded.
    ///
    /// - Complexity: O(1).
    public var lastDelivered: Display? {
        state.withLock { $0.lastDelivered }
    }

    /// How many labels (and reset blanks) are waiting to be shown: never more than `maximumPendingLabels`.
    /// A test hook (`package`): what a user sees is `lastDelivered` and the handler's calls.
    ///
    /// - Complexity: O(1).
    package var pendingLabelCount: Int {
        state.withLock { $0.pending.count }
    }

    // MARK: Running the actions

    private func scheduleMessageTurn() {
        scheduler.schedule(after: .zero) { self.turn(timer: nil) }
    }

    /// Runs on the scheduler: asks the state machine for the turn's actions, then schedules the next turn
    /// (if the label on screen has yet to have its time) and delivers what changed.
    private func turn(timer firedDeadline: ContinuousClock.Instant?) {
        let actions = state.withLock { $0.turn(firedDeadline: firedDeadline, now: scheduler.now) }
        if let (delay, deadline) = actions.timer { scheduler.schedule(after: delay) { self.turn(timer: deadline) } }
        if let display = actions.display { deliver(display) }
    }

    /// Calls the handler through the gate, unless `invalidate()` closed it meanwhile; `lastDelivered` is
    /// recorded only when the handler receives the display.
    private func deliver(_ display: Display) {
        gate.deliver { _ in
            state.withLock { $0.delivered(display) }
            handler(display)
        }
    }
}
