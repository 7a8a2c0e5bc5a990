import ProgressTree
import ProgressTreeStreaming

/// Writes the wire format (`Docs/WireFormat.md`, `ProgressWireRecord`): at each frame, one line for each
/// node whose line changed, an absolute snapshot of the node, so another program (or `ProgressNode.mount`)
/// can keep the last line of each id and have the tree.
///
/// ```
/// {"v":1,"time":1.25,"id":2,"parent":1,"pending":1,"name":"IMG_0001.jpg","completed":4500000,
///  "total":9000000,"fraction":0.5,"state":"running","indeterminate":false,"throughput":1200000,
///  "timeRemaining":3.75,"reason":null,"failedBelow":0,"cancelledBelow":0,"description":null,...}
/// ```
///
/// Which nodes get a line, when, and in which order is `WireTreeWalker`'s to decide, by the rules it
/// shares with `ProgressPublisher`; this composer reads each node as the other modes show it:
/// - `time`: seconds since the renderer started. `id`: stable for the life of the renderer; `parent`: the
///   parent's id, `null` for the root. `state`: `running`, `paused`, `cancelled`, `failed` or `finished`.
/// - `name`: the label, control characters shown as spaces; `reason`: why a `failed` node failed, the same.
/// - `throughput` (bytes or units per second) and `timeRemaining` (seconds) are the renderer's estimates,
///   as shown in the other modes.
struct JSONLineComposer {
    private var walker: WireTreeWalker

    /// A composer for the tree below `root`, down to `maximumDepth` levels (`Options.logDepth`), naming at
    /// most `maximumNamedChildren` children of a node at a time (`Options.loggedChildren`).
    init(root: ProgressNode, maximumDepth: Int, maximumNamedChildren: Int = .max) {
        walker = WireTreeWalker(root: root, maximumDepth: maximumDepth, maximumNamedChildren: maximumNamedChildren)
    }

    /// The lines of one walk of the tree, `now` being the time since the renderer started, and how many
    /// property values they left out (`ProgressWireRecord.skippedProperties`: values the wire cannot
    /// carry). With `ending` (`stop()`), the stream ends: later calls return nothing.
    mutating func lines(ending: Bool, now: Duration) -> (lines: [String], skippedProperties: Int) {
        let time = now.secondsValue
        var skipped = 0
        let lines = walker.walk(ending: ending) { source in
            switch source {
            case .node(let node, let depth):
                return Self.record(for: NodeReader.content(of: node, depth: depth, forWire: true))
            case .departed(var record, _):
                record.label = LabelSanitizer.sanitized(record.label ?? "")
                record.failureReason = record.failureReason.map(LabelSanitizer.sanitized)
                return record
            }
        }.map { record in
            var record = record
            record.time = time
            skipped += record.skippedProperties
            return record.line
        }
        return (lines, skipped)
    }

    /// The wire record of a line: what the node's record says (pending count, metadata), with what the
    /// line shows (state, label, fraction, estimates, reason) taking precedence. Ids and time are the
    /// walker's and the caller's.
    static func record(for content: LineContent) -> ProgressWireRecord {
        var record =
            content.wire
            ?? ProgressWireRecord(
                id: 0, parentID: nil, totalUnitCount: content.totalUnitCount,
                completedUnitCount: content.completedUnitCount)
        record.label = content.label
        record.completedUnitCount = content.completedUnitCount
        record.totalUnitCount = content.totalUnitCount
        record.fractionCompleted = content.fraction.isFinite ? min(1, max(0, content.fraction)) : 0
        record.isIndeterminate = content.isIndeterminate
        record.state = content.status.wireState
        record.throughput = content.throughput
        record.estimatedTimeRemaining = content.timeRemaining
        record.failureReason = content.failureReason
        record.failedBelow = content.outcomes.failedCount
        record.cancelledBelow = content.outcomes.cancelledCount
        return record
    }

    /// A JSON string literal (RFC 8259 escaping).
    static func string(_ text: String) -> String {
        ProgressWireRecord.jsonString(text)
    }
}
