import TestSupport
import XCTest

@testable import file_copy

/// file-copy's lines above the live area (`FileHistory`): the pacer shows some files' lines, and the
/// history accounts for the files it did not show, so that every file is named or counted once, in order.
final class FileHistoryTests: XCTestCase {
    /// Eight files of 150 KB: "    1/8  f1.bin  (150 KB)".
    private func eightFiles(offerInterval: Duration = .zero) -> (FileHistory, [String]) {
        let history = FileHistory(offerInterval: offerInterval)
        history.fileCount = 8
        let labels = (1...8).map { history.label(number: $0, path: "f\($0).bin", size: 150_000) }
        return (history, labels)
    }

    /// Starts file `number` and, when the history says so, gives it its line (as file-copy does before
    /// sending the line to the pacer); returns whether it was offered.
    @discardableResult
    private func start(_ history: FileHistory, _ number: Int, _ labels: [String], size: Int64 = 150_000) -> Bool {
        guard history.started(number: number, size: size) else { return false }
        history.offered(number: number, label: labels[number - 1])
        return true
    }

    func test_a_label_has_the_files_number_its_path_and_its_size() {
        let (_, labels) = eightFiles()
        XCTAssertEqual(labels[2], "    3/8  f3.bin  (150 KB)")
    }

    /// The words after the numbers keep their column as the numbers grow: a range is right-aligned to the
    /// widest one, and a file's number with it.
    func test_ranges_and_numbers_keep_the_columns_of_the_words_after_them() {
        let history = FileHistory(offerInterval: .zero)
        history.fileCount = 2_003
        let first = history.label(number: 1, path: "a.bin", size: 1_000)
        let ninth = history.label(number: 9, path: "b.bin", size: 1_000)
        let late = history.label(number: 832, path: "c.bin", size: 1_000)
        for number in 1...832 {
            if history.started(number: number, size: 1_000), [1, 9, 832].contains(number) {
                history.offered(number: number, label: number == 1 ? first : number == 9 ? ninth : late)
            }
        }
        XCTAssertEqual(history.lines(showing: first), ["            1/2,003  a.bin  (1 KB)"])
        XCTAssertEqual(history.lines(showing: ninth), ["          2–8/2,003  7 more files (7 KB)", ninth])
        XCTAssertEqual(history.lines(showing: late), ["       10–831/2,003  822 more files (822 KB)", late])
        XCTAssertEqual(late, "          832/2,003  c.bin  (1 KB)")
    }

    func test_the_files_the_pacer_skipped_are_one_line_with_their_range_count_and_bytes() {
        let (history, labels) = eightFiles()
        for number in 1...8 { start(history, number, labels) }
        XCTAssertEqual(history.lines(showing: labels[0]), ["    1/8  f1.bin  (150 KB)"])
        XCTAssertEqual(
            history.lines(showing: labels[3]), ["  2–3/8  2 more files (300 KB)", "    4/8  f4.bin  (150 KB)"])
        XCTAssertEqual(
            history.lines(showing: labels[7]), ["  5–7/8  3 more files (450 KB)", "    8/8  f8.bin  (150 KB)"])
        XCTAssertEqual(history.remainingLines(), [])
    }

    /// One file skipped is named when it was offered, counted when it was not.
    func test_one_skipped_file_is_named_when_its_line_was_made_and_counted_when_not() {
        let (history, labels) = eightFiles(offerInterval: .seconds(3600))
        XCTAssertTrue(start(history, 1, labels))
        XCTAssertFalse(start(history, 2, labels), "a small file is offered at most once an interval")
        XCTAssertTrue(start(history, 3, labels, size: 2 << 20), "a file of a chunk or more is always offered")
        XCTAssertTrue(start(history, 4, labels, size: 2 << 20))
        XCTAssertEqual(history.lines(showing: labels[0]), [labels[0]])
        XCTAssertEqual(history.lines(showing: labels[2]), ["    2/8  1 more file (150 KB)", labels[2]])
        XCTAssertTrue(start(history, 5, labels, size: 2 << 20))
        XCTAssertEqual(history.lines(showing: labels[4]), [labels[3], labels[4]])
    }

