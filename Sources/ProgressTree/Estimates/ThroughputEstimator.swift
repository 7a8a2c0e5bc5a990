import ProgressTreePlatform

/// A smoothed rate of a growing quantity (bytes, units of work), estimated from samples taken whenever
/// somebody reads it — never by the code doing the work.
///
/// The estimate is an exponentially time-weighted average of the rate: data loses 90 % of its weight in
/// `responseTime` (5 seconds by default), whatever the number or spacing of the samples. In formulas, with
/// `τ = responseTime / ln 10`, the estimator keeps, as of the last sample that saw the value grow,
///
/// - `U = Σ Δuᵢ · τ(1 − e^(−Δtᵢ/τ))/Δtᵢ · e^(−ageᵢ/τ)`: the units, each interval's spread evenly over it,
/// - `T = Σ τ(1 − e^(−Δtᵢ/τ)) · e^(−ageᵢ/τ)`: the time they took, weighted the same way,
///
/// and reports `U / T`. A steady rate is therefore reported exactly, however irregular the reads, and the
/// first estimate is simply the average since the first sample (no start-up bias, no warm-up).
///
/// - Bursts: units seen by one sample are spread over the whole time since the last sample that saw the
///   value grow, so work reported in chunks (1 MB every 2 s) gives the exact average rate at each chunk,
///   not a spike followed by a collapse. A single burst of `N` units raises the estimate by at most
///   `N / τ`, however short the interval it arrived in (a naive `Δu/Δt` would be unbounded).
/// - Stalls: between samples that see growth the estimate holds for the usual gap between growths (the
///   mean gap, weighted by age like the rest, at most `responseTime`), then decays as if the stall were a sample
///   of zero units: after a stall of `s` seconds beyond the usual gap, the rate is
///   `U·d / (T·d + τ(1 − d))` with `d = e^(−s/τ)` — one tenth of the rate once `s` reaches `responseTime`
///   after a long steady run.
/// - Rate changes: after a long run at rate `r` followed by a run at `r′`, the estimate is
///   `r′ + (r − r′)·e^(−t/τ)`: 90 % of the way to `r′` after `responseTime`.
/// - Pauses: between `pause(at:)` and `resume(at:)` the estimator's time stands still, so paused time is
///   neither a stall nor part of any interval.
/// - A value that goes down (a restart) resets the estimator; non-finite values and times that go back
///   are ignored.
///
/// Thread safety: a value type (`Sendable`); a node keeps its estimators under its own lock.
/// Complexity: O(1) time and memory per call.
public struct ThroughputEstimator: Sendable, Equatable {
    /// ln 10: a time constant `τ` gives weight 0.1 to data `τ·ln 10` old.
    private static let ln10 = 2.302585092994045684

    /// The default `responseTime`: 5 seconds.
    public static let defaultResponseTime: Duration = .seconds(5)

    /// The time in which old data loses 90 % of its weight, and in which the estimate covers 90 % of a
    /// step change in rate.
    public let responseTime: Duration
    /// The time constant `τ = responseTime / ln 10`, in seconds.
    private let tau: Double

    /// The value and active time of the last sample that saw growth (or of the first sample).
    private var anchorValue = 0.0
    private var anchorTime = 0.0
    private var hasAnchor = false
    /// The active time of the first sample (since the last reset).
    private var startTime = 0.0
    /// `U` and `T`, and the decayed number of growths and sum of the gaps between them (their ratio is
    /// the usual gap), all as of `anchorTime`; meaningful once `hasRate`.
    private var weightedUnits = 0.0
    private var weightedTime = 0.0
    private var weightedGrowths = 0.0
    private var weightedGaps = 0.0
    private var hasRate = false
    /// Wall time at which the current pause began, and the wall time excluded by earlier pauses.
    private var pausedAt: Double?
    private var excludedTime = 0.0

    /// Creates an estimator. A `responseTime` that is not positive falls back to the default.
    public init(responseTime: Duration = ThroughputEstimator.defaultResponseTime) {
        let seconds = responseTime.secondsValue
        self.responseTime = seconds > 0 && seconds.isFinite ? responseTime : Self.defaultResponseTime
        tau = self.responseTime.secondsValue / Self.ln10
    }

