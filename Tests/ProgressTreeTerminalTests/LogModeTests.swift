import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
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
        XCTAssertEqual(output.allLines, [
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
        XCTAssertEqual(renderer(root, mode: .auto, output: VirtualTerminal(isTerminal: true), clock: clock, environment: ["TERM": "xterm-256color"]).mode, .live)
        XCTAssertEqual(renderer(root, mode: .auto, output: VirtualTerminal(isTerminal: false), clock: clock).mode, .plain)
        XCTAssertEqual(renderer(root, mode: .auto, output: VirtualTerminal(isTerminal: true), clock: clock, environment: ["TERM": "dumb"]).mode, .plain)
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
}
