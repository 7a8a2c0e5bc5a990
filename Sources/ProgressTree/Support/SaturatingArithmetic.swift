extension FixedWidthInteger where Self: SignedInteger {
    /// `self + other`, clamped to `Self.min...Self.max` instead of trapping on overflow.
    @inlinable @inline(__always)
    func addingSaturated(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        if !overflow { return sum }
        return other > 0 ? .max : .min
    }
}
