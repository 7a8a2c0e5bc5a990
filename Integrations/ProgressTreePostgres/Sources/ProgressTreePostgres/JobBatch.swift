import ProgressTree
import ProgressTreeStreaming

/// The lines a job's publisher wrote since its last statement, one per node (the latest: every line is a
/// whole snapshot of its node, so a later one replaces an earlier one), as the rows of that statement.
/// A value, guarded by its publication's lock.
struct JobBatch: Sendable {
    /// One node's row.
    struct Row: Sendable, Equatable {
        var parentID: Int?
        var state: ProgressWireRecord.State
        var line: String
    }

    private(set) var rows: [Int: Row] = [:]
    /// The root's line, once one was taken: what the job's row says (its state, its reason).
    private(set) var root: ProgressWireRecord?
    /// Lines the publisher wrote that did not read back as progress lines (none, unless the model and
    /// the reader disagree): left out, counted.
    private(set) var unreadableLines = 0

    var isEmpty: Bool { rows.isEmpty }

    /// Takes one walk's bytes: lines, each ending with a newline.
    mutating func take(_ bytes: [UInt8]) {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            guard !line.isEmpty else { continue }
            guard let record = try? ProgressWireRecord(line: line) else {
                unreadableLines += 1
                continue
            }
            rows[record.id] = Row(
                parentID: record.parentID, state: record.state, line: String(decoding: line, as: UTF8.self))
            if record.parentID == nil { root = record }
        }
    }

    /// Puts back the rows of a statement that failed, under the rows taken since (which are newer).
    mutating func restore(_ older: JobBatch) {
        rows.merge(older.rows) { newer, _ in newer }
        if root == nil { root = older.root }
    }

    /// The rows taken, emptied; the root stays known.
    mutating func drain() -> JobBatch {
        defer { rows = [:] }
        return self
    }
}

/// The line a node is given when its job ends without its own last line (its process stopped reporting,
/// was interrupted, or stopped before the end): the root `failed` with `reason`, a node still running or
/// paused `cancelled` (what a failure does below it, `Docs/WireFormat.md`, rule 5). `nil` when `line` does
/// not read as a progress line (a row written by hand): it is left as it is.
func endedLine(_ line: String, reason: String) -> (line: String, state: ProgressWireRecord.State)? {
    guard var record = try? ProgressWireRecord(line: Array(line.utf8)) else { return nil }
    guard !record.state.isFinal else { return (line, record.state) }
    if record.parentID == nil {
        record.state = .failed
        record.failureReason = reason
    } else {
        record.state = .cancelled
    }
    return (record.line, record.state)
}
