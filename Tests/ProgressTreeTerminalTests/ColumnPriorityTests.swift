@testable import ProgressTreeTerminal
import XCTest

/// The priority of the columns when a line is narrowed (`TerminalLayout.dropOrder`, applied by
/// `ColumnPlan`): labels stay readable, then what a person needs most survives, at the widths terminals
/// commonly have; and the plan of the first frame is kept by the frames after it.
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

    /// The labels shown get the room they need (up to half the line), then the bar its full width, then
    /// the labels the rest.
    func test_at_120_columns_every_column_is_shown_and_the_labels_shown_are_whole() {
        XCTAssertEqual(
            frame(copying, columns: 120),
            [
                "• Copying 9 files…                                ███████████████▌░░░░░░░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
                "  • Copying “holiday-photos-2024-final.tar”…      ███████▌░░░░░░░░░░░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
            ])
    }

    /// Every column fits with the labels readable; a file's label cut to its room keeps the file's name,
    /// the verb going first.
    func test_at_80_columns_every_column_is_shown_and_a_cut_label_keeps_the_files_name() {
        XCTAssertEqual(
            frame(copying, columns: 80),
            [
                "• Copying 9 files…            █████▏░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
                "  • “holiday-ph…4-final.tar”… ██▌░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
            ])
    }

    func test_at_60_columns_throughput_and_counts_go_first() {
        XCTAssertEqual(
            frame(copying, columns: 60),
            [
                "• Copying 9 files…            ████████▊░░░░░░░░  52% 1m 05s",
                "  • “holiday-ph…4-final.tar”… ████▎░░░░░░░░░░░░  25%    19s",
            ])
    }

    /// The time remaining goes before the bar: at 40 columns a line is its label, its bar and its
    /// percentage.
    func test_at_40_columns_label_bar_and_percent_survive() {
        XCTAssertEqual(
            frame(copying, columns: 40),
            [
                "• Copying 9 files…   ██████▊░░░░░░  52%",
                "  • “holida…al.tar”… ███▎░░░░░░░░░  25%",
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

    /// Throughput and time remaining appear after a few seconds: the first frame kept room for them (the
    /// lines describe files and have a size), so no column moves when they appear.
    func test_throughput_and_time_remaining_appear_in_room_kept_for_them() {
        var formatter = LineFormatter(layout: .default, colors: false)
        var files = withoutEstimates
        for index in files.indices { files[index].readsEstimates = true }
        var withEstimates = copying
        for index in withEstimates.indices { withEstimates[index].readsEstimates = true }
        XCTAssertEqual(
            frame(files, columns: 80, formatter: &formatter),
            [
                "• Copying 9 files…            █████▏░░░░  52% 4.8 MB of 9.3 MB                 ",
                "  • “holiday-ph…4-final.tar”… ██▌░░░░░░░  25% 1 MB of 4 MB                     ",
            ])
        XCTAssertEqual(frame(withEstimates, columns: 80, formatter: &formatter), frame(copying, columns: 80))
    }

    /// Short labels first: the bar takes its full width and the labels the rest; a longer name that comes
    /// later is cut to that room, keeping its file's name, and nothing moves.
    func test_a_longer_label_that_comes_later_is_cut_to_the_room_of_the_first_frame() {
        var formatter = LineFormatter(layout: .default, colors: false)
        var short = copying
        short[1].label = "Copying “a.txt”…"
        let first = frame(short, columns: 80, formatter: &formatter)
        XCTAssertEqual(
            first,
            [
                "• Copying 9 files…   █████████▉░░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
                "  • Copying “a.txt”… ████▊░░░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
            ])
        XCTAssertEqual(
            frame(copying, columns: 80, formatter: &formatter),
            [
                "• Copying 9 files…   █████████▉░░░░░░░░░  52% 4.8 MB of 9.3 MB 12.3 MB/s 1m 05s",
                "  • “holida…al.tar”… ████▊░░░░░░░░░░░░░░  25% 1 MB of 4 MB     12.3 MB/s    19s",
            ])
    }

    /// A label shorter than a readable one first ("Copying “a”…"), a long one later at the same depth: the
    /// long one is cut to the label column and nothing moves. Only a line deeper than any before makes a
    /// new plan when its label would not be readable (`SteadyColumnsTests`).
    func test_a_longer_label_at_a_depth_already_shown_is_cut_and_moves_nothing() {
        for columns in [40, 60, 80, 120] {
            var formatter = LineFormatter(layout: .default, colors: false)
            var short = copying
            short[1].label = "Copying “a”…"
            let first = frame(short, columns: columns, formatter: &formatter)
            let later = frame(copying, columns: columns, formatter: &formatter)
            let barColumn = { (line: String) in
                line.firstIndex { "█░▏▎▍▌▋▊▉".contains($0) }.map { line.distance(from: line.startIndex, to: $0) }
            }
            XCTAssertEqual(first.map(barColumn), later.map(barColumn), "\(columns): \(first) then \(later)")
            XCTAssertNotNil(barColumn(later[1]), "\(columns): \(later)")
        }
    }

    /// A plan is kept while the terminal keeps its width, also when the lines come to show less (the
    /// final frame, where no line has estimates); a new width is planned anew.
    func test_the_plan_is_kept_at_a_width_and_made_anew_at_another() {
        var formatter = LineFormatter(layout: .default, colors: false)
        let first = frame(copying, columns: 80, formatter: &formatter)
        var finished = copying
        for index in finished.indices {
            finished[index].status = .finished
            finished[index].fraction = 1
            finished[index].throughput = nil
            finished[index].timeRemaining = nil
        }
        let final = frame(finished, columns: 80, formatter: &formatter)
        func barStart(_ line: String) -> Int? {
            line.firstIndex { "█░▏▎▍▌▋▊▉".contains($0) }.map { line.distance(from: line.startIndex, to: $0) }
        }
        XCTAssertEqual(final.map(barStart), first.map(barStart))
        XCTAssertEqual(
            final.map { $0.firstRange(of: "100%")?.lowerBound.utf16Offset(in: $0) },
            first.map { $0.firstRange(of: "%")?.lowerBound.utf16Offset(in: $0) }.map { $0.map { $0 - 3 } })
        XCTAssertEqual(frame(copying, columns: 60, formatter: &formatter), frame(copying, columns: 60))
    }

    /// A spinner's work, once done, shows "1 of 1": a column that appears only in the final frame is not
    /// shown, and the bar stays where it was.
    func test_the_final_frame_makes_no_new_plan_for_a_column_it_alone_shows() {
        var formatter = LineFormatter(layout: .default, colors: false)
        let loading = LineContent(
            depth: 0, label: "Loading customers…", fraction: 0, isIndeterminate: true, status: .running,
            completedUnitCount: 0, totalUnitCount: 0, describedCounts: nil)
        var loaded = loading
        loaded.isIndeterminate = false
        loaded.status = .finished
        loaded.fraction = 1
        loaded.completedUnitCount = 1
        loaded.totalUnitCount = 1
        loaded.readsEstimates = true
        XCTAssertEqual(
            formatter.format([loading], columns: 60, tick: 0),
            [
                "⠋ Loading customers…    ███░░░░░░░░░░░░░░░░░░░░░░░░░░░     "
            ])
        XCTAssertEqual(
            formatter.format([loaded], columns: 60, tick: 1, final: true),
            [
                "✓ Loading customers     ██████████████████████████████ 100%"
            ])
    }

    /// A count wider than its column (a larger file came later) takes the cells the throughput leaves
    /// blank on its line, and nothing moves; with a throughput on the line, it is cut.
    func test_a_count_wider_than_its_column_takes_the_blank_cells_beside_it() {
        var formatter = LineFormatter(layout: .default, colors: false)
        _ = formatter.format(copying, columns: 80, tick: 0)
        var larger = copying
        larger[1].describedCounts = "12.4 MB of 12.5 MB"
        larger[1].throughput = nil
        var cut = larger
        cut[1].throughput = 12_300_000
        XCTAssertEqual(
            formatter.format(larger, columns: 80, tick: 1)[1],
            "  • “holiday-ph…4-final.tar”… ██▌░░░░░░░  25% 12.4 MB of 12.5 MB            19s")
        XCTAssertEqual(
            formatter.format(cut, columns: 80, tick: 2)[1],
            "  • “holiday-ph…4-final.tar”… ██▌░░░░░░░  25% 12.4 MB of 12.5… 12.3 MB/s    19s")
    }
}
