extension Duration {
    /// The whole duration in attoseconds, from `components` (the standard library's own `attoseconds`
    /// needs Swift 6.2).
    package var totalAttoseconds: Int128 {
        let (seconds, attoseconds) = components
        return Int128(seconds) * 1_000_000_000_000_000_000 + Int128(attoseconds)
    }

    /// The duration in whole nanoseconds (truncated), clamped to 0 through 100 years, so that adding it to
    /// a `DispatchTime` cannot overflow.
    package var nanosecondsForDispatch: Int {
        let nanoseconds = totalAttoseconds / 1_000_000_000
        return Int(max(0, min(nanoseconds, Int128(100 * 365 * 86_400) * 1_000_000_000)))
    }

    /// The duration in whole milliseconds, rounded up (so that a wait of it is never too short), clamped
    /// to 0 through `Int32.max`: a timeout for `poll`.
    package var pollMilliseconds: Int32 {
        let milliseconds = (totalAttoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(0, min(milliseconds, Int128(Int32.max))))
    }
}
