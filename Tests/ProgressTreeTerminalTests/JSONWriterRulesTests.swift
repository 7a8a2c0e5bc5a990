import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Json mode keeps Docs/WireFormat.md's rules for writers, frame by frame (exact lines with a manual clock).
final class JSONWriterRulesTests: XCTestCase {
    private func makeRenderer(
        _ root: ProgressNode, output: VirtualTerminal, clock: ManualProgressClock = ManualProgressClock()
    )
        -> TerminalRenderer
    {
        makeTestRenderer(root, mode: .json, output: output, clock: clock)
    }

    /// The sync tree in json mode, drawn once: its nodes, renderer, output, and how many writes that was.
    private func drawnSyncTree(clock: ManualProgressClock = ManualProgressClock()) -> (
        root: ProgressNode, first: ProgressNode, second: ProgressNode, renderer: TerminalRenderer,
        output: VirtualTerminal, writes: Int
    ) {
        let (root, first, second) = makeSyncTree()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeRenderer(root, output: output, clock: clock)
        renderer.drawFrame()
        return (root, first, second, renderer, output, output.writes.count)
    }

    /// The records written since `offset` writes.
    private func records(_ output: VirtualTerminal, after offset: Int = 0) throws -> [ProgressWireRecord] {
        try output.writes.dropFirst(offset).joined().split(separator: "\n").map {
            try ProgressWireRecord(line: Array($0.utf8))
        }
    }

    /// "id parent state name", one string a record.
    private func summary(_ records: [ProgressWireRecord]) -> [String] {
        records.map { "\($0.id) \($0.parentID.map(String.init) ?? "-") \($0.state.rawValue) \($0.label ?? "")" }
    }

    func test_the_roots_final_line_comes_after_the_last_lines_of_children_that_finish_with_it() throws {
        let (_, first, second, renderer, output, _) = drawnSyncTree()
        first.completedUnitCount = 10
        second.completedUnitCount = 10
        renderer.stop()
        XCTAssertEqual(
            summary(try records(output)),
            [
                "1 - running Sync", "2 1 running a.txt", "3 1 running b.txt",
                "2 1 finished a.txt", "3 1 finished b.txt", "1 - finished Sync",
            ])
    }

    /// A finished child is written once: it left its parent (its pending count reads 0 there), and no
    /// later frame writes its line again.
    func test_a_finished_child_is_written_once() throws {
        let clock = ManualProgressClock()
        let (_, first, _, renderer, output, before) = drawnSyncTree(clock: clock)
        first.completedUnitCount = 10
        for _ in 0..<3 {
            clock.advance(by: .milliseconds(100))
            renderer.drawFrame()
        }
        let records = try records(output, after: before)
        XCTAssertEqual(summary(records), ["1 - running Sync", "2 1 finished a.txt"])
        XCTAssertEqual(records.last?.pendingUnitCount, 1)
        XCTAssertEqual(records.last?.time, 0.1)
    }

    /// A child that appears and fails between two frames is named, failed, with its reason cleaned of
    /// control characters, below the root's line.
    func test_a_child_that_appears_and_fails_between_two_frames_is_named_with_its_reason() throws {
        let (root, renderer, output) = makeDrawnRoot("Import", total: 4, mode: .json)
        let photo = makeChild("IMG\u{1B}[2J_0004.jpg", total: 10, parent: root)
        photo.completedUnitCount = 5
        photo.fail(Reason(description: "the camera\nstopped"))
        renderer.stop()
        let records = try records(output)
        XCTAssertEqual(summary(records), ["1 - running Import", "1 - running Import", "2 1 failed IMG [2J_0004.jpg"])
        XCTAssertEqual(records.last?.failureReason, "the camera stopped")
        XCTAssertEqual(records.last?.fractionCompleted, 0.5)
        XCTAssertEqual(records.last?.pendingUnitCount, 1)
        XCTAssertEqual(records.dropFirst().first?.failedBelow, 1)
    }

