@testable import ProgressTreeTerminal
import XCTest

/// The priority of the columns when a line is narrowed (`TerminalLayout.dropOrder`, applied by
/// `ColumnPlan`): what a person needs most survives, at the widths terminals commonly have.
final class ColumnPriorityTests: XCTestCase {
    /// A copy under way: the root with every column, and a file with a long name.
    private let copying = [
        LineContent(
            depth: 0, label: "Copying 9 files…", fraction: 0.52, isIndeterminate: false, status: .running,
            completedUnitCount: 52, totalUnitCount: 100, describedCounts: "4.8 MB of 9.3 MB",
            throughput: 12_300_000, timeRemaining: 65),
        LineContent(
            depth: 1, label: "Copying “holiday-photos-2024-final.tar”…", fraction: 0.25, isIndeterminate: false,
            status: .running, completedUnitCount: 1, totalUnitCount: 4, describedCounts: "1 MB of 4 MB",
            throughput: 12_300_000, timeRemaining: 19),
    ]

    /// A frame drawn by `formatter`, which keeps the widths of earlier frames.
    private func frame(_ lines: [LineContent], columns: Int, formatter: inout LineFormatter) -> [String] {
        formatter.format(lines, columns: columns, tick: 0)
    }

    /// A first frame.
    private func frame(_ lines: [LineContent], columns: Int) -> [String] {
        var formatter = LineFormatter(layout: .default, colors: false)
        return frame(lines, columns: columns, formatter: &formatter)
    }

    /// The label keeps half the line, room for longer names to come; the bar has the rest.
    func test_at_120_columns_every_column_is_shown_and_the_label_keeps_half_the_line() {
        XCTAssertEqual(frame(copying, columns: 120), [
            "• Copying 9 files…                                          ██████████▍░░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
            "  • Copying “holiday-photos-2024-final.tar”…                █████░░░░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
        ])
    }

    func test_at_80_columns_every_column_is_shown_and_the_label_gives_way() {
        XCTAssertEqual(frame(copying, columns: 80), [
            "• Copying 9 files…            █████▏░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
            "  • Copying “holiday-photos-… ██▌░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
        ])
    }

    func test_at_60_columns_throughput_and_counts_go_first() {
        XCTAssertEqual(frame(copying, columns: 60), [
            "• Copying 9 files…  █████▏░░░░  52% 4.8 MB of 9.3 MB 1m 05s",
            "  • Copying “holid… ██▌░░░░░░░  25% 1 MB of 4 MB        19s",
        ])
    }

    func test_at_40_columns_label_percent_and_time_remaining_survive() {
        XCTAssertEqual(frame(copying, columns: 40), [
            "• Copying 9 fil… █████▏░░░░  52% 1m 05s",
            "  • Copying “ho… ██▌░░░░░░░  25%    19s",
        ])
    }

    func test_widths_add_up_to_the_line_at_every_common_width() {
        for columns in [40, 60, 80, 120] {
            for line in frame(copying, columns: columns) {
                XCTAssertEqual(DisplayWidth.of(line), columns - 1, "\(columns): \(line)")
            }
        }
    }

    private var withoutEstimates: [LineContent] {
        copying.map { line in
            var line = line
            line.throughput = nil
            line.timeRemaining = nil
            return line
        }
    }

    /// Throughput and time remaining appear after a few seconds: the bar keeps the width of the first
    /// frame, and the label gives way.
    func test_the_bar_keeps_its_width_when_throughput_and_time_remaining_appear() {
        var formatter = LineFormatter(layout: .default, colors: false)
        XCTAssertEqual(frame(withoutEstimates, columns: 80, formatter: &formatter), [
            "• Copying 9 files…                      ████████▊░░░░░░░░  52% 4.8 MB of 9.3 MB",
            "  • Copying “holiday-photos-2024-final… ████▎░░░░░░░░░░░░  25% 1 MB of 4 MB    ",
        ])
        XCTAssertEqual(frame(copying, columns: 80, formatter: &formatter), [
            "• Copying 9 files…     ████████▊░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
            "  • Copying “holiday-… ████▎░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
        ])
    }

    /// Short labels and the counts only, first: the label is given half the line, room for longer names
    /// to come, so the bar narrows to 17 cells at 80 columns. When throughput and time remaining appear
    /// and a long name comes, the bar keeps that width and the name is not cut to the label's minimum.
    func test_at_the_first_frame_the_label_gets_room_for_longer_names_to_come() {
        var formatter = LineFormatter(layout: .default, colors: false)
        var short = withoutEstimates
        short[1].label = "Copying “a.txt”…"
        XCTAssertEqual(frame(short, columns: 80, formatter: &formatter), [
            "• Copying 9 files…                      ████████▊░░░░░░░░  52% 4.8 MB of 9.3 MB",
            "  • Copying “a.txt”…                    ████▎░░░░░░░░░░░░  25% 1 MB of 4 MB    ",
        ])
        XCTAssertEqual(frame(copying, columns: 80, formatter: &formatter), [
            "• Copying 9 files…     ████████▊░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
            "  • Copying “holiday-… ████▎░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
        ])
    }

    /// The room for names to come is a guess: it leaves the bar at least half its full width (15 cells),
    /// where a first frame with every column and short labels would otherwise get a 10-cell bar.
    func test_the_room_guessed_for_later_labels_leaves_the_bar_half_its_width() {
        var short = copying
        short[1].label = "Copying “a.txt”…"
        XCTAssertEqual(frame(short, columns: 80), [
            "• Copying 9 files…       ███████▊░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
            "  • Copying “a.txt”…     ███▊░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
        ])
    }

    /// Short labels first leave the bar wider than the label's minimum needs; when the new columns would
    /// leave the label less than its minimum, the bar narrows that far and no further, and stays so.
    func test_the_bar_narrows_only_as_far_as_the_labels_minimum_needs_and_stays() {
        var formatter = LineFormatter(layout: .default, colors: false)
        var short = withoutEstimates
        short[1].label = "Copying “a.txt”…"
        XCTAssertEqual(frame(short, columns: 60, formatter: &formatter), [
            "• Copying 9 files…    ███████▊░░░░░░░  52% 4.8 MB of 9.3 MB",
            "  • Copying “a.txt”…  ███▊░░░░░░░░░░░  25% 1 MB of 4 MB    ",
        ])
        var shortWithEstimates = copying
        shortWithEstimates[1].label = "Copying “a.txt”…"
        XCTAssertEqual(frame(shortWithEstimates, columns: 60, formatter: &formatter), [
            "• Copying 9 fil… ██████▊░░░░░░  52% 4.8 MB of 9.3 MB 1m 05s",
            "  • Copying “a.… ███▎░░░░░░░░░  25% 1 MB of 4 MB        19s",
        ])
        XCTAssertEqual(frame(copying, columns: 60, formatter: &formatter), [
            "• Copying 9 fil… ██████▊░░░░░░  52% 4.8 MB of 9.3 MB 1m 05s",
            "  • Copying “ho… ███▎░░░░░░░░░  25% 1 MB of 4 MB        19s",
        ])
    }
}
