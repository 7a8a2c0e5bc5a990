extension ProgressFormat {
    /// A byte count as Apple's file-size formatter (`ByteCountFormatter`, `.file` style) shows it: decimal
    /// units (1 KB = 1,000 bytes), as many fraction digits as the unit deserves, trailing zeros dropped.
    ///
    /// | bytes | text |
    /// |---|---|
    /// | 0 | "Zero KB" |
    /// | 1 | "1 byte" |
    /// | 2 … 999 | "999 bytes" |
    /// | KB (10³) | no fraction digits: "123 KB", "419 KB" |
    /// | MB (10⁶) | up to 1: "5.3 MB", "789.1 MB", "2 MB" |
    /// | GB, TB, PB, EB | up to 2: "1.61 GB", "3.22 GB", "103.92 GB", "9.22 EB" |
    ///
    /// Rounding is exact (integer arithmetic, never through `Double`), half to even like Apple's number
    /// formatters: 1,500 bytes → "2 KB", 2,500 → "2 KB", 5,250,000 → "5.2 MB". The unit is chosen after
    /// rounding, so a value that rounds up to 1,000 of a unit moves to the next one (999,999 bytes →
    /// "1 MB", never "1,000 KB"). Negative counts get a minus sign. Every `Int64` works: `Int64.max` is
    /// "9.22 EB", `Int64.min` "-9.22 EB".
    ///
    /// Thread safety: pure. Complexity: O(1).
    public static func byteCount(_ bytes: Int64) -> String {
        if bytes == 0 { return DescriptionStrings.zeroBytes }
        let text = byteCount(magnitude: bytes.magnitude)
        return bytes < 0 ? DescriptionStrings.minusSign + text : text
    }

    /// A completed byte count beside its total, for a display that puts the two side by side: like
    /// `byteCount(_:)`, but 0 is "0 bytes" (not Apple's "Zero KB", which reads oddly before a total), and an
    /// amount short of its total is rounded down, so that it never reads as the total ("1.9 MB of 2 MB" at
    /// 97%, not "2 MB of 2 MB").
    static func completedByteCount(_ bytes: Int64, of total: Int64) -> String {
        if bytes == 0 { return DescriptionStrings.bytes("0", plural: true) }
        guard bytes > 0, bytes < total else { return byteCount(bytes) }
        return byteCount(magnitude: bytes.magnitude, roundingDown: true)
    }

    /// A rate in bytes per second: "2 KB/s", "789.1 MB/s". `nil` for a rate below 1 byte per second (zero or
    /// negative), which has nothing meaningful to show.
    ///
    /// Thread safety: pure. Complexity: O(1).
    public static func throughput(_ bytesPerSecond: Int) -> String? {
        guard bytesPerSecond > 0 else { return nil }
        return DescriptionStrings.perSecond(byteCount(Int64(clamping: bytesPerSecond)))
    }

    private static func byteCount(magnitude bytes: UInt64, roundingDown: Bool = false) -> String {
        if bytes < 1000 { return DescriptionStrings.bytes(String(bytes), plural: bytes != 1) }
        // Units 10^3 … 10^18, with 0, 1, then 2 fraction digits: the first unit, from KB up, whose rounded
        // value stays below 1,000.
        var unitIndex = 0
        var unitSize: UInt64 = 1000
        while true {
            let fractionDigits = min(unitIndex, 2)
            let scale = powersOf10[fractionDigits]
            let quantum = unitSize / scale
            let scaled = roundingDown ? bytes / quantum : roundedHalfEven(bytes, dividedBy: quantum)
            if scaled >= 1000 * scale, unitIndex + 1 < DescriptionStrings.byteUnits.count {
                unitIndex += 1
                unitSize *= 1000
                continue
            }
            return DescriptionStrings.byteAmount(
                decimal(scaled, fractionDigits: fractionDigits), unit: DescriptionStrings.byteUnits[unitIndex])
        }
    }

    /// `value / divisor` rounded half to even, exactly.
    private static func roundedHalfEven(_ value: UInt64, dividedBy divisor: UInt64) -> UInt64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        // The remainder against the distance to the next multiple: no doubling, so no overflow.
        let toNext = divisor - remainder
        return remainder > toNext || (remainder == toNext && quotient % 2 == 1) ? quotient + 1 : quotient
    }

    /// `scaled / 10^fractionDigits` as text, trailing zeros (and a bare point) dropped: 7891 → "789.1",
    /// 161 with 2 digits → "1.61", 200 with 2 digits → "2".
    private static func decimal(_ scaled: UInt64, fractionDigits: Int) -> String {
        let scale = powersOf10[fractionDigits]
        let whole = ProgressFormat.grouped(String(scaled / scale))
        // The fraction without its trailing zeros, in integers (no character is looked at), then its
        // leading zeros (5 hundredths: "05").
        var fraction = scaled % scale
        guard fraction > 0 else { return whole }
        var digits = fractionDigits
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return whole + DescriptionStrings.decimalSeparator + String(repeating: "0", count: digits - text.count) + text
    }

    /// 10^0 … 10^2: the scales of the fraction digits a byte count shows.
    private static let powersOf10: [UInt64] = [1, 10, 100]
}
