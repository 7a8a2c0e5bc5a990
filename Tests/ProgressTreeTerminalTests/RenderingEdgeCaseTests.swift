import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import Synchronization
import XCTest

/// Edge cases of what the renderer shows, in every mode, checked against the promises of Docs/Terminal.md:
/// floating-point percentages, children finishing with their parent, messages printed before the first
/// frame or after the last, trees taller than the terminal, control characters in labels, wide spinner
/// frames and a terminal resized while frames are drawn by hand. Manual clock, no timer, no sleeps.
final class RenderingEdgeCaseTests: XCTestCase {
    private func renderer(
        _ root: ProgressNode, _ output: any TerminalOutput, mode: TerminalRenderer.Mode = .live,
        clock: ManualProgressClock = ManualProgressClock(), layout: TerminalLayout = .default,
        configure: (inout TerminalRenderer.Options) -> Void = { _ in }
    ) -> TerminalRenderer {
        makeTestRenderer(root, mode: mode, output: output, clock: clock, layout: layout, configure: configure)
    }

    /// The visible text of the lines of one raw frame (escape codes and carriage returns removed).
    private func frameLines(_ frame: String) -> [String] {
        frame.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            String($0.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r", with: ""))
        }
    }

    // MARK: Counts

    /// Percent is `fractionCompleted` rounded down, robust to binary floating point: 29 of 100 shows 29%
    /// in live and plain mode, although 0.29 × 100 is 28.999999999999996.
    func test_percent_of_29_of_100_is_29_not_28() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 100)
        root.localizedDescription = "Work"
        root.completedUnitCount = 29
        let terminal = VirtualTerminal(columns: 60, rows: 5)
        renderer(root, terminal).drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• Work                       ████▎░░░░░░░░░░  29% 29 of 100"])

        let log = VirtualTerminal(columns: 80, rows: 10, isTerminal: false)
        renderer(root, log, mode: .plain).drawFrame()
        XCTAssertEqual(log.allLines, ["[ 29%] Work: started, 29 of 100"])
    }

    // MARK: Plain and json: finished children

    /// Children that finish in the same frame as the root get their `done` line, before the root's: the
    /// root's known children are reported as finished before its subtree collapses, and a log never says
    /// the whole is done before its parts.
    func test_plain_mode_prints_done_for_children_that_finish_with_the_root_before_the_roots() {
        let (root, first, second) = makeSyncTree()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = renderer(root, output, mode: .plain)
        renderer.drawFrame()
        first.completedUnitCount = 10
        second.completedUnitCount = 10
        renderer.stop()
        XCTAssertEqual(output.allLines, [
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
        let (root, first, second) = makeSyncTree()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = renderer(root, output, mode: .json)
        renderer.drawFrame()
        first.completedUnitCount = 10
        second.completedUnitCount = 10
        renderer.stop()
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
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.localizedDescription = "Sync"
        let child = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        child.localizedDescription = "step"
        let clock = ManualProgressClock()
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let renderer = renderer(root, output, mode: .plain, clock: clock)
        renderer.drawFrame()
        child.completedUnitCount = 5
        clock.advance(by: .seconds(6))
        renderer.drawFrame()
        XCTAssertEqual(output.allLines, [
            "[  0%] Sync: started, 0 of 1",
            "[  0%] Sync › step: started, 0 of 100",
            "[  5%] Sync: 0 of 1",
            "[  5%] Sync › step: 5 of 100",
        ])
    }

    /// The finishing event is `done` also for a node first seen already finished (quick work in a log).
    func test_plain_mode_quick_work_ends_with_done() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.localizedDescription = "Quick"
        let output = VirtualTerminal(columns: 80, rows: 10, isTerminal: false)
        let renderer = renderer(root, output, mode: .plain)
        renderer.start()
        root.completedUnitCount = 1
        renderer.stop()
        XCTAssertEqual(output.allLines, ["[100%] Quick: done, 1 of 1"])
    }

    // MARK: Messages

    /// A message printed after `stop()` in live mode is written below the final frame, not dropped.
    func test_print_after_stop_is_not_lost() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.localizedDescription = "Work"
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        root.completedUnitCount = 1
        renderer.stop()
        renderer.print("Imported 1 photo")
        XCTAssertEqual(terminal.visibleLines, [
            "✓ Work                        █████████████████ 100% 1 of 1",
            "Imported 1 photo",
        ])
    }

    /// "Quick work never flashes": a message printed during `Options.initialDelay` is written alone, without
    /// drawing the live area early.
    func test_print_during_the_initial_delay_writes_the_message_but_no_live_area() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        root.localizedDescription = "Work"
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = renderer(root, terminal) { $0.initialDelay = .milliseconds(200) }
        renderer.start()
        renderer.print("Keys: p pause")
        XCTAssertEqual(terminal.visibleLines, ["Keys: p pause"])
        XCTAssertTrue(terminal.cursorVisible)
    }

    // MARK: Layout

    /// "+N more … and finished lines give way first": when the tree is taller than the terminal, finished
    /// lines are hidden before any running line.
    func test_finished_lines_give_way_to_running_lines_when_the_tree_is_taller_than_the_terminal() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 12)
        root.localizedDescription = "Batch"
        var children: [ProgressNode] = []
        for index in 1...12 {
            let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
            child.localizedDescription = "job \(String(format: "%02d", index))"
            children.append(child)
        }
        let terminal = VirtualTerminal(columns: 60, rows: 8)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        for child in children.prefix(3) { child.completedUnitCount = 10 }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, [
            "• Batch                       ████░░░░░░░░░░░░  25% 3 of 12",
            "  • job 04                    ░░░░░░░░░░░░░░░░   0% 0 of 10",
            "  • job 05                    ░░░░░░░░░░░░░░░░   0% 0 of 10",
            "  • job 06                    ░░░░░░░░░░░░░░░░   0% 0 of 10",
            "  • job 07                    ░░░░░░░░░░░░░░░░   0% 0 of 10",
            "  • job 08                    ░░░░░░░░░░░░░░░░   0% 0 of 10",
            "  … +7 more",
        ])
    }

    /// A label with a line break (a file name can hold one) keeps one line per node, the break shown as a
    /// space, so the next frame replaces the previous one exactly.
    func test_a_line_break_in_a_label_does_not_break_the_live_area() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        root.localizedDescription = "a\nb"
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        root.completedUnitCount = 2
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• a b                         ████████▌░░░░░░░░  50% 2 of 4"])
    }

    /// "Every line is cut to columns − 1 display columns", also with a spinner frame two columns wide
    /// (emoji, a common choice).
    func test_a_wide_spinner_frame_still_fits_the_line() {
        let root = ProgressNode.discreteProgress(totalUnitCount: -1)
        root.localizedDescription = "Fetching rows"
        var layout = TerminalLayout()
        layout.spinner = ["🌑", "🌒", "🌓", "🌔"]
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        renderer(root, terminal, layout: layout).drawFrame()
        let lines = frameLines(terminal.writes.last!)
        XCTAssertEqual(lines.map { DisplayWidth.of($0) }, [59])
    }

    /// With `drawsOnTimer = false` (frames drawn by hand, no SIGWINCH source) the width still follows the
    /// terminal: after it narrows, the next frame fits the new width.
    func test_width_follows_the_terminal_when_drawing_frames_yourself() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        root.localizedDescription = "Work"
        let output = ResizableOutput(columns: 80, rows: 10)
        let renderer = renderer(root, output)
        renderer.drawFrame()
        output.resize(columns: 40, rows: 10)
        root.completedUnitCount = 1
        renderer.drawFrame()
        let lines = frameLines(output.writes.last!)
        XCTAssertEqual(lines.map { DisplayWidth.of($0) }, [39])
    }

    /// After the terminal narrows, a terminal that rewraps has turned each old line into several rows: the
    /// next frame moves up over all of them (two rows per 99-column line on a 60-column terminal) and
    /// clears to the end of the screen once, so no fragment of the old frame stays.
    func test_a_narrower_terminal_moves_up_over_the_rewrapped_lines_and_clears_below() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        root.localizedDescription = "Work"
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        child.localizedDescription = "step"
        let output = ResizableOutput(columns: 100, rows: 10)
        let renderer = renderer(root, output)
        renderer.drawFrame()
        output.resize(columns: 60, rows: 10)
        renderer.drawFrame()
        XCTAssertTrue(output.writes.last!.contains("\r\u{1B}[4A\u{1B}[J"))
        XCTAssertEqual(frameLines(output.writes.last!).map { DisplayWidth.of($0) }, [59, 59])
    }

}

/// An output whose size changes when the test says so (a window resized), recording the raw writes.
private final class ResizableOutput: TerminalOutput {
    private let state: Mutex<(size: TerminalSize, writes: [String])>

    init(columns: Int, rows: Int) {
        state = Mutex((TerminalSize(columns: columns, rows: rows), []))
    }

    func resize(columns: Int, rows: Int) {
        state.withLock { $0.size = TerminalSize(columns: columns, rows: rows) }
    }

    var writes: [String] { state.withLock { $0.writes } }
    func write(_ text: String) { state.withLock { $0.writes.append(text) } }
    var isTerminal: Bool { true }
    func size() -> TerminalSize? { state.withLock { $0.size } }
    var fileDescriptor: Int32? { nil }
}
