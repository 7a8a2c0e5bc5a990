/// The pure arithmetic of progress: the rules that decide, from a pair of unit counts, whether work is
/// indeterminate or finished and how far along it is.
///
/// Kept free of any state so that every rule (the table in `Docs/Composition.md`) has exactly one
/// implementation, used by the node, its parent's aggregation and the tests alike.
@usableFromInline
enum FractionMath {
    /// `true` when progress cannot be measured: a negative count, or no work counted at all (0 of 0).
    @inline(__always)
    static func isIndeterminate(completed: Int64, total: Int64) -> Bool {
        total < 0 || completed < 0 || (total == 0 && completed == 0)
    }

    /// `true` when the work is done: all units of a positive total, or any unit of a zero total.
    @inlinable @inline(__always)
    static func isFinished(completed: Int64, total: Int64) -> Bool {
        (completed >= total && total > 0) || (completed > 0 && total == 0)
    }

    /// The fraction of `total` covered by `completed` own units plus `childUnits` (partial work of
    /// attached children, already weighted into this node's units).
    ///
    /// Always finite and within `0...1`: an indeterminate pair gives 0, overshoot is clamped to 1.
    @inline(__always)
    static func fraction(completed: Int64, total: Int64, childUnits: Double = 0) -> Double {
        if isIndeterminate(completed: completed, total: total) { return 0 }
        if total == 0 || completed >= total { return 1 }
        // Both counts are positive and completed < total here; the child units are never negative.
        return min(1, (Double(completed) + childUnits) / Double(total))
    }
}
