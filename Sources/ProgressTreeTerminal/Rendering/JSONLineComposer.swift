/// Writes one JSON object per line for each node whose state changed: a stable schema for other programs.
///
/// Schema (every key always present; `null` where unknown):
/// ```
/// {"time":1.25,"id":2,"parent":1,"name":"IMG_0001.jpg","completed":4500000,"total":9000000,
///  "fraction":0.5,"state":"running","indeterminate":false,"throughput":1200000,"timeRemaining":3.75,
///  "reason":null,"failedBelow":0,"cancelledBelow":0}
/// ```
/// - `time`: seconds since the renderer started. `id`: stable for the life of the renderer; `parent`: the
///   parent's id, `null` for the root. `state`: `running`, `paused`, `cancelled`, `failed` or `finished`.
/// - `reason`: why a `failed` node failed (`null` otherwise); `failedBelow` and `cancelledBelow`: how many
///   nodes below this one failed and were cancelled.
/// - `throughput` is in bytes (units) per second; `timeRemaining` in seconds.
struct JSONLineComposer {
    private var last: [Int: LineContent] = [:]

    mutating func lines(for rows: [TreeMirror.Row], now: Duration) -> [String] {
        var output: [String] = []
        for row in rows where last[row.id] != row.content {
            last[row.id] = row.content
            output.append(Self.encode(row, time: now))
        }
        return output
    }

    static func encode(_ row: TreeMirror.Row, time: Duration) -> String {
        let content = row.content
        let fields: [(String, String)] = [
            ("time", number(time.secondsValue)),
            ("id", "\(row.id)"),
            ("parent", row.parentID.map { "\($0)" } ?? "null"),
            ("name", string(content.label)),
            ("completed", "\(content.completedUnitCount)"),
            ("total", "\(content.totalUnitCount)"),
            ("fraction", number(content.fraction)),
            ("state", string(content.status.rawValue)),
            ("indeterminate", content.isIndeterminate ? "true" : "false"),
            ("throughput", content.throughputValue.map { "\($0)" } ?? "null"),
            ("timeRemaining", content.timeRemainingValue.map(number) ?? "null"),
            ("reason", content.failureReason.map(string) ?? "null"),
            ("failedBelow", "\(content.outcomes.failedCount)"),
            ("cancelledBelow", "\(content.outcomes.cancelledCount)"),
        ]
        return "{" + fields.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? "\(Int64(rounded))" : "\(rounded)"
    }

    /// A JSON string literal (RFC 8259 escaping).
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension Duration {
    var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
