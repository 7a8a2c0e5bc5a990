import ProgressTree
import ProgressTreeStreaming

/// Reads an event stream as `Docs/WireFormat.md`, "Over HTTP", describes it (the event-stream framing of
/// the HTML standard: fields `event`, `data`, `id`, `retry`; comments; events end at a blank line).
struct ServerSentEvent: Equatable {
    var event: String?
    var id: String?
    var data: [String] = []
    var retry: String?
    var comments: [String] = []

    /// The run an event stream names (`event: run`), if it names one.
    static func run(in events: [ServerSentEvent]) -> String? {
        guard let data = events.first(where: { $0.event == "run" })?.data.first,
            let match = data.wholeMatch(of: /\{"v":1,"run":"([0-9a-f]{32})"\}/)
        else { return nil }
        return String(match.1)
    }

    /// The events in `text`, up to the last blank line.
    static func parse(_ text: String) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        var current = ServerSentEvent()
        var hasField = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty {
                if hasField { events.append(current) }
                current = ServerSentEvent()
                hasField = false
                continue
            }
            hasField = true
            if line.hasPrefix(":") {
                current.comments.append(String(line.dropFirst()))
                continue
            }
            let (name, value): (Substring, Substring)
            if let colon = line.firstIndex(of: ":") {
                name = line[..<colon]
                var rest = line[line.index(after: colon)...]
                if rest.first == " " { rest = rest.dropFirst() }
                value = rest
            } else {
                (name, value) = (line, "")
            }
            switch name {
            case "event": current.event = String(value)
            case "id": current.id = String(value)
            case "data": current.data.append(String(value))
            case "retry": current.retry = String(value)
            default: break
            }
        }
        return events
    }

    /// "id: id parent state name (reason)" for a progress line, relative to walk `base` ("+0"); "synced +N";
    /// "retry 1000"; ": comment"; "run" (its name: 32 hexadecimal digits); "ended REASON".
    func summary(base: UInt64) -> String {
        if let retry { return "retry \(retry)" }
        if let comment = comments.first { return ":\(comment)" }
        if event == "run" {
            let isName = data.count == 1 && data[0].wholeMatch(of: /\{"v":1,"run":"[0-9a-f]{32}"\}/) != nil
            return id == nil && isName ? "run" : "bad run \(data)"
        }
        if event == "ended" {
            guard data.count == 1, let match = data[0].wholeMatch(of: /\{"v":1,"ended":"([a-z]+)"\}/) else {
                return "bad ended \(data)"
            }
            return "ended \(match.1)"
        }
        let walk = id.flatMap { UInt64($0) }.map { "+\($0 - base)" } ?? "?"
        if event == "synced" {
            let number = walk == "?" ? "" : String(base + UInt64(walk.dropFirst())!)
            return data == ["{\"v\":1,\"synced\":\(number)}"] ? "synced \(walk)" : "bad synced \(data)"
        }
        guard data.count == 1, let record = try? ProgressWireRecord(line: Array(data[0].utf8)) else {
            return "not a wire line: \(data)"
        }
        let parent = record.parentID.map(String.init) ?? "-"
        let reason = record.failureReason.map { " (\($0))" } ?? ""
        return "\(walk): \(record.id) \(parent) \(record.state.rawValue) \(record.label ?? "")\(reason)"
    }
}
