import ProgressTree

/// Decides which lines plain mode prints: readable in CI logs, no escape codes, never a flood.
///
/// A line shows the node's own values of its `WireProgressProperty` properties last, as `name=value`, the
/// value spelled as in the wire format (`skipped=2`, `rate=2.5`, `status="copying"`), by name; a name that
/// is not made of letters, digits, `_`, `-` and `.` is quoted as in JSON (`"note\n\"x\""=1`), so that
/// no name can pass for another or for the line's own words. A value the wire cannot carry (a number that
/// is not finite, an integer beyond ±(2^53 − 1)) is not shown: the line says how many were left out ("1
/// property value left out"). A property the program words with `TerminalRenderer.show(_:_:)` is shown
/// in its words on every line (each node's own subtree's summary), never as `name=value`. A property that
/// changes prints no line by itself (it is not progress); the next line shows it.
///
/// A node gets a line when it first appears, when it finishes, fails, is cancelled, paused or resumed, and in
/// between, at most once per `minimumSpacing`, when its progress crossed another `step` (10% by default)
/// or, if it moved at all, when `interval` has passed since its last line.
struct PlainLogComposer {
    let step: Double
    let interval: Duration
    let maximumDepth: Int
    let minimumSpacing: Duration = .seconds(1)

    private struct NodeLog {
        var fraction: Double
        var status: LineStatus
        var time: Duration
    }

    private var logs: [Int: NodeLog] = [:]

    init(step: Double, interval: Duration, maximumDepth: Int) {
        self.step = step > 0 ? step : 0.1
        self.interval = interval
        self.maximumDepth = maximumDepth
    }

    /// The lines of one frame, in tree order, except that a node's last line (`done` or `cancelled`) comes
    /// after the lines of its subtree in the same frame: a log never says a parent is done before its
    /// children are; and how many property values they left out. `wordedProperties`: the wire names of
    /// the properties shown in words (`TerminalRenderer.show(_:_:)`), never as `name=value`.
    mutating func lines(
        for rows: [TreeMemory.Row], now: Duration, wordedProperties: Set<String> = []
    ) -> (lines: [String], skippedProperties: Int) {
        var skipped = 0
        var labels: [Int: String] = [:]
        var output: [String] = []
        // Last lines waiting for their subtree (rows come depth first), innermost last.
        var ending: [(depth: Int, line: String)] = []
        for row in rows {
            while let last = ending.last, last.depth >= row.content.depth {
                output.append(last.line)
                ending.removeLast()
            }
            let content = row.content
            let parentPath = row.parentID.flatMap { labels[$0] } ?? ""
            let ownLabel = content.name.isEmpty ? "(\(row.parentID == nil ? "progress" : "step"))" : content.name
            let path = parentPath.isEmpty ? ownLabel : parentPath + " › " + ownLabel
            labels[row.id] = path
            guard content.depth <= maximumDepth else { continue }
            let event: String?
            if let log = logs[row.id] {
                if log.status != content.status {
                    event = Self.event(content, seenBefore: true)
                } else if content.status == .running, now - log.time >= minimumSpacing,
                    crossedStep(from: log.fraction, to: content.fraction)
                        || (now - log.time >= interval && content.fraction != log.fraction)
                {
                    event = ""
                } else {
                    event = nil
                }
            } else {
                event = Self.event(content, seenBefore: false)
            }
            guard let event else { continue }
            logs[row.id] = NodeLog(fraction: content.fraction, status: content.status, time: now)
            let line = Self.format(content, path: path, event: event, wordedProperties: wordedProperties)
            skipped += content.skippedProperties
            // A finished or cancelled line waits for its subtree's lines, and so does the root's failed
            // line: in a log the root's outcome comes last, as the json writer orders it. A failed node below
            // the root comes first: the nodes its failure cancelled follow it, as effects of the cause.
            if content.status == .finished || content.status == .cancelled
                || (content.status == .failed && row.parentID == nil)
            {
                ending.append((content.depth, line))
            } else {
                output.append(line)
            }
        }
        output.append(contentsOf: ending.reversed().map(\.line))
        return (output, skipped)
    }

    /// The event of a node in its current status. A node first seen already finished (quick work) is
    /// `done` like one seen running first: one word per event, whatever the timing. A failure gives its
    /// reason: `failed: the archive is not answering`.
    private static func event(_ content: LineContent, seenBefore: Bool) -> String {
        switch content.status {
        case .finished: "done"
        case .failed: content.failureReason.map { "failed: " + $0 } ?? "failed"
        case .cancelled: "cancelled"
        case .paused: "paused"
        case .running: seenBefore ? "resumed" : "started"
        }
    }

    /// A property's name as a line shows it: bare when made of ASCII letters, digits, `_`, `-` and `.`
    /// (`photosSkipped`, `com.example.rate`), otherwise as a JSON string, whose escapes keep control
    /// characters, quotes and `=` from reading as something else.
    static func propertyName(_ name: String) -> String {
        let isPlain =
            !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F || byte == 0x2D || byte == 0x2E
            }
        return isPlain ? name : ProgressWireRecord.jsonString(name)
    }

    private func crossedStep(from old: Double, to new: Double) -> Bool {
        (new / step).rounded(.down) > (old / step).rounded(.down)
    }

    static func format(
        _ content: LineContent, path: String, event: String, wordedProperties: Set<String> = []
    ) -> String {
        let whole = WholePercent.of(content.fraction, isFinished: content.status == .finished)
        let percent = content.isIndeterminate ? "   " : "\(whole)"
        var line = "[" + String(repeating: " ", count: max(0, 3 - percent.count)) + percent + "%] " + path
        var details: [String] = []
        if !content.counts.isEmpty { details.append(content.counts) }
        details.append(contentsOf: content.summaries)
        if content.outcomes.failedCount > 0, content.status != .failed {
            details.append("\(content.outcomes.failedCount) failed")
        }
        if let throughput = content.throughputText { details.append(throughput) }
        if let remaining = content.timeRemainingLogText {
            details.append(remaining)
        }
        // The node's own property values, as the wire spells them, by name: `photosSkipped=2`.
        for name in content.properties.keys.sorted() where !wordedProperties.contains(name) {
            guard let value = content.properties[name]?.jsonText else { continue }
            details.append(Self.propertyName(name) + "=" + value)
        }
        if content.skippedProperties > 0 {
            let count = content.skippedProperties
            details.append("\(count) property \(count == 1 ? "value" : "values") left out")
        }
        if !event.isEmpty { details.insert(event, at: 0) }
        if !details.isEmpty { line += ": " + details.joined(separator: ", ") }
        // JSON escapes C0 controls only: a C1 control in a string value or a name is shown as a space.
        return LabelSanitizer.sanitized(line)
    }
}
