/// The formatters behind the default descriptions, for user interfaces that compose their own text (a
/// terminal line, a table cell) and want the same numbers as `localizedDescription`.
///
/// English, the same on every platform, no Foundation. Each function is pure: thread-safe and O(digits).
/// The exact rules are in `Docs/Descriptions.md`.
public enum ProgressFormat {
    /// A fraction as a whole percentage, rounded half to even as Apple's percent formatter does:
    /// `0.3` → "30%", `0.125` → "12%", `0.135` → "14%". The fraction is clamped to `0...1`; not a number
    /// gives "0%".
    ///
    /// Rounding works on the shortest decimal form of the `Double` (what `print` shows), so
    /// `0.29` → "29%" although `0.29 * 100` is `28.999999999999996`.
    public static func percent(_ fraction: Double) -> String {
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        return DescriptionStrings.percent(String(DecimalRounding.roundedHalfEven(clamped, shiftedBy: 2)))
    }

    /// An integer with grouping separators: 1234567 → "1,234,567"; -42 → "-42".
    public static func count<Number: BinaryInteger>(_ value: Number) -> String {
        let digits = grouped(String(UInt64(clamping: value.magnitude)))
        return value < 0 ? DescriptionStrings.minusSign + digits : digits
    }

    /// `"1234567"` → `"1,234,567"`.
    static func grouped(_ digits: String) -> String {
        guard digits.count > 3 else { return digits }
        var result = ""
        result.reserveCapacity(digits.count + digits.count / 3)
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += DescriptionStrings.groupingSeparator }
            result.append(digit)
        }
        return result
    }
}

/// Decimal rounding of `Double`s as number formatters do it: on the shortest decimal representation of the
/// value (the digits `description` prints), half to even.
enum DecimalRounding {
    /// `value × 10^shift`, rounded half to even to an integer; `value` must be finite, not negative and
    /// small enough for the result to fit (callers pass fractions).
    static func roundedHalfEven(_ value: Double, shiftedBy shift: Int) -> Int {
        guard value.isFinite, value > 0 else { return 0 }
        // `description` is the shortest string that reads back as `value`: "0.3", "1e-05", "0.30000000000000004".
        let parts = value.description.split(separator: "e", maxSplits: 1)
        let exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
        let integerDigitCount = parts[0].prefix { $0 != "." }.count
        let digits = parts[0].compactMap(\.wholeNumberValue)
        // value = 0.d₁d₂d₃… × 10^pointPosition; the result keeps the digits before position `pointPosition`.
        let pointPosition = integerDigitCount + exponent + shift
        var result = 0
        for index in 0..<max(pointPosition, 0) {
            result = result * 10 + (index < digits.count ? digits[index] : 0)
        }
        let rest =
            pointPosition >= 0
            ? Array(digits.dropFirst(pointPosition)) : Array(repeating: 0, count: -pointPosition) + digits
        guard let first = rest.first else { return result }
        if first > 5 || (first == 5 && (rest.dropFirst().contains { $0 != 0 } || result % 2 == 1)) {
            result += 1
        }
        return result
    }
}
