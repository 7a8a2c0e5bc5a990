import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Messages printed through the renderer: where they appear (above the live area, alone before the first
/// frame, below the final one), and that text from outside (file names) never reaches the terminal raw.
final class PrintedMessageTests: XCTestCase {
    private let hostile = "esc\u{1B}[31mRED.txt"

    func test_an_escape_sequence_in_a_printed_message_is_shown_as_text_not_obeyed() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        renderer.print(hostile)
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "esc [31mRED.txt",
                "• Work             ░░░░░░░░░░░   0% 0 of 4",
            ])
        XCTAssertFalse(terminal.writes.joined().contains("\u{1B}[31m"), "no colour change reaches the terminal")
    }

    func test_a_line_break_in_a_printed_message_makes_two_lines_above_the_live_area() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        renderer.print("two\nlines")
        renderer.print("carriage\rreturn\r\n")
        root.completedUnitCount = 2
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "two",
                "lines",
                "carriage",
                "return",
                "• Work             █████▌░░░░░  50% 2 of 4",
            ])
    }

    func test_printed_messages_are_cleaned_before_the_first_frame_and_in_plain_mode() {
        let early = VirtualTerminal(columns: 60, rows: 10)
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let live = makeTestRenderer(root, output: early) { $0.initialDelay = .seconds(1) }
        live.print("a\u{7}b\nc\u{9B}d")
        XCTAssertEqual(early.writes, ["a b\nc d\n"])

        let log = VirtualTerminal(columns: 60, rows: 10, isTerminal: false)
        let plain = makeTestRenderer(root, mode: .plain, output: log)
        plain.print(hostile + "\nnext")
        XCTAssertEqual(log.writes, ["esc [31mRED.txt\nnext\n"])
    }

    func test_printable_text_has_no_control_characters() {
        XCTAssertEqual(TerminalText.printable("a\u{0}b\u{1B}c\u{7F}d\u{85}e\nf\tg"), "a b c d e f g")
        XCTAssertEqual(TerminalText.printable("Grüße 🙂"), "Grüße 🙂")
    }

    /// A message printed after `stop()` in live mode is written below the final frame, not dropped.
    func test_print_after_stop_is_not_lost() {
        let root = makeRoot("Work", total: 1)
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        root.completedUnitCount = 1
        renderer.stop()
        renderer.print("Imported 1 photo")
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "✓ Work             ███████████ 100% 1 of 1",
                "Imported 1 photo",
            ])
    }

    /// "Quick work never flashes": a message printed during `Options.initialDelay` is written alone, without
    /// drawing the live area early.
    func test_print_during_the_initial_delay_writes_the_message_but_no_live_area() {
        let root = makeRoot("Work", total: 4)
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let renderer = makeTestRenderer(root, output: terminal) { $0.initialDelay = .milliseconds(200) }
        renderer.start()
        renderer.print("Keys: p pause")
        XCTAssertEqual(terminal.visibleLines, ["Keys: p pause"])
        XCTAssertTrue(terminal.cursorVisible)
    }
}