    /// Whether the estimator's time is stopped by `pause(at:)`.
    public var isPaused: Bool { pausedAt != nil }

    /// Stops the estimator's time at `time`; it stays still until `resume(at:)`. Does nothing if paused.
    public mutating func pause(at time: Duration) {
        if pausedAt == nil { pausedAt = time.secondsValue }
    }

    /// Restarts the estimator's time at `time`, excluding the paused interval. Does nothing if not paused.
    public mutating func resume(at time: Duration) {
        guard let start = pausedAt else { return }
        excludedTime += max(0, time.secondsValue - start)
        pausedAt = nil
    }

    /// Records that the quantity was `value` at `time`.
    ///
    /// Call it whenever the estimate is about to be read; calls with no new time or no growth are cheap.
    /// A decrease resets the estimator (the next growth starts a new estimate).
    public mutating func record(_ value: Double, at time: Duration) {
        guard value.isFinite else { return }
        let now = activeTime(at: time)
        if hasAnchor && value < anchorValue { reset() }
        guard hasAnchor else {
            (anchorValue, anchorTime, startTime, hasAnchor) = (value, now, now, true)
            return
        }
        let units = value - anchorValue
        let interval = now - anchorTime
        // No growth yet: keep the anchor, so the next growth is spread over the whole gap. Growth with no
        // time passed (paused, or two reads at one instant): wait until time has passed.
        guard units > 0, interval > 0 else { return }
        let decay = exponential(-interval / tau)
        let weight = tau * -exponentialMinusOne(-interval / tau)  // τ(1 − e^(−Δt/τ)), exact for tiny Δt
        weightedUnits = weightedUnits * decay + units * weight / interval
        weightedTime = weightedTime * decay + weight
        weightedGrowths = weightedGrowths * decay + 1
        weightedGaps = weightedGaps * decay + interval
        (anchorValue, anchorTime, hasRate) = (value, now, true)
    }

    /// The estimated rate in units per second at `time`; `nil` before the value has been seen to grow, and
    /// during the warm-up: until a tenth of `responseTime` (half a second by default) has passed since the
    /// first sample, so that two reads microseconds apart around a jump are not mistaken for a rate.
    ///
    /// Reading does not change the estimator: a stall is accounted for from the time elapsed since the last
    /// growth, so reading often or rarely gives the same answer.
    public func rate(at time: Duration) -> Double? {
        guard hasRate, weightedTime > 0, weightedGrowths > 0 else { return nil }
        let now = activeTime(at: time)
        guard now - startTime >= responseTime.secondsValue / 10 else { return nil }
        let usualGap = min(weightedGaps / weightedGrowths, responseTime.secondsValue)
        let stall = max(0, now - anchorTime - usualGap)
        guard stall > 0 else { return weightedUnits / weightedTime }
        let decay = exponential(-stall / tau)
        return weightedUnits * decay / (weightedTime * decay + tau * -exponentialMinusOne(-stall / tau))
    }

    /// The time, in seconds, to do `remaining` more units at the estimated rate, or `nil` when there is no
    /// rate yet, the rate is zero or the result is not finite.
    public func timeRemaining(for remaining: Double, at time: Duration) -> Double? {
        guard remaining.isFinite, remaining >= 0, let rate = rate(at: time), rate > 0 else { return nil }
        let seconds = remaining / rate
        return seconds.isFinite ? seconds : nil
    }

    /// Forgets every sample (the pause state is kept).
    public mutating func reset() {
        var fresh = ThroughputEstimator(responseTime: responseTime)
        fresh.pausedAt = pausedAt
        fresh.excludedTime = excludedTime
        self = fresh
    }

    /// Seconds of unpaused time at wall time `time`. Never earlier than the anchor, even if a clock
    /// misbehaves.
    private func activeTime(at time: Duration) -> Double {
        let active = (pausedAt ?? time.secondsValue) - excludedTime
        return hasAnchor ? max(active, anchorTime) : active
    }
}
