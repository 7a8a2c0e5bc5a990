import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Plain and json modes, and the choice of mode: exact output with a manual clock.
final class LogModeTests: XCTestCase {
    private func renderer(
        _ root: ProgressNode, mode: TerminalRenderer.Mode, output: VirtualTerminal, clock: ManualProgressClock,
        environment: [String: String] = [:]
    ) -> TerminalRenderer {
        makeTestRenderer(root, mode: mode, output: output, clock: clock, environment: environment)
    }

    func test_plain_mode_prints_starts_steps_of_ten_percent_at_most_once_a_second_and_the_end() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let clock = ManualProgressClock()
        let (root, first, second) = makeSyncTree()
        let renderer = renderer(root, mode: .plain, output: output, clock: clock)
        renderer.drawFrame()
        first.completedUnitCount = 3  // crossed 10% and 20%, but within a second of its start line
        renderer.drawFrame()
        clock.advance(by: .seconds(1))
        renderer.drawFrame()  // now a second has passed: one line for a.txt, one for the root (15%)
        clock.advance(by: .seconds(1))
        renderer.drawFrame()  // nothing moved: nothing printed
        first.completedUnitCount = 10
        second.cancel()
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[  0%] Sync › a.txt: started, 0 of 10",
                "[  0%] Sync › b.txt: started, 0 of 10",
                "[ 15%] Sync: 0 of 2",
                "[ 30%] Sync › a.txt: 3 of 10",
                "[ 50%] Sync: 1 of 2",
                "[100%] Sync › a.txt: done, 10 of 10",
                "[  0%] Sync › b.txt: cancelled, 0 of 10",
            ])
        XCTAssertFalse(output.writes.joined().contains("\u{1B}"), "plain mode writes no escape codes")
    }

    func test_json_mode_writes_one_parsable_object_per_change_with_a_stable_schema() throws {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let clock = ManualProgressClock()
        let (root, first, _) = makeSyncTree()
        let renderer = renderer(root, mode: .json, output: output, clock: clock)
        renderer.drawFrame()
        clock.advance(by: .milliseconds(1500))
        first.completedUnitCount = 5
        renderer.drawFrame()
        renderer.drawFrame()  // no change, no line
        let lines = output.writes.joined().split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5)
        let objects = try lines.map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let keys: Set<String> = [
            "time", "id", "parent", "name", "completed", "total", "fraction", "state", "indeterminate",
            "throughput", "timeRemaining", "reason", "failedBelow", "cancelledBelow",
            // The wire format's (Docs/WireFormat.md): the version, the share in the parent, the metadata.
            "v", "pending", "description", "additionalDescription", "kind", "fileOperationKind", "fileURL",
            "fileTotalCount", "fileCompletedCount", "cancellable", "pausable",
        ]
        for object in objects { XCTAssertEqual(Set(object.keys), keys) }
        XCTAssertEqual(objects[0]["id"] as? Int, 1)
        XCTAssertTrue(objects[0]["parent"] is NSNull)
        XCTAssertEqual(objects[0]["name"] as? String, "Sync")
        XCTAssertEqual(objects[0]["v"] as? Int, 1)
        XCTAssertEqual(objects[0]["pending"] as? Int, 0)
        XCTAssertEqual(objects[1]["parent"] as? Int, 1)
        XCTAssertEqual(objects[1]["pending"] as? Int, 1)
        XCTAssertEqual(objects[1]["description"] as? String, "a.txt")
        // Each line is a record `ProgressWireRecord` reads back.
        for line in lines { XCTAssertNoThrow(try ProgressWireRecord(line: Array(line.utf8))) }
        XCTAssertEqual(objects[2]["name"] as? String, "b.txt")
        // After a.txt moved: the root and a.txt again, at 1.5 s.
        XCTAssertEqual(objects[3]["id"] as? Int, 1)
        XCTAssertEqual(objects[3]["fraction"] as? Double, 0.25)
        XCTAssertEqual(objects[4]["name"] as? String, "a.txt")
        XCTAssertEqual(objects[4]["completed"] as? Int, 5)
        XCTAssertEqual(objects[4]["total"] as? Int, 10)
        XCTAssertEqual(objects[4]["fraction"] as? Double, 0.5)
        XCTAssertEqual(objects[4]["state"] as? String, "running")
        XCTAssertEqual(objects[4]["time"] as? Double, 1.5)
    }

    func test_json_strings_are_escaped() {
        XCTAssertEqual(JSONLineComposer.string("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"")
    }

    func test_auto_mode_is_live_on_a_terminal_and_plain_otherwise_or_on_a_dumb_terminal() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let clock = ManualProgressClock()
        XCTAssertEqual(
            renderer(
                root, mode: .auto, output: VirtualTerminal(isTerminal: true), clock: clock,
                environment: ["TERM": "xterm-256color"]
            ).mode, .live)
        XCTAssertEqual(
            renderer(root, mode: .auto, output: VirtualTerminal(isTerminal: false), clock: clock).mode, .plain)
        XCTAssertEqual(
            renderer(
                root, mode: .auto, output: VirtualTerminal(isTerminal: true), clock: clock,
                environment: ["TERM": "dumb"]
            ).mode, .plain)
        XCTAssertEqual(renderer(root, mode: .json, output: VirtualTerminal(isTerminal: true), clock: clock).mode, .json)
    }

    func test_none_mode_writes_nothing() {
        let output = VirtualTerminal()
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let renderer = renderer(root, mode: .none, output: output, clock: ManualProgressClock())
        renderer.start()
        renderer.drawFrame()
        renderer.print("hello")
        root.completedUnitCount = 1
        renderer.stop()
        XCTAssertEqual(output.writes, [])
    }

    /// What `mode` writes for the sync tree, drawn once, when both children finish and `stop()` draws the
    /// final frame: the children finish in the same frame as the root.
    private func outputOfChildrenFinishingWithTheRoot(mode: TerminalRenderer.Mode) -> VirtualTerminal {
        let (root, first, second) = makeSyncTree()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeTestRenderer(root, mode: mode, output: output)
        renderer.drawFrame()
        first.completedUnitCount = 10
        second.completedUnitCount = 10
        renderer.stop()
        return output
    }

    /// Children that finish in the same frame as the root get their `done` line, before the root's: the
    /// root's known children are reported as finished before its subtree collapses, and a log never says
    /// the whole is done before its parts.
    func test_plain_mode_prints_done_for_children_that_finish_with_the_root_before_the_roots() {
        let output = outputOfChildrenFinishingWithTheRoot(mode: .plain)
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[  0%] Sync › a.txt: started, 0 of 10",
                "[  0%] Sync › b.txt: started, 0 of 10",
                "[100%] Sync › a.txt: done, 10 of 10",
                "[100%] Sync › b.txt: done, 10 of 10",
                "[100%] Sync: done, 2 of 2",
            ])
    }

    /// "A consumer can rebuild the tree from id/parent and keep the last object per id": the last object of
    /// a child that finished together with the root says `finished`, with fraction 1.
    func test_json_last_object_of_a_child_finishing_with_the_root_says_finished() throws {
        let output = outputOfChildrenFinishingWithTheRoot(mode: .json)
        var last: [Int: [String: Any]] = [:]
        for line in output.writes.joined().split(separator: "\n") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            last[try XCTUnwrap(object["id"] as? Int)] = object
        }
        XCTAssertEqual(last[1]?["state"] as? String, "finished")
        XCTAssertEqual(last[2]?["state"] as? String, "finished")
        XCTAssertEqual(last[2]?["fraction"] as? Double, 1)
        XCTAssertEqual(last[3]?["state"] as? String, "finished")
    }

    /// Plain mode prints a line "if it moved, every 5 s", judged by the fraction: a parent whose progress
    /// comes from a child moves without its own completedUnitCount changing, and still gets its line.
    func test_plain_mode_interval_line_for_a_parent_that_moved_through_its_child() {
        let root = makeRoot("Sync", total: 1)
        let child = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        child.localizedDescription = "step"
        let clock = ManualProgressClock()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeTestRenderer(root, mode: .plain, output: output, clock: clock)
        renderer.drawFrame()
        child.completedUnitCount = 5
        clock.advance(by: .seconds(6))
        renderer.drawFrame()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 1",
                "[  0%] Sync › step: started, 0 of 100",
                "[  5%] Sync: 0 of 1",
                "[  5%] Sync › step: 5 of 100",
            ])
    }

    /// The finishing event is `done` also for a node first seen already finished (quick work in a log).
    func test_plain_mode_quick_work_ends_with_done() {
        let root = makeRoot("Quick", total: 1)
        let output = VirtualTerminal(columns: 80, rows: 10, isTerminal: false)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.start()
        root.completedUnitCount = 1
        renderer.stop()
        XCTAssertEqual(output.allLines, ["[100%] Quick: done, 1 of 1"])
    }
}
