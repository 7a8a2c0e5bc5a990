/// The state of a `LabelPacer` and every decision it makes, as a value: each event (a message, a reset, a
/// turn of the scheduler, a delivery) changes the state and returns what the pacer must then do. It never
/// reads the clock (the time comes in as an argument), schedules, locks or calls the handler: `LabelPacer`
/// keeps it under its lock and runs the returned actions after unlocking.
struct LabelPacerStateMachine {
    typealias Display = LabelPacer.Display
    typealias Instant = ContinuousClock.Instant

    /// A label waiting to be shown; `nil` is the blank left by a reset.
    struct PendingLabel {
        var label: String?
        var arrival: Instant
    }

    /// What to do after a turn: schedule `timer` (delay, deadline), then deliver `display`.
    struct TurnActions {
        var timer: (delay: Duration, deadline: Instant)?
        var display: Display?
    }

    let policy: LabelPacerDropPolicy

    private var progress: Double?
    /// The label on screen, decided by the last turn.
    private var screenLabel: String?
    private var screenLabelSince: Instant?
    /// Labels waiting, oldest first, in arrival order.
    private(set) var pending: [PendingLabel] = []
    /// The last display the handler received (recorded by `delivered(_:)`, under the delivery gate).
    private(set) var lastDelivered: Display?
    private var isTurnScheduled = false
    /// The deadline of the timer already scheduled for the end of the current label's time, if any.
    private var timerDeadline: Instant?
    private(set) var isInvalidated = false

    init(policy: LabelPacerDropPolicy) {
        self.policy = policy
    }

    /// The newest label known: the last waiting one, else the one on screen.
    private var newestLabel: String? { pending.last.map(\.label) ?? screenLabel }

    /// A message with at least one of `progress` (already clamped; never NaN) and `label`.
    /// - Returns: whether the caller must schedule a turn.
    mutating func send(progress: Double?, label: String?, now: Instant) -> Bool {
        guard !isInvalidated else { return false }
        if let progress { self.progress = progress }
        if let label, label != newestLabel {
            pending.append(PendingLabel(label: label, arrival: now))
            dropStale(now: now)
        }
        return claimTurn()
    }

    /// - Returns: whether the caller must schedule a turn.
    mutating func reset(now: Instant) -> Bool {
        guard !isInvalidated else { return false }
        progress = nil
        pending.removeAll(keepingCapacity: true)
        if screenLabel != nil { pending.append(PendingLabel(label: nil, arrival: now)) }
        return claimTurn()
    }

    mutating func invalidate() {
        isInvalidated = true
        pending.removeAll()
    }

    /// A turn of the scheduler at `now`: moves the screen on if it is free, and says what changed and when
    /// the next turn is due.
    ///
    /// - Parameter firedDeadline: the deadline of the timer that runs this turn; `nil` for a turn scheduled
    ///   by a message.
    mutating func turn(firedDeadline: Instant?, now: Instant) -> TurnActions {
        if let firedDeadline {
            if timerDeadline == firedDeadline { timerDeadline = nil }
        } else {
            isTurnScheduled = false
        }
        guard !isInvalidated else { return TurnActions() }
        dropStale(now: now)
        while !pending.isEmpty, isScreenFree(now: now) {
            let next = pending.removeFirst()
            screenLabel = next.label
            screenLabelSince = now
        }
        var actions = TurnActions()
        if !pending.isEmpty, let since = screenLabelSince {
            let deadline = since + policy.minimumDisplayTime
            if timerDeadline != deadline {
                timerDeadline = deadline
                actions.timer = (deadline - now, deadline)
            }
        }
        let display = Display(progress: progress, label: screenLabel)
        // Before the first delivery the screen is empty: an empty display is not a change.
        if display != (lastDelivered ?? Display(progress: nil, label: nil)) { actions.display = display }
        return actions
    }

    /// The handler is receiving `display`.
    mutating func delivered(_ display: Display) {
        lastDelivered = display
    }

    /// Marks a turn as scheduled; returns `true` if the caller must schedule it.
    private mutating func claimTurn() -> Bool {
        if isTurnScheduled { return false }
        isTurnScheduled = true
        return true
    }

    private mutating func dropStale(now: Instant) {
        let count = policy.staleCount(arrivals: pending.lazy.map(\.arrival), now: now)
        if count > 0 { pending.removeFirst(count) }
    }

    /// Whether the next label may replace the one on screen: there is none, or it has had its minimum time.
    private func isScreenFree(now: Instant) -> Bool {
        guard screenLabel != nil, let since = screenLabelSince else { return true }
        return now - since >= policy.minimumDisplayTime
    }
}

/// The drop policy of `LabelPacer` (Docs/Presentation.md, "The drop policy"): which waiting labels newer
/// ones have made stale.
struct LabelPacerDropPolicy {
    /// The least time each label stays on screen; at least zero.
    let minimumDisplayTime: Duration
    /// The most the screen may lag behind the newest label; at least `minimumDisplayTime`.
    let maximumLag: Duration
    /// The most labels that wait; at least 1.
    let maximumPendingLabels: Int

    /// How many of the oldest waiting labels (arriving at `arrivals`, oldest first) to drop as of `now`.
    ///
    /// The oldest waiting label goes when the label after it arrived at or before `now − (maximumLag −
    /// minimumDisplayTime)` — the boundary is inclusive: the oldest could be shown at `now` at the earliest
    /// and would then hold the screen for `minimumDisplayTime`, keeping that newer label waiting longer than
    /// `maximumLag` (or exactly `maximumLag`, at the boundary, which is dropped too so that the newer label
    /// is shown at once). Since the earliest possible showing time only grows, a label dropped early would
    /// also be dropped when its turn came. The newest label is never dropped by this rule; beyond
    /// `maximumPendingLabels`, the oldest go as well.
    func staleCount<Arrivals: Collection<ContinuousClock.Instant>>(arrivals: Arrivals, now: ContinuousClock.Instant)
        -> Int
    where Arrivals.Index == Int {
        let cutoff = now - (maximumLag - minimumDisplayTime)
        var count = 0
        while arrivals.count - count >= 2, arrivals[arrivals.startIndex + count + 1] <= cutoff {
            count += 1
        }
        return max(count, arrivals.count - maximumPendingLabels)
    }
}
