import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Live frames on a virtual terminal of fixed size, with a manual clock: exact screens.
final class LiveRenderingTests: XCTestCase {
    private func renderer(
        _ root: ProgressNode, _ terminal: VirtualTerminal, clock: ManualProgressClock = ManualProgressClock(),
        layout: TerminalLayout = .default, environment: [String: String] = ["NO_COLOR": "1"],
        configure: (inout TerminalRenderer.Options) -> Void = { _ in }
    ) -> TerminalRenderer {
        makeTestRenderer(
            root, output: terminal, clock: clock, layout: layout, environment: environment, configure: configure)
    }

    /// album (2 photos) › photo (download 9 + filter 1) › download at 50%.
    private func photoTree() -> (album: ProgressNode, photo: ProgressNode, download: ProgressNode) {
        let album = ProgressNode.discreteProgress(totalUnitCount: 2)
        album.localizedDescription = "Importing 2 photos"
        let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_0001.jpg"
        let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        download.kind = .file
        download.fileOperationKind = .downloading
        download.fileURL = URL(fileURLWithPath: "/DCIM/IMG_0001.jpg")
        download.estimationClock = ManualProgressClock()
        download.completedUnitCount = 1_000_000
        return (album, photo, download)
    }

    func test_three_level_tree_is_drawn_indented_with_bars_percent_and_counts() {
        let terminal = VirtualTerminal(columns: 80, rows: 10)
        let tree = photoTree()
        let renderer = renderer(tree.album, terminal)
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Importing 2 photos              ██▎░░░░░░░  22% 0 of 2",
                "  • IMG_0001.jpg                  ████▌░░░░░  45% 0 of 10",
                "    • Downloading “IMG_0001.jpg”… █████░░░░░  50% 1 MB of 2 MB",
            ])
        XCTAssertFalse(terminal.cursorVisible, "the cursor is hidden while live")
        renderer.stop()
        XCTAssertTrue(terminal.cursorVisible, "stop() restores the cursor")
    }

    func test_every_line_is_exactly_the_terminal_width_minus_one_so_nothing_wraps() {
        let terminal = VirtualTerminal(columns: 80, rows: 10)
        let renderer = renderer(photoTree().album, terminal)
        renderer.drawFrame()
        let frame = terminal.writes.last!
        let lines = frame.split(separator: "\n").dropLast()  // the last piece closes the frame
        XCTAssertEqual(lines.count, 3)
        for line in lines {
            let visible = line.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r", with: "")
            XCTAssertEqual(DisplayWidth.of(visible), 79, "\(visible)")
        }
    }

    func test_indeterminate_node_shows_a_spinner_that_moves_and_a_pulse_instead_of_a_percentage() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Fetching rows", total: -1)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["⠙ Fetching rows         ░███░░░░░░░░░░░░░░░░░░░░░░░░░░"])
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["⠹ Fetching rows         ░░███░░░░░░░░░░░░░░░░░░░░░░░░░"])
    }

    func test_paused_and_cancelled_nodes_are_marked() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Sync", total: 2)
        let first = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        first.localizedDescription = "first"
        let second = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        second.localizedDescription = "second"
        first.completedUnitCount = 1
        second.completedUnitCount = 2
        let renderer = renderer(root, terminal)
        first.pause()
        second.cancel()
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Sync             ████▏░░░░░░  37% 0 of 2",
                "  ‖ first · paused ██▊░░░░░░░░  25% 1 of 4",
                "  ✗ second         █████▌░░░░░  50% 2 of 4",
            ])
    }

    func test_a_narrow_terminal_drops_low_priority_columns_first_and_keeps_label_and_percent() {
        let terminal = VirtualTerminal(columns: 30, rows: 10)
        let tree = photoTree()
        let renderer = renderer(tree.album, terminal)
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Importing 2 photos      22%",
                "  • IMG_0001.jpg          45%",
                "    • “IMG_0001.jpg”…     50%",
            ])
    }

    func test_wide_characters_and_emoji_count_two_columns_when_cutting_labels() {
        let terminal = VirtualTerminal(columns: 40, rows: 10)
        let root = makeRoot("写真を読み込んでいます📷 とても長いラベル", total: 4)
        root.completedUnitCount = 1
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        let line = terminal.visibleLines[0]
        XCTAssertEqual(line, "• 写真を読み込んで… ███▌░░░░░░░░░░  25%")
        XCTAssertEqual(VirtualTerminal.displayWidth(line), 39)
    }

    func test_a_tree_taller_than_the_terminal_ends_with_a_more_line() {
        let terminal = VirtualTerminal(columns: 50, rows: 5)
        let (root, _) = makeBatch(jobs: 10, unitsEach: 10)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Batch             ░░░░░░░░░░░░░░░░░   0%",
                "  • job 1           ░░░░░░░░░░░░░░░░░   0%",
                "  • job 2           ░░░░░░░░░░░░░░░░░   0%",
                "  … +8 more",
            ])
    }

    func test_finished_children_stay_as_one_collapsed_line_and_only_the_most_recent_are_kept() {
        let terminal = VirtualTerminal(columns: 60, rows: 20)
        let root = makeRoot("Batch", total: 5)
        let renderer = renderer(root, terminal) { $0.keptFinishedChildren = 2 }
        var children: [ProgressNode] = []
        for index in 1...4 {
            let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            child.localizedDescription = "job \(index)"
            let step = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 1)
            step.localizedDescription = "step"
            children.append(child)
        }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines.count, 9)
        for child in children.prefix(3) { child.completedUnitCount = 2 }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Batch             ██████░░░░  60% 3 of 5",
                "  ✓ job 2           ██████████ 100% 2 of 2",
                "  ✓ job 3           ██████████ 100% 2 of 2",
                "  • job 4           ░░░░░░░░░░   0% 0 of 2",
                "    • step          ░░░░░░░░░░   0% 0 of 1",
            ])
    }

    func test_a_shorter_frame_blanks_the_lines_it_no_longer_uses() {
        let terminal = VirtualTerminal(columns: 60, rows: 20)
        let root = makeRoot("Batch", total: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        child.localizedDescription = "job"
        let renderer = renderer(root, terminal) { $0.keptFinishedChildren = 0 }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines.count, 2)
        child.completedUnitCount = 1
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• Batch             █████░░░░░  50% 1 of 2"])
        XCTAssertEqual(terminal.cursorRow, 1, "the cursor rests below the live area")
    }

    func test_unchanged_frames_are_not_written_again() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        renderer.drawFrame()
        XCTAssertEqual(terminal.writes.count, 1)
        root.completedUnitCount = 1
        renderer.drawFrame()
        XCTAssertEqual(terminal.writes.count, 2)
    }

    func test_lines_printed_through_the_renderer_appear_above_the_live_area() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        renderer.print("first message")
        root.completedUnitCount = 2
        renderer.print("second message")
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "first message",
                "second message",
                "• Work             █████▌░░░░░  50% 2 of 4",
            ])
    }

    func test_nothing_is_drawn_before_the_initial_delay_but_stop_leaves_the_final_frame() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let clock = ManualProgressClock()
        let root = makeRoot("Quick", total: 1)
        let renderer = renderer(root, terminal, clock: clock) { $0.initialDelay = .milliseconds(200) }
        renderer.start()
        renderer.drawFrame()
        XCTAssertEqual(terminal.writes, [])
        clock.advance(by: .milliseconds(100))
        root.completedUnitCount = 1
        renderer.drawFrame()
        XCTAssertEqual(terminal.writes, [])
        renderer.stop()
        XCTAssertEqual(terminal.visibleLines, ["✓ Quick            ████████████████████████████ 100% 1 of 1"])
        XCTAssertTrue(terminal.cursorVisible)
    }

    func test_colour_is_used_unless_NO_COLOR_is_set() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.completedUnitCount = 1
        let coloured = VirtualTerminal(columns: 60, rows: 10)
        renderer(root, coloured, environment: [:]).drawFrame()
        XCTAssertTrue(coloured.writes.joined().contains("\u{1B}[36m"), "the bar is cyan")
        let plain = VirtualTerminal(columns: 60, rows: 10)
        renderer(root, plain, environment: ["NO_COLOR": "1"]).drawFrame()
        XCTAssertFalse(plain.writes.joined().contains("m\u{1B}[0m"))
        XCTAssertFalse(plain.writes.joined().contains("\u{1B}[36m"))
        XCTAssertEqual(coloured.visibleLines, plain.visibleLines, "colour changes nothing else")
    }

    /// The customization snippet of Docs/Terminal.md.
    func test_guide_custom_layout() {
        let root = makeRoot("Work", total: 4)
        root.completedUnitCount = 1
        var layout = TerminalLayout()
        layout.columns = [.label, .percent, .bar]  // which columns, in what order
        layout.dropOrder = [.bar]  // what to give up first when narrow
        layout.barWidth = 8...20
        layout.bar = .ascii  // "#" and "-"
        layout.colors.bar = .green
        layout.spinner = ["-", "\\", "|", "/"]
        let terminal = VirtualTerminal(columns: 50, rows: 5)
        renderer(root, terminal, layout: layout).drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• Work                   25% #####---------------"])
    }

    func test_a_cancelled_indeterminate_node_shows_an_empty_bar_and_its_mark_instead_of_a_pulse() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Fetching rows", total: -1)
        let renderer = renderer(root, terminal)
        renderer.drawFrame()
        root.cancel()
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["✗ Fetching rows         ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░"])
    }

    /// "+N more … and finished lines give way first": when the tree is taller than the terminal, finished
    /// lines are hidden before any running line.
    func test_finished_lines_give_way_to_running_lines_when_the_tree_is_taller_than_the_terminal() {
        let (root, children) = makeBatch(jobs: 12, unitsEach: 10) { "job \(String(format: "%02d", $0))" }
        let terminal = VirtualTerminal(columns: 60, rows: 8)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        for child in children.prefix(3) { child.completedUnitCount = 10 }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Batch             ████▌░░░░░░░░░░░░░  25% 3 of 12",
                "  • job 04          ░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  • job 05          ░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  • job 06          ░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  • job 07          ░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  • job 08          ░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  … +7 more",
            ])
    }

    /// A label with a line break (a file name can hold one) keeps one line per node, the break shown as a
    /// space, so the next frame replaces the previous one exactly.
    func test_a_line_break_in_a_label_does_not_break_the_live_area() {
        let root = makeRoot("a\nb", total: 4)
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        root.completedUnitCount = 2
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• a b              █████▌░░░░░  50% 2 of 4"])
    }
}
