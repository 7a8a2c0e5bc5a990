/// A value that crosses the wire format as a property (`Docs/WireFormat.md`, "Properties"): what JSON
/// carries exactly between programs in any language.
///
/// Crossable, and so valid in a line:
/// - `bool`: `true` or `false`;
/// - `integer`: within ±(2^53 − 1), the integers every JSON reader (JavaScript's included) holds exactly;
/// - `number`: a finite `Double` (no NaN, no infinity), written in the shortest form that reads back to the
///   same `Double`;
/// - `string`: any text (escaped as RFC 8259 says);
/// - `array`: an array of the four above, not nested (`[1,2]`, `["disk","slow"]`; not `[[1]]`).
///
/// A value outside these (`isCrossable` is `false`) is never written: a writer leaves it out of the line and
/// counts it (`ProgressWireRecord.skippedProperties`).
///
/// Thread safety: a value type; `Sendable`.
public enum ProgressWireValue: Sendable, Hashable {
    /// `true` or `false`.
    case bool(Bool)
    /// An integer within ±`maximumInteger`.
    case integer(Int64)
    /// A finite number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array of `bool`, `integer`, `number` and `string` values (not of arrays).
    case array([ProgressWireValue])

    /// The largest magnitude of an `integer` that crosses: 2^53 − 1.
    public static let maximumInteger: Int64 = (1 << 53) - 1

    /// Whether the value may be written: an integer within ±`maximumInteger`, a finite number, or an array
    /// of such scalars, strings and booleans.
    public var isCrossable: Bool {
        switch self {
        case .bool, .string: true
        case .integer(let value): value.magnitude <= UInt64(Self.maximumInteger)
        case .number(let value): value.isFinite
        case .array(let elements):
            elements.allSatisfy { element in
                if case .array = element { return false }
                return element.isCrossable
            }
        }
    }

    /// The value as JSON spells it in a line (`2`, `2.5`, `true`, `"text"`, `["a","b"]`); `nil` when it is
    /// not crossable. The plain log shows property values so, too (`name=value`).
    public var jsonText: String? {
        guard isCrossable else { return nil }
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value's JSON to `out`; the caller checked `isCrossable`.
    func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): out.append(contentsOf: String(value).utf8)
        case .number(let value):
            // The shortest digits that read back to the same Double: "2500000.0", "0.1", "1e-09".
            out.append(contentsOf: value.description.utf8)
        case .string(let text): out.append(contentsOf: ProgressWireRecord.jsonString(text).utf8)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }
}
