extension ProgressFormat {
    /// The longest time remaining worth showing: 100 years. Longer estimates are noise (a rate that
    /// collapsed to almost nothing), not information. `package`: the terminal module applies the same cap;
    /// users see it through `timeRemaining(_:)` returning `nil`.
    package static let longestTimeRemaining: Double = 100 * 365 * 86_400

    /// A time remaining in one unit, as Apple's descriptions show it: "2 minutes remaining",
    /// "1 minute remaining", "45 seconds remaining", "3 hours remaining", "2 days remaining".
    ///
    /// The unit is the largest that the rounded value reaches: the seconds are rounded (half away from
    /// zero) and shown as seconds below 60; otherwise the minutes, rounded, below 60; then hours below 24;
    /// then days. So 89 s is "1 minute", 90 s "2 minutes", 59.6 s "1 minute", 3,570 s "1 hour". A positive
    /// time below half a second still shows "1 second remaining" (work that is not done is never "0
    /// seconds" away); exactly 0 shows "0 seconds remaining".
    ///
    /// Fallback: `nil` (nothing to show) for a negative, not-a-number or infinite time, or one longer than
    /// 100 years.
    ///
    /// Thread safety: pure. Complexity: O(1).
    public static func timeRemaining(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0, seconds <= longestTimeRemaining else { return nil }
        let wholeSeconds = Int(seconds.rounded(.toNearestOrAwayFromZero))
        if wholeSeconds < 60 {
            return DescriptionStrings.remaining(seconds > 0 ? max(wholeSeconds, 1) : 0, .second)
        }
        let minutes = Int((seconds / 60).rounded(.toNearestOrAwayFromZero))
        if minutes < 60 { return DescriptionStrings.remaining(minutes, .minute) }
        let hours = Int((seconds / 3600).rounded(.toNearestOrAwayFromZero))
        if hours < 24 { return DescriptionStrings.remaining(hours, .hour) }
        let days = Int((seconds / 86_400).rounded(.toNearestOrAwayFromZero))
        return DescriptionStrings.remaining(days, .day)
    }
}
