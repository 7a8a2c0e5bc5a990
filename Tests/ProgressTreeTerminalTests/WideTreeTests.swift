import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// A root with many children: plain and json modes give lines to the first children of a node at a time
/// (`Options.loggedChildren`), the others as those ahead finish; children that finish before their turn
/// are counted in their parent's line. Live frames read the children they show, and count the others.
final class WideTreeTests: XCTestCase {
    /// "Copy" over `count` children "f0", "f1", …, each 1 unit standing for 1 of the root's.
    private func makeWideTree(_ count: Int) -> (root: ProgressNode, children: [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(count))
        root.localizedDescription = "Copy"
        let children = (0..<count).map { index in
            let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            child.localizedDescription = "f\(index)"
            return child
        }
        return (root, children)
    }

    private func lines(_ output: VirtualTerminal) -> [String] {
        output.writes.joined().split(separator: "\n").map(String.init)
    }

    func test_plain_mode_logs_ten_children_of_a_thousand_at_a_time_and_counts_those_that_finish_unseen() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, children) = makeWideTree(1_000)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        XCTAssertEqual(lines(output).count, 11, "the root and its first ten children")
        XCTAssertEqual(lines(output).first, "[  0%] Copy: started, 0 of 1,000")
        XCTAssertEqual(lines(output).last, "[  0%] Copy › f9: started, 0 of 1")
        for child in children[..<995] { child.completedUnitCount = 1 }  // 985 of them never had their turn
        renderer.drawFrame()
        XCTAssertEqual(lines(output).count, 11 + 10 + 5, "the ten logged are done, the last five start")
        XCTAssertEqual(lines(output)[11], "[100%] Copy › f0: done, 1 of 1")
        XCTAssertEqual(lines(output)[20], "[100%] Copy › f9: done, 1 of 1")
        XCTAssertEqual(lines(output)[21], "[  0%] Copy › f995: started, 0 of 1")
        for child in children[995...] { child.completedUnitCount = 1 }
        renderer.stop()
        XCTAssertEqual(lines(output).count, 11 + 15 + 6)
        XCTAssertEqual(lines(output).last, "[100%] Copy: done, 1,000 of 1,000")
    }

    func test_plain_mode_logs_done_for_every_logged_child_that_finishes_in_one_frame() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, children) = makeWideTree(6)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)  // 3 finished children kept
        renderer.drawFrame()
        for child in children[..<5] { child.completedUnitCount = 1 }
        renderer.drawFrame()
        XCTAssertEqual(Array(lines(output)[7...]), (0..<5).map { "[100%] Copy › f\($0): done, 1 of 1" })
        renderer.stop()
    }

    func test_plain_mode_still_logs_a_failure_of_a_child_before_its_turn() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, children) = makeWideTree(100)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        children[50].fail(Reason(description: "disk full"))
        renderer.drawFrame()
        XCTAssertEqual(lines(output).count, 12)
        XCTAssertEqual(lines(output).last, "[  0%] Copy › f50: failed: disk full, 0 of 1")
    }

    func test_json_mode_names_32_children_of_a_thousand_at_a_time_and_ends_with_the_roots_final_line() throws {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, children) = makeWideTree(1_000)
        let renderer = makeTestRenderer(root, mode: .json, output: output)
        renderer.start()  // the root and its first 32 children
        XCTAssertEqual(lines(output).count, 33)
        for child in children[..<995] { child.completedUnitCount = 1 }
        renderer.drawFrame()  // 32 last lines, the root's, 5 children named
        XCTAssertEqual(lines(output).count, 33 + 38)
        for child in children[995...] { child.completedUnitCount = 1 }
        renderer.stop()  // 5 last lines, then the root's final one
        let all = lines(output)
        XCTAssertEqual(all.count, 33 + 38 + 6)
        let records = try all.map { try ProgressWireRecord(line: Array($0.utf8)) }
        XCTAssertEqual(Set(records.map(\.id)).count, 38, "the root and 37 children named")
        let last = try XCTUnwrap(records.last)
        XCTAssertEqual(last.id, 1)
        XCTAssertEqual(last.state, .finished)
        XCTAssertEqual(last.completedUnitCount, 1_000, "the children never named are in the root's count")
        let lastLines = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        XCTAssertTrue(lastLines.values.allSatisfy { $0.state == .finished }, "every named node's last line is final")
    }

    func test_json_mode_ends_a_cancelled_wide_root_with_its_first_children_named_and_all_counted() throws {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, _) = makeWideTree(100)
        let renderer = makeTestRenderer(root, mode: .json, output: output) { $0.loggedChildren = 3 }
        renderer.start()
        root.cancel()
        renderer.stop()
        let records = try lines(output).map { try ProgressWireRecord(line: Array($0.utf8)) }
        XCTAssertEqual(records.count, 4 + 4, "first lines of the root and 3 children, then their last lines")
        XCTAssertEqual(records[4...].map(\.label), ["f0", "f1", "f2", "Copy"])
        XCTAssertEqual(records[4...].map(\.state), [.cancelled, .cancelled, .cancelled, .cancelled])
        XCTAssertEqual(records.last?.cancelledBelow, 100, "the 97 never named are counted")
    }

    func test_json_mode_names_a_child_that_fails_before_its_turn_with_its_reason() throws {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, children) = makeWideTree(1_000)
        let renderer = makeTestRenderer(root, mode: .json, output: output) { $0.loggedChildren = 3 }
        renderer.start()
        XCTAssertEqual(lines(output).count, 4)
        children[700].fail(Reason(description: "disk full"))
        renderer.drawFrame()
        let records = try lines(output).map { try ProgressWireRecord(line: Array($0.utf8)) }
        XCTAssertEqual(records.count, 6, "the root (one failed below) and the failed child")
        XCTAssertEqual(records[4].failedBelow, 1)
        XCTAssertEqual(records[5].label, "f700")
        XCTAssertEqual(records[5].state, .failed)
        XCTAssertEqual(records[5].failureReason, "disk full")
    }

    func test_live_frame_of_a_wide_root_shows_the_first_children_and_counts_the_others() {
        let output = VirtualTerminal(columns: 60, rows: 6)
        let (root, children) = makeWideTree(10_000)
        let renderer = makeTestRenderer(root, output: output)
        renderer.drawFrame()
        XCTAssertEqual(output.visibleLines.count, 5)
        XCTAssertTrue(output.visibleLines[1].contains("f0"), output.visibleLines[1])
        XCTAssertTrue(output.visibleLines[3].contains("f2"), output.visibleLines[3])
        XCTAssertTrue(output.visibleLines[4].contains("+9997 more"), output.visibleLines[4])
        children[0].completedUnitCount = 1
        renderer.drawFrame()
        // The finished f0 gives way first: f1 to f3 run, f0 and the 9,996 others are counted.
        XCTAssertTrue(output.visibleLines[1].contains("f1"), output.visibleLines[1])
        XCTAssertTrue(output.visibleLines[4].contains("+9997 more"), output.visibleLines[4])
        renderer.stop()
    }

    func test_children_first_lists_the_first_unfinished_children_and_counts_them_all() {
        let (root, children) = makeWideTree(10)
        children[1].completedUnitCount = 1
        let (first, count) = root.children(first: 3)
        XCTAssertEqual(first.map { $0.localizedDescription }, ["f0", "f2", "f3"])
        XCTAssertEqual(count, 9)
        XCTAssertEqual(root.children(first: 100).children.count, 9)
        XCTAssertEqual(root.children(first: 0).children.count, 0)
    }
}
