import ProgressTree
import XCTest

@testable import ProgressTreeStreaming

/// A mount reads a line only where it differs from the last one (`WireLineMemo`): whatever the lines, what
/// it reads is exactly what a full read gives, record for record and error for error.
final class WireLineMemoTests: XCTestCase {
    /// The outcome of reading `line` in full.
    private func full(_ line: String) -> Result<ProgressWireRecord, ProgressWireError> {
        let bytes = Array(line.utf8)
        return bytes.withUnsafeBytes { raw in
            Result { () throws(ProgressWireError) in try ProgressWireRecord(bytes: raw) }
        }
    }

    private func memoized(_ line: String, _ memo: inout WireLineMemo) -> Result<ProgressWireRecord, ProgressWireError> {
        let bytes = Array(line.utf8)
        return bytes.withUnsafeBytes { raw in Result { () throws(ProgressWireError) in try memo.record(raw) } }
    }

    /// Reads `lines` in order through one memo, each checked against a full read.
    private func assertSameAsFullReads(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) {
        var memo = WireLineMemo()
        for (index, text) in lines.enumerated() {
            XCTAssertEqual(memoized(text, &memo), full(text), "line \(index): \(text)", file: file, line: line)
        }
    }

    private func record(completed: Int64, id: Int = 1, name: String? = nil) -> ProgressWireRecord {
        var record = ProgressWireRecord(
            id: id, parentID: id == 1 ? nil : 1, totalUnitCount: 1_000_000, completedUnitCount: completed)
        record.fractionCompleted = Double(completed) / 1_000_000
        record.throughput = Int(completed % 977)
        record.estimatedTimeRemaining = Double(completed % 13) / 4
        record.label = name
        return record
    }

    func test_a_run_of_a_nodes_lines_reads_as_full_reads_do() {
        // Counts whose digits grow and shrink, so that the lines change length and the members after the
        // change move.
        let counts: [Int64] = [0, 5, 55, 999, 1000, 100_000, 7, 999_999, 1_000_000, 12]
        let lines = counts.map { record(completed: $0).line }
        assertSameAsFullReads(lines)
        var memo = WireLineMemo()
        for line in lines { _ = memoized(line, &memo) }
        XCTAssertEqual(memo.partialReads, lines.count - 1, "every line after the first read where it differs")
    }

    func test_lines_of_several_nodes_and_names_read_as_full_reads_do() {
        var lines: [String] = []
        for step in 0..<40 {
            lines.append(
                record(completed: Int64(step * 1234), id: 1 + step % 3, name: step % 5 == 0 ? "a\(step)" : nil).line)
        }
        assertSameAsFullReads(lines)
    }

    func test_a_changed_state_or_string_reads_as_a_full_read_does() {
        var failed = record(completed: 10)
        failed.state = .failed
        failed.failureReason = "disk full"
        var paused = record(completed: 10)
        paused.state = .paused
        assertSameAsFullReads([record(completed: 10).line, paused.line, failed.line, record(completed: 11).line])
    }

    func test_hostile_lines_read_as_full_reads_do() {
        let base = #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5}"#
        assertSameAsFullReads([
            base,
            #"{"v":1,"id":1,"completed":6,"total":10,"state":"running","fraction":0.6}"#,
            // A known name repeated: the last value counts.
            #"{"v":1,"id":1,"completed":7,"total":10,"state":"running","fraction":0.6,"completed":3}"#,
            #"{"v":1,"id":1,"completed":8,"total":10,"state":"running","fraction":0.6,"completed":3}"#,
            base,
            // White space moved, a name escaped, members reordered, values of the wrong type.
            #"{"v":1,"id":1,"completed":5 ,"total":10,"state":"running","fraction":0.5}"#,
            #"{"v":1,"id":1,"compl\u0065ted":9,"total":10,"state":"running","fraction":0.5}"#,
            base,
            #"{"v":1,"id":1,"total":10,"completed":5,"state":"running","fraction":0.5}"#,
            base,
            #"{"v":1,"id":1,"completed":"5","total":10,"state":"running","fraction":0.5}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":1.5}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"walking","fraction":0.5}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5}}"#,
            #"{"v":1,"id":1,"completed":{"a":[1,2]},"total":10,"state":"running","fraction":0.5}"#,
            #"{"v":2,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5,"extra":"x"}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5,"extra":"y"}"#,
            #"{"v":1,"id":1,"completed":50,"total":10,"state":"running","fraction":0.5,"extra":"y"}"#,
            #"{"v":1,"id":1,"completed":5,"total":10,"state":"running","fraction":0.5,"extra":[1,{"b":2}]}"#,
            base,
        ])
    }

    func test_random_edits_of_a_line_read_as_full_reads_do() {
        var generator = SystemRandomNumberGenerator()
        let template = Array(record(completed: 123_456, name: "IMG_0001.jpg").line.utf8)
        let alphabet = Array(#"0123456789.-"{}[],:e tnulfrs\"#.utf8)
        var memo = WireLineMemo()
        for round in 0..<20_000 {
            var bytes = template
            // A few edits near each other (as counts change), sometimes far apart.
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: at)
                default: bytes.remove(at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let expected = full(text)
            XCTAssertEqual(memoized(text, &memo), expected, "round \(round): \(text)")
            if round % 7 == 0 {
                let clean = record(completed: Int64(round), name: "IMG_0001.jpg").line
                XCTAssertEqual(memoized(clean, &memo), full(clean))
            }
        }
    }
}
