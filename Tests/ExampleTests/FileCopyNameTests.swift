import Foundation
import XCTest

/// file-copy and the names of files: any legal name is copied (its temporary name never overflows the
/// length limit nor collides with a source file), and no name reaches the terminal raw.
final class FileCopyNameTests: XCTestCase {
    private var folders: CopyFolders!

    override func setUpWithError() throws {
        folders = try CopyFolders(prefix: "file-copy-names")
    }

    override func tearDownWithError() throws {
        folders?.remove()
    }

    /// A name of 250 bytes is legal (the limit is 255), and so is copied, although ".name.file-copy-partial"
    /// would be too long for a temporary name: the temporary name is shortened instead.
    func test_a_file_with_a_name_near_the_length_limit_is_copied() throws {
        let name = String(repeating: "x", count: 250)
        try Data("long\n".utf8).write(to: folders.source.appendingPathComponent(name))
        let long = String(repeating: "é", count: 127)  // 254 bytes of UTF-8
        try Data("accents\n".utf8).write(to: folders.source.appendingPathComponent(long))

        let result = try run(folders.source.path, folders.destination.path, "--progress", "none")

        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try Data(contentsOf: folders.destination.appendingPathComponent(name)), Data("long\n".utf8))
        XCTAssertEqual(try Data(contentsOf: folders.destination.appendingPathComponent(long)), Data("accents\n".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folders.destination.path).count, 2)
    }

    /// A folders.source file that happens to have the temporary name of another one (".a.file-copy-partial", copied
    /// first: "." sorts before "a") is copied as itself: the temporary file for "a" takes another name, and
    /// neither file is truncated or renamed over the other.
    func test_a_source_file_named_like_a_temporary_file_is_not_overwritten() throws {
        try Data("the real a\n".utf8).write(to: folders.source.appendingPathComponent("a"))
        try Data("not a temporary file\n".utf8).write(to: folders.source.appendingPathComponent(".a.file-copy-partial"))

        let result = try run(folders.source.path, folders.destination.path, "--progress", "none")

        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folders.destination.path).sorted(),
            [".a.file-copy-partial", "a"])
        XCTAssertEqual(try Data(contentsOf: folders.destination.appendingPathComponent("a")), Data("the real a\n".utf8))
        XCTAssertEqual(
            try Data(contentsOf: folders.destination.appendingPathComponent(".a.file-copy-partial")),
            Data("not a temporary file\n".utf8))
    }

    /// File names are data: an escape sequence in one must not turn the terminal red, nor a line break leave
    /// fragments in the live area. Live (on a pseudo-terminal) and plain, none reaches the output.
    func test_escape_sequences_and_line_breaks_in_file_names_never_reach_the_terminal() throws {
        for name in ["esc\u{1B}[31mRED.txt", "two\nlines.txt", "bell\u{7}.txt"] {
            try Data(repeating: 1, count: 150_000).write(to: folders.source.appendingPathComponent(name))
        }
        for (mode, terminal) in [("live", true), ("plain", false)] {
            try? FileManager.default.removeItem(at: folders.destination)
            let child = try ExampleProcess(
                "file-copy", [folders.source.path, folders.destination.path, "--progress", mode, "--limit", "500K"],
                terminal: terminal)
            XCTAssertEqual(child.waitForExit()?.status, 0, child.outputText)
            let output = child.outputText
            XCTAssertFalse(output.contains("\u{1B}[31m"), "\(mode): \(output.debugDescription)")
            // The renderer's own taskbar sequences (`ESC ] 9 ; 4 ; state ; percent BEL`) end in BEL; no
            // other BEL may be written.
            let withoutTaskbarProgress = output.replacing(/\u{1B}\]9;4;[0-9]+;[0-9]+\u{07}/, with: "")
            XCTAssertFalse(withoutTaskbarProgress.contains("\u{7}"), "\(mode): \(output.debugDescription)")
            XCTAssertFalse(withoutTaskbarProgress.contains("\u{1B}]"), "\(mode): \(output.debugDescription)")
            XCTAssertFalse(
                output.contains("two\nlines") || output.contains("two\r\nlines"), "\(mode): \(output.debugDescription)")
            XCTAssertTrue(output.contains("esc [31mRED.txt"), "\(mode): \(output.debugDescription)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folders.destination.path).count, 3)
        }
    }

    func test_a_destination_name_with_an_escape_sequence_is_printed_harmlessly() throws {
        try Data("x".utf8).write(to: folders.source.appendingPathComponent("a.txt"))
        let hostile = folders.root.appendingPathComponent("copy\u{1B}[2J")
        let result = try run(folders.source.path, hostile.path, "--progress", "none")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("copy [2J in "), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("\u{1B}"))
        let again = try run(folders.source.path, hostile.path)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.standardError.contains("copy [2J already exists"), again.standardError)
        XCTAssertFalse(again.standardError.contains("\u{1B}"))
    }

    // MARK: Helpers

    private func run(_ arguments: String...) throws -> FileCopyProcess.Result { try FileCopyProcess.run(arguments) }
}
