// Sampling the estimators. This runs only when somebody reads an estimate (`throughput`,
// `estimatedTimeRemaining`, `localizedAdditionalDescription`, an observer or renderer reading one of them):
// never in `advance(by:)` or the count setters, which stay lock-free and allocation-free.

extension ProgressNode {
    /// The clock of this node's throughput and time-remaining estimates; `nil` (the default) uses the
    /// nearest ancestor's clock, or `SystemProgressClock` when no ancestor has one.
    ///
    /// Set a `ManualProgressClock` on a root to make every estimate in the tree exact in tests.
    ///
    /// Thread safety: any thread. Complexity: O(1) to set; reading estimates looks the clock up in O(depth).
    public var estimationClock: (any ProgressClock)? {
        get { state.withLock { $0.metadata.extras?.clock } }
        set {
            // The old clock leaves the lock before it is released: its deinit may be user code.
            let replaced = state.withLock { state -> (any ProgressClock)? in
                if newValue == nil && state.metadata.extras == nil { return nil }
                let old = state.metadata.extrasForWriting().clock
                state.metadata.extrasForWriting().clock = newValue
                return old
            }
            withExtendedLifetime(replaced) {}
        }
    }

    /// This node's clock, or its nearest ancestor's, or the system clock. One node lock at a time.
    func resolvedEstimationClock() -> any ProgressClock {
        for node in sequence(first: self, next: \.parent) {
            if let clock = node.estimationClock { return clock }
        }
        return SystemProgressClock()
    }

    /// Estimated values at one instant.
    struct Estimates {
        /// Bytes per second of the subtree's files; `nil` without bytes, before a rate is known, or when
        /// finished or cancelled.
        var bytesPerSecond: Double?
        /// Seconds until `fractionCompleted` reaches 1 at the estimated rate; 0 when finished, `nil` when
        /// indeterminate, cancelled (it will never finish) or before a rate is known.
        var secondsRemaining: Double?
    }

    /// What the estimators need, read from the node first (outside the node's lock: `fractionCompleted`
    /// and the file summary take locks of their own).
    struct EstimationInput {
        var fraction: Double
        var completed: Int64
        var total: Int64
        /// The subtree's files, when the caller wants the byte rate.
        var files: FileSummary?
        /// The undone share of the children cancelled on their own (`undoneShareOfCancelledChildren()`).
        var cancelledUndone: Double = 0
    }

    /// Samples the estimators with `input` at the current time of the node's clock and returns the
    /// estimates.
    ///
    /// Pausing: this is the single place where the node's pause state (`isPaused`) reaches the
    /// estimators. A pause is noticed by the first sample after it (and a resume likewise), so paused time
    /// is excluded to within the interval between two reads — a renderer reads several times a second.
    ///
    /// Cancelling and failing: a cancelled or failed node (or one below a cancelled ancestor) will never
    /// finish, so it has no estimates — no rate decaying toward "1 byte/s" and no time remaining growing
    /// toward "122 days" — and its estimators are not sampled.
    func sampleEstimates(_ input: EstimationInput) -> Estimates {
        if isCancelled || isFailed { return Estimates() }
        let now = resolvedEstimationClock().now
        let paused = isPaused
        let finished = FractionMath.isFinished(completed: input.completed, total: input.total)
        let measurable =
            !FractionMath.isIndeterminate(completed: input.completed, total: input.total) && input.total > 0
        let work = measurable ? input.fraction * Double(input.total) : nil
        let bytes = input.files.flatMap { files in
            files.totalByteCount > 0 || files.completedByteCount > 0 ? Double(files.completedByteCount) : nil
        }
        return state.withLock { state in
            let estimation = state.metadata.extrasForWriting()
            if paused {
                estimation.work.pause(at: now)
                estimation.bytes.pause(at: now)
            } else {
                estimation.work.resume(at: now)
                estimation.bytes.resume(at: now)
            }
            var estimates = Estimates()
            if let work {
                estimation.work.record(work, at: now)
                // The work its failed children left undone is not remaining: it never will be done. A node
                // whose running work is all done but for that has 0 s left (it ends failed, or is ended).
                let undone = (state.hasExtras ? state.control.outcomes.failedRemainder : 0) + input.cancelledUndone
                let remaining = max(0, Double(input.total) - work - undone)
                estimates.secondsRemaining = finished ? 0 : estimation.work.timeRemaining(for: remaining, at: now)
            } else if finished {
                estimates.secondsRemaining = 0
            }
            if let bytes {
                estimation.bytes.record(bytes, at: now)
                if !finished { estimates.bytesPerSecond = estimation.bytes.rate(at: now) }
            }
            return estimates
        }
    }

    /// Reads the node and samples its estimators; `withBytes` also walks the subtree for the byte rate.
    func currentEstimates(withBytes: Bool) -> Estimates {
        let fraction = fractionCompleted
        let input = EstimationInput(
            fraction: fraction, completed: completedUnitCount, total: totalUnitCount,
            files: withBytes ? subtreeFiles().summary : nil, cancelledUndone: undoneShareOfCancelledChildren())
        return sampleEstimates(input)
    }

    /// The units of this node that its children cancelled on their own will not do: for each such child
    /// still attached and unfinished, its pending units times what it has left (`1 − fractionCompleted`).
    /// A cancelled child never finishes, so that is not work remaining. Read outside every lock, one node
    /// lock at a time; O(children cancelled on their own), nothing when there is none.
    func undoneShareOfCancelledChildren() -> Double {
        let children = state.withLock { state -> [ProgressNode] in
            guard state.hasExtras, !state.control.outcomes.cancelledChildren.isEmpty else { return [] }
            state.control.outcomes.cancelledChildren.removeAll { $0.node == nil }
            return state.control.outcomes.cancelledChildren.compactMap(\.node)
        }
        var undone = 0.0
        for child in children where child.parent === self && !child.isFinished {
            undone += Double(child.pendingInParent.load(ordering: .relaxed)) * (1 - child.fractionCompleted)
        }
        return undone
    }

    /// A rate or count as an `Int`, rounded, clamped to `Int`'s range; `nil` when not finite.
    static func roundedInt(_ value: Double) -> Int? {
        guard value.isFinite else { return nil }
        let rounded = value.rounded()
        if rounded >= 9.2e18 { return Int.max }
        if rounded <= -9.2e18 { return Int.min }
        return Int(rounded)
    }
}