    /// Below a child that appears and fails between two frames, the download its failure cancelled is
    /// named too, cancelled, its label cleaned of control characters.
    func test_the_nodes_a_failure_cancelled_below_a_child_that_appears_and_fails_are_named_cancelled() throws {
        let (root, renderer, output) = makeDrawnRoot("Import", total: 4, mode: .json)
        failPhotoWithHalfADownload(below: root, download: "down\u{7}load", reason: "gone")
        renderer.drawFrame()
        let records = try records(output)
        XCTAssertEqual(
            summary(records),
            ["1 - running Import", "1 - running Import", "2 1 failed IMG_0004.jpg", "3 2 cancelled down load"])
        XCTAssertEqual(records.last?.fractionCompleted, 0.5)
        XCTAssertEqual(records.last?.pendingUnitCount, 10)
        XCTAssertEqual(records.dropFirst().first?.cancelledBelow, 1)
    }

    /// Json mode names the whole tree by default: a program reading it wants every node.
    func test_json_mode_names_every_level_of_the_tree_by_default() throws {
        let root = makeRoot("Import", total: 1)
        let photo = makeChild("IMG_0001.jpg", total: 10, parent: root)
        let download = makeChild("download", total: 100, parent: photo, pending: 10)
        makeChild("chunk", total: 1, parent: download)
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeRenderer(root, output: output)
        renderer.drawFrame()
        XCTAssertEqual(
            summary(try records(output)),
            ["1 - running Import", "2 1 running IMG_0001.jpg", "3 2 running download", "4 3 running chunk"])
    }

    /// `logDepth`, when set, limits json mode: the nodes below it are counted only, in their ancestors'
    /// lines.
    func test_an_explicit_log_depth_limits_json_mode_and_the_nodes_below_it_are_counted_only() throws {
        let root = makeRoot("Import", total: 1)
        let photo = makeChild("IMG_0001.jpg", total: 10, parent: root)
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeTestRenderer(root, mode: .json, output: output) { $0.logDepth = 1 }
        renderer.drawFrame()
        let download = makeChild("download", total: 100, parent: photo, pending: 10)
        renderer.drawFrame()
        download.fail(Reason(description: "gone"))
        renderer.drawFrame()
        let records = try records(output)
        XCTAssertEqual(
            summary(records),
            ["1 - running Import", "2 1 running IMG_0001.jpg", "1 - running Import", "2 1 running IMG_0001.jpg"])
        XCTAssertEqual(records.map(\.failedBelow), [0, 0, 1, 1])
    }

    /// `start()` writes the root's first line at once, so that children failing before the first tick are
    /// named below it.
    func test_start_writes_the_roots_first_line_at_once() throws {
        let root = makeRoot("Import", total: 4)
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = makeRenderer(root, output: output)
        renderer.start()
        XCTAssertEqual(summary(try records(output)), ["1 - running Import"])
        let photo = makeChild("IMG_0001.jpg", total: 10, parent: root)
        photo.fail(Reason(description: "gone"))
        root.fail(Reason(description: "1 of 1 photos failed"))
        renderer.stop()
        XCTAssertEqual(
            summary(try records(output)), ["1 - running Import", "2 1 failed IMG_0001.jpg", "1 - failed Import"])
    }

    /// Cancelling the root: each named child's last line says cancelled, before the root's.
    func test_cancelling_the_root_writes_the_cancelled_children_before_the_roots_final_line() throws {
        let (root, first, _, renderer, output, before) = drawnSyncTree()
        first.completedUnitCount = 4
        root.cancel()
        renderer.drawFrame()
        let records = try records(output, after: before)
        XCTAssertEqual(summary(records), ["2 1 cancelled a.txt", "3 1 cancelled b.txt", "1 - cancelled Sync"])
        XCTAssertEqual(records.last?.cancelledBelow, 2)
        renderer.stop()
        XCTAssertEqual(output.writes.count, before + 1, "nothing after the root's final line")
    }

    /// `stop()` with the root still running writes what changed, and nothing after: the stream did not end
    /// normally (a reader fails its mirror).
    func test_stop_with_the_root_running_writes_what_changed_and_then_nothing() throws {
        let (_, first, _, renderer, output, before) = drawnSyncTree()
        first.completedUnitCount = 5
        renderer.stop()
        XCTAssertEqual(summary(try records(output, after: before)), ["1 - running Sync", "2 1 running a.txt"])
        first.completedUnitCount = 10
        renderer.drawFrame()
        renderer.stop()
        XCTAssertEqual(output.writes.count, before + 1)
    }
}
