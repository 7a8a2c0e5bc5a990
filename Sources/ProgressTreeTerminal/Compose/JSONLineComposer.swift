import ProgressTree

/// Writes one line of the wire format (`Docs/WireFormat.md`, `ProgressWireRecord`) for each node whose
/// state changed: an absolute snapshot of the node, so another program (or `ProgressNode.mount`) can keep
/// the last line of each id and have the tree.
///
/// ```
/// {"v":1,"time":1.25,"id":2,"parent":1,"pending":1,"name":"IMG_0001.jpg","completed":4500000,
///  "total":9000000,"fraction":0.5,"state":"running","indeterminate":false,"throughput":1200000,
///  "timeRemaining":3.75,"reason":null,"failedBelow":0,"cancelledBelow":0,"description":null,...}
/// ```
/// - `time`: seconds since the renderer started. `id`: stable for the life of the renderer; `parent`: the
///   parent's id, `null` for the root. `state`: `running`, `paused`, `cancelled`, `failed` or `finished`.
/// - `name`: the label, control characters shown as spaces; `reason`: why a `failed` node failed.
/// - `throughput` (bytes or units per second) and `timeRemaining` (seconds) are the renderer's estimates,
///   as shown in the other modes.
struct JSONLineComposer {
    private var last: [Int: LineContent] = [:]

    mutating func lines(for rows: [TreeMirror.Row], now: Duration) -> [String] {
        var output: [String] = []
        for var row in rows where last[row.id] != row.content {
            // A child that finished has left its parent and reads a pending count of 0: its last line keeps
            // the share it stood for.
            if row.parentID != nil, row.content.wire?.pendingUnitCount == 0,
                let pending = last[row.id]?.wire?.pendingUnitCount, pending > 0
            {
                row.content.wire?.pendingUnitCount = pending
            }
            last[row.id] = row.content
            output.append(Self.encode(row, time: now))
        }
        return output
    }

    static func encode(_ row: TreeMirror.Row, time: Duration) -> String {
        record(for: row, time: time).line
    }

    /// The row's wire record: what the node's record says (pending count, metadata), with the ids, the time
    /// and what the row shows (state, label, fraction, estimates, reason) taking precedence.
    static func record(for row: TreeMirror.Row, time: Duration) -> ProgressWireRecord {
        let content = row.content
        var record =
            content.wire
            ?? ProgressWireRecord(
                id: row.id, parentID: row.parentID, totalUnitCount: content.totalUnitCount,
                completedUnitCount: content.completedUnitCount)
        record.id = row.id
        record.parentID = row.parentID
        if row.parentID == nil { record.pendingUnitCount = 0 }
        record.time = time.secondsValue
        record.label = content.label
        record.completedUnitCount = content.completedUnitCount
        record.totalUnitCount = content.totalUnitCount
        record.fractionCompleted = content.fraction.isFinite ? min(1, max(0, content.fraction)) : 0
        record.isIndeterminate = content.isIndeterminate
        record.state = ProgressWireRecord.State(rawValue: content.status.rawValue) ?? .running
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

extension Duration {
    var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