    /// A label the pacer shows after a later one was printed (or twice) adds nothing.
    func test_a_label_already_accounted_for_prints_nothing() {
        let (history, labels) = eightFiles()
        for number in 1...3 { start(history, number, labels) }
        XCTAssertEqual(history.lines(showing: labels[2]), ["  1–2/8  2 more files (300 KB)", labels[2]])
        XCTAssertEqual(history.lines(showing: labels[2]), [])
        XCTAssertEqual(history.lines(showing: labels[1]), [])
    }

    /// When the copy ends, the files the pacer had not shown yet are named (one) or counted (more).
    func test_the_files_started_after_the_last_line_printed_are_accounted_for_at_the_end() {
        let (history, labels) = eightFiles()
        for number in 1...8 { start(history, number, labels) }
        XCTAssertEqual(history.lines(showing: labels[4]), ["  1–4/8  4 more files (600 KB)", labels[4]])
        XCTAssertEqual(history.remainingLines(), ["  6–8/8  3 more files (450 KB)"])
        XCTAssertEqual(history.remainingLines(), [])

        let (another, labels2) = eightFiles()
        for number in 1...8 { start(another, number, labels2) }
        XCTAssertEqual(another.lines(showing: labels2[6]).count, 2)
        XCTAssertEqual(another.remainingLines(), [labels2[7]])
    }

    /// A copy stopped early (cancelled, failed) accounts for the files it started, not for the others.
    func test_a_copy_stopped_early_accounts_for_the_files_it_started() {
        let (history, labels) = eightFiles(offerInterval: .seconds(3600))
        for number in 1...5 { start(history, number, labels) }
        XCTAssertEqual(history.lines(showing: labels[0]), [labels[0]])
        XCTAssertEqual(history.remainingLines(), ["  2–5/8  4 more files (600 KB)"])
    }

    /// Whichever labels the pacer shows, the lines printed name or count every file started exactly once,
    /// in order, and their bytes add up to the bytes started.
    func test_every_file_is_named_or_counted_once_in_order_whatever_the_pacer_shows() {
        var generator = SplitMix64(seed: 27)
        for _ in 0..<50 {
            let count = Int.random(in: 1...40, using: &generator)
            // Small files (under 1 MiB) are offered once an hour, so only the first is; bigger ones always.
            let history = FileHistory(offerInterval: .seconds(3600))
            history.fileCount = count
            let sizes = (1...count).map { _ in Int64.random(in: 0...3_000_000, using: &generator) }
            let labels = (1...count).map { history.label(number: $0, path: "f\($0)", size: sizes[$0 - 1]) }
            var printed: [String] = []
            var offered: [Int] = []
            for number in 1...count {
                if history.started(number: number, size: sizes[number - 1]) {
                    history.offered(number: number, label: labels[number - 1])
                    offered.append(number)
                }
                // The pacer shows the latest offered label now and then, dropping the ones before it.
                if let shown = offered.last, Bool.random(using: &generator) {
                    printed += history.lines(showing: labels[shown - 1])
                }
            }
            printed += history.remainingLines()
            var next = 1
            var bytes: Int64 = 0
            for line in printed {
                if let match = line.firstMatch(of: /^ *(\d+)–(\d+)\/\d+  (\d+) more files \(/) {
                    XCTAssertEqual(Int(match.1)!, next, "\(printed)")
                    XCTAssertEqual(Int(match.3)!, Int(match.2)! - Int(match.1)! + 1, line)
                    let sum = sizes[(Int(match.1)! - 1)..<Int(match.2)!].reduce(0, +)
                    XCTAssertTrue(line.hasSuffix("(\(FileHistory.bytes(sum)))"), line)
                    bytes += sum
                    next = Int(match.2)! + 1
                } else if let match = line.firstMatch(of: /^ *(\d+)\/\d+\s\s/) {
                    XCTAssertEqual(Int(match.1)!, next, "\(printed)")
                    if line.contains("1 more file (") {
                        XCTAssertTrue(line.hasSuffix("(\(FileHistory.bytes(sizes[next - 1])))"), line)
                    } else {
                        XCTAssertEqual(line, labels[next - 1])
                    }
                    bytes += sizes[next - 1]
                    next += 1
                } else {
                    XCTFail("unexpected line \(line)")
                }
            }
            XCTAssertEqual(next, count + 1, "every file accounted for: \(printed)")
            XCTAssertEqual(bytes, sizes.reduce(0, +))
        }
    }
}
