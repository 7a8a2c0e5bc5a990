/// The whole percentage a line shows, in every mode: `fractionCompleted` rounded down, and 100% only
/// when the node finished.
enum WholePercent {
    /// `fraction` × 100, rounded down, capped at 99 unless `isFinished`.
    ///
    /// The product is first rounded to a millionth of a percent: binary floating point makes 0.29 × 100
    /// 28.999999999999996, and rounding that down would show 28% for 29 of 100.
    static func of(_ fraction: Double, isFinished: Bool) -> Int {
        guard fraction.isFinite else { return 0 }
        let percent = (min(max(fraction, 0), 1) * 100 * 1e6).rounded() / 1e6
        let whole = Int(percent.rounded(.down))
        return isFinished ? whole : min(whole, 99)
    }
}
