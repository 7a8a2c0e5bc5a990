import Foundation
import TestSupport
import XCTest

/// What the examples say, in the words a person reads.
final class WordingTests: XCTestCase {
    func test_file_copy_says_0_bytes_and_groups_the_digits_of_a_file_count() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("wording-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        for index in 0..<1_200 {
            XCTAssertTrue(FileManager.default.createFile(atPath: source.path + "/empty-\(index)", contents: nil))
        }
        let child = try ExampleProcess(
            "file-copy", [source.path, root.appendingPathComponent("copy").path, "--progress", "none"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(child.outputText.hasPrefix("Copied 1,200 files (0 bytes) to "), child.outputText)
    }

    func test_photo_import_of_no_photos_logs_that_it_is_done() throws {
        let child = try ExampleProcess("photo-import", ["--photos", "0", "--progress", "plain"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(child.outputText.contains("[100%] Importing 0 photos: done, 0 of 0\n"), child.outputText)
    }

    /// The album is done after its last photo, in the log too.
    func test_photo_import_logs_the_albums_done_after_every_photos_done() throws {
        let child = try ExampleProcess("photo-import", ["--photos", "3", "--speed", "20", "--progress", "plain"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let lines = child.outputText.split(separator: "\n").map(String.init)
        let albumDone = try XCTUnwrap(lines.firstIndex(of: "[100%] Importing 3 photos: done, 3 of 3"), child.outputText)
        let photosDone = lines.indices.filter { lines[$0].hasSuffix(".jpg: done") }
        XCTAssertEqual(photosDone.count, 3, child.outputText)
        XCTAssertTrue(photosDone.allSatisfy { $0 < albumDone }, child.outputText)
    }

    /// An argument is quoted in the usage error: never raw.
    func test_a_bad_argument_is_quoted_without_its_control_characters() throws {
        for (name, arguments) in [
            ("photo-import", ["--progress", "\u{1B}[31mred"]), ("message-feed", ["\u{1B}]0;title\u{7}"]),
            ("file-copy", ["--limit", "\u{1B}[2J"]),
        ] {
            let child = try ExampleProcess(name, arguments)
            XCTAssertEqual(child.waitForExit()?.status, 2, name)
            XCTAssertFalse(child.outputText.contains("\u{1B}"), "\(name): \(child.outputText.debugDescription)")
            XCTAssertTrue(child.outputText.contains("usage: \(name)"), child.outputText)
        }
    }

    func test_message_feed_says_1_burst_for_one_burst() throws {
        let child = try ExampleProcess("message-feed", ["--messages", "1", "--speed", "10", "--progress", "none"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(child.outputText.hasPrefix("Received 1 message in 1 burst in "), child.outputText)
    }

    /// On a terminal 40 columns wide, a summary is wrapped at spaces: no word is split at the edge.
    func test_a_summary_wraps_at_spaces_on_a_narrow_terminal() throws {
        let child = try ExampleProcess(
            "message-feed", ["--messages", "3", "--speed", "10", "--progress", "none"], terminal: true, columns: 40)
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let lines = child.outputText.split(whereSeparator: \.isNewline).map { String($0) }
        let summary = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("Labels shown:") }, child.outputText)
        for line in lines[summary...] { XCTAssertLessThan(line.count, 40, line) }
        XCTAssertTrue(
            lines[summary...].joined(separator: " ").contains("(each on screen ≥ 250 ms; longest wait "),
            child.outputText)
        XCTAssertGreaterThan(lines.count - summary, 1, "wrapped: \(child.outputText)")
    }

    /// On a terminal 40 columns wide, loading-rows' table leaves out the columns that do not fit, from the
    /// right, and says so: no row is broken inside a cell by the terminal. Off a terminal it is whole.
    func test_a_table_wider_than_the_terminal_leaves_out_columns_and_says_so() throws {
        let child = try ExampleProcess("loading-rows", ["--rows", "3", "--delay", "0.1"], terminal: true, columns: 40)
        XCTAssertEqual(child.waitForExit()?.status, 0, child.outputText)
        let screen = VirtualTerminal(columns: 40, rows: 30)
        screen.write(child.outputText)
        let lines = screen.allLines
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("  ID  Name") }, lines.joined(separator: "\n"))
        XCTAssertEqual(
            Array(lines[header...].prefix(5)),
            [
                "  ID  Name           City",
                "────  ─────────────  ───────────",
                "1001  Ada Hopper     Manchester",
                "1002  Grace Liskov   Murray Hill",
                "1003  Alan Thompson  Boston",
            ])
        XCTAssertEqual(
            lines[(header + 6)...].joined(separator: " "),
            "Plan, Joined left out to fit the terminal; loading-rows > rows.txt writes every column.")

        let piped = try ExampleProcess("loading-rows", ["--rows", "3", "--delay", "0.1", "--progress", "none"])
        XCTAssertEqual(piped.waitForExit()?.status, 0)
        XCTAssertTrue(
            piped.outputText.hasPrefix("  ID  Name           City         Plan        Joined\n"), piped.outputText)
    }
}
