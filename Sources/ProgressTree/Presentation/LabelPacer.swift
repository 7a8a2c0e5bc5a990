import Dispatch

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
/// label to show: it drops the oldest waiting label while the label *after it* has already waited more than
/// `maximumLag − minimumDisplayTime` (showing the older one for its minimum time would keep the newer one
/// waiting beyond `maximumLag`). The newest label is never dropped. When more than `maximumPendingLabels`
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
/// pacer holds the lock of its state (a second lock, held around the call, lets `invalidate()` wait for it).
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
    public let minimumDisplayTime: Duration
    /// The most the screen may lag behind the newest label (see "Drop policy"); at least `minimumDisplayTime`.
    public let maximumLag: Duration
    /// The most labels that wait to be shown; at least 1.
    public let maximumPendingLabels: Int

    private let scheduler: any PresentationScheduler
    private let handler: @Sendable (Display) -> Void
    private let state = Lock(State())
    /// Held while the handler runs, so that `invalidate()` can wait for a running call. Never held together
    /// with `state` by `invalidate()`, so the handler may call any method of the pacer.
    private let delivery = Lock(())

    private struct PendingLabel {
        /// `nil` is the blank left by a reset.
        var label: String?
        var arrival: ContinuousClock.Instant
    }

    private struct State {
        var progress: Double?
        /// The label on screen, decided by the last turn.
        var screenLabel: String?
        var screenLabelSince: ContinuousClock.Instant?
        /// Labels waiting, oldest first, in arrival order.
        var pending: [PendingLabel] = []
        var lastDelivered: Display?
        var isTurnScheduled = false
        /// The deadline of the timer already scheduled for the end of the current label's time, if any.
        var timerDeadline: ContinuousClock.Instant?
        var isInvalidated = false

        /// The newest label known: the last waiting one, else the one on screen.
        var newestLabel: String? { pending.last.map(\.label) ?? screenLabel }
    }

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
        self.minimumDisplayTime = minimum
        self.maximumLag = max(maximumLag ?? minimum, minimum)
        self.maximumPendingLabels = max(maximumPendingLabels, 1)
        self.scheduler = scheduler
        self.handler = handler
    }

    /// Reports a message: the latest progress, a new label, or both; both `nil` resets (see `reset()`).
    ///
    /// Returns at once; the handler runs later on the scheduler. Safe from any thread.
    ///
    /// - Parameters:
    ///   - progress: the latest progress, clamped into `0...1`; `nil` or NaN leaves it unchanged.
    ///   - label: a new label; `nil` leaves the label unchanged.
    /// - Complexity: O(1) amortized; O(`maximumPendingLabels`) when labels are dropped.
    public func send(progress: Double?, label: String?) {
        let progress = progress.flatMap { $0.isNaN ? nil : min(max($0, 0), 1) }
        if progress == nil, label == nil {
            reset()
            return
        }
        let scheduleTurn = state.withLock { state -> Bool in
            guard !state.isInvalidated else { return false }
            if let progress { state.progress = progress }
            if let label, label != state.newestLabel {
                state.pending.append(PendingLabel(label: label, arrival: scheduler.now))
                dropStale(&state, now: state.pending[state.pending.count - 1].arrival)
            }
            return claimTurn(&state)
        }
        if scheduleTurn { scheduler.schedule(after: .zero) { self.turn(timer: nil) } }
    }

    /// Resets the display: clears the progress at once, discards the labels waiting, and removes the label on
    /// screen as soon as it has been visible for `minimumDisplayTime`. Same as `send(progress: nil, label: nil)`.
    ///
    /// - Complexity: O(`maximumPendingLabels`).
    public func reset() {
        let scheduleTurn = state.withLock { state -> Bool in
            guard !state.isInvalidated else { return false }
            state.progress = nil
            state.pending.removeAll(keepingCapacity: true)
            if state.screenLabel != nil {
                state.pending.append(PendingLabel(label: nil, arrival: scheduler.now))
            }
            return claimTurn(&state)
        }
        if scheduleTurn { scheduler.schedule(after: .zero) { self.turn(timer: nil) } }
    }

    /// Stops the pacer: after it returns no new handler call starts, and later messages are ignored.
    /// Called from outside the handler, it also waits for a handler call already running; called from
    /// inside the handler, it returns at once (the running call then finishes).
    ///
    /// - Complexity: O(`maximumPendingLabels`), plus the wait for a running handler.
    public func invalidate() {
        state.withLock { state in
            state.isInvalidated = true
            state.pending.removeAll()
        }
        if !LabelPacerContext.isInsideHandler {
            delivery.withLock { _ in }  // wait for a call that passed its check before the flag was set
        }
    }

    /// The last display delivered to the handler, or `nil` before the first delivery. (The handler is not
    /// called for an empty display before anything was shown: the screen is empty to begin with.)
    ///
    /// - Complexity: O(1).
    public var lastDelivered: Display? {
        state.withLock { $0.lastDelivered }
    }

    /// How many labels (and reset blanks) are waiting to be shown: never more than `maximumPendingLabels`.
    /// For diagnostics and tests.
    ///
    /// - Complexity: O(1).
    public var pendingLabelCount: Int {
        state.withLock { $0.pending.count }
    }

    // MARK: The turn

    /// Marks a turn as scheduled; returns `true` if the caller must schedule it.
    private func claimTurn(_ state: inout State) -> Bool {
        if state.isTurnScheduled { return false }
        state.isTurnScheduled = true
        return true
    }

    /// Drops waiting labels made stale by newer ones (the drop policy), as of `now`.
    ///
    /// The oldest waiting label goes when the label after it arrived at or before `now − (maximumLag −
    /// minimumDisplayTime)`: the oldest could be shown at `now` at the earliest and would then hold the screen
    /// for `minimumDisplayTime`, keeping that newer label waiting longer than `maximumLag`. Since the earliest
    /// possible showing time only grows, a label dropped early would also be dropped when its turn came.
    private func dropStale(_ state: inout State, now: ContinuousClock.Instant) {
        let cutoff = now - (maximumLag - minimumDisplayTime)
        var dropCount = 0
        while state.pending.count - dropCount >= 2, state.pending[dropCount + 1].arrival <= cutoff {
            dropCount += 1
        }
        dropCount = max(dropCount, state.pending.count - maximumPendingLabels)
        if dropCount > 0 { state.pending.removeFirst(dropCount) }
    }

    /// Runs on the scheduler: moves the screen on if it is free, delivers what changed, and schedules the
    /// next turn for when the label on screen has had its time.
    ///
    /// - Parameter timer: the deadline of the timer that runs this turn; `nil` for a turn scheduled by a message.
    private func turn(timer firedDeadline: ContinuousClock.Instant?) {
        let (display, timer) = state.withLock { state -> (Display?, (Duration, ContinuousClock.Instant)?) in
            if let firedDeadline {
                if state.timerDeadline == firedDeadline { state.timerDeadline = nil }
            } else {
                state.isTurnScheduled = false
            }
            guard !state.isInvalidated else { return (nil, nil) }
            let now = scheduler.now
            dropStale(&state, now: now)
            while !state.pending.isEmpty, isScreenFree(state, now: now) {
                let next = state.pending.removeFirst()
                state.screenLabel = next.label
                state.screenLabelSince = now
            }
            var timer: (Duration, ContinuousClock.Instant)?
            if !state.pending.isEmpty, let since = state.screenLabelSince {
                let deadline = since + minimumDisplayTime
                if state.timerDeadline != deadline {
                    state.timerDeadline = deadline
                    timer = (deadline - now, deadline)
                }
            }
            let display = Display(progress: state.progress, label: state.screenLabel)
            // Before the first delivery the screen is empty: an empty display is not a change.
            guard display != (state.lastDelivered ?? Display(progress: nil, label: nil)) else { return (nil, timer) }
            state.lastDelivered = display
            return (display, timer)
        }
        if let (delay, deadline) = timer { scheduler.schedule(after: delay) { self.turn(timer: deadline) } }
        if let display { deliver(display) }
    }

    /// Calls the handler under the delivery gate, unless the pacer was invalidated meanwhile: `invalidate()`
    /// sets the flag, then takes the gate, so once it returns no call can start (the flag is checked under
    /// the gate) and none is still running.
    private func deliver(_ display: Display) {
        delivery.withLock { _ in
            guard !state.withLock({ $0.isInvalidated }) else { return }
            LabelPacerContext.$isInsideHandler.withValue(true) { handler(display) }
        }
    }

    /// Whether the next label may replace the one on screen: there is none, or it has had its minimum time.
    private func isScreenFree(_ state: State, now: ContinuousClock.Instant) -> Bool {
        guard state.screenLabel != nil, let since = state.screenLabelSince else { return true }
        return now - since >= minimumDisplayTime
    }
}

/// Whether the current code runs inside a `LabelPacer` handler: `invalidate()` called from there must not
/// wait for the handler that called it.
private enum LabelPacerContext {
    @TaskLocal static var isInsideHandler = false
}
