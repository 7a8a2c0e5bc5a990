import Foundation
import XCTest

/// file-copy on names that its temporary files must not trip over.
final class FileCopyEdgeCaseTests: XCTestCase {
    private var root: URL!
    private var source: URL { root.appendingPathComponent("source") }
    private var destination: URL { root.appendingPathComponent("copy") }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("file-copy-edge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// A name of 250 bytes is legal (the limit is 255), but ".name.file-copy-partial" is not: the copy used
    /// to fail with "File name too long" and exit 1.
    func test_a_file_with_a_name_near_the_length_limit_is_copied() throws {
        let name = String(repeating: "x", count: 250)
        try Data("long\n".utf8).write(to: source.appendingPathComponent(name))
        let long = String(repeating: "é", count: 127)  // 254 bytes of UTF-8
        try Data("accents\n".utf8).write(to: source.appendingPathComponent(long))

        let result = try run(source.path, destination.path, "--progress", "none")

        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try Data(contentsOf: destination.appendingPathComponent(name)), Data("long\n".utf8))
        XCTAssertEqual(try Data(contentsOf: destination.appendingPathComponent(long)), Data("accents\n".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path).count, 2)
    }

    /// A source file that happens to have the temporary name of another one (".a.file-copy-partial", copied
    /// first: "." sorts before "a") used to be truncated and renamed to "a" when "a" was copied, so the copy
    /// ended with status 0 and one file missing.
    func test_a_source_file_named_like_a_temporary_file_is_not_overwritten() throws {
        try Data("the real a\n".utf8).write(to: source.appendingPathComponent("a"))
        try Data("not a temporary file\n".utf8).write(to: source.appendingPathComponent(".a.file-copy-partial"))

        let result = try run(source.path, destination.path, "--progress", "none")

        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: destination.path).sorted(),
            [".a.file-copy-partial", "a"])
        XCTAssertEqual(try Data(contentsOf: destination.appendingPathComponent("a")), Data("the real a\n".utf8))
        XCTAssertEqual(
            try Data(contentsOf: destination.appendingPathComponent(".a.file-copy-partial")),
            Data("not a temporary file\n".utf8))
    }

    // MARK: Names from outside

    /// File names are data: an escape sequence in one used to turn the terminal red, and a line break to
    /// leave fragments in the live area. Live (on a pseudo-terminal) and plain, none reaches the output.
    func test_escape_sequences_and_line_breaks_in_file_names_never_reach_the_terminal() throws {
        for name in ["esc\u{1B}[31mRED.txt", "two\nlines.txt", "bell\u{7}.txt"] {
            try Data(repeating: 1, count: 150_000).write(to: source.appendingPathComponent(name))
        }
        for (mode, terminal) in [("live", true), ("plain", false)] {
            try? FileManager.default.removeItem(at: destination)
            let child = try ExampleProcess(
                "file-copy", [source.path, destination.path, "--progress", mode, "--limit", "500K"], terminal: terminal)
            XCTAssertEqual(child.waitForExit()?.status, 0, child.outputText)
            let output = child.outputText
            XCTAssertFalse(output.contains("\u{1B}[31m"), "\(mode): \(output.debugDescription)")
            // The renderer's own taskbar sequences (`ESC ] 9 ; 4 ; state ; percent BEL`) end in BEL; no
            // other BEL may be written.
            let withoutTaskbarProgress = output.replacing(/\u{1B}\]9;4;[0-9]+;[0-9]+\u{07}/, with: "")
            XCTAssertFalse(withoutTaskbarProgress.contains("\u{7}"), "\(mode): \(output.debugDescription)")
            XCTAssertFalse(withoutTaskbarProgress.contains("\u{1B}]"), "\(mode): \(output.debugDescription)")
            XCTAssertFalse(output.contains("two\nlines") || output.contains("two\r\nlines"), "\(mode): \(output.debugDescription)")
            XCTAssertTrue(output.contains("esc [31mRED.txt"), "\(mode): \(output.debugDescription)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path).count, 3)
        }
    }

    func test_a_destination_name_with_an_escape_sequence_is_printed_harmlessly() throws {
        try Data("x".utf8).write(to: source.appendingPathComponent("a.txt"))
        let hostile = root.appendingPathComponent("copy\u{1B}[2J")
        let result = try run(source.path, hostile.path, "--progress", "none")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("copy [2J in "), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("\u{1B}"))
        let again = try run(source.path, hostile.path)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.standardError.contains("copy [2J already exists"), again.standardError)
        XCTAssertFalse(again.standardError.contains("\u{1B}"))
    }

    // MARK: Looking for files

    /// A large SOURCE takes seconds to search: a spinner and the count found so far show meanwhile, and
    /// Ctrl-C cancels with a sentence (it used to print only "^C" after seconds of nothing).
    func test_while_looking_for_files_a_spinner_counts_them_and_ctrl_c_cancels_cleanly() throws {
        for index in 0..<300 {
            try Data().write(to: source.appendingPathComponent("file-\(index)"))
        }
        let child = try ExampleProcess(
            "file-copy", [source.path, destination.path, "--pause-after-entries", "200"], terminal: true, columns: 250)
        XCTAssertTrue(child.waitForOutput(containing: "scan paused after 200 entries"), child.outputText)
        XCTAssertTrue(
            child.waitForOutput(containing: "Looking for files in \(source.path)… 200 found"),
            child.outputText.debugDescription)
        let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
        XCTAssertTrue(spinner.contains { child.outputText.contains("\r\($0) Looking for files in") })
        child.send(SIGINT)
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.reason, .exit)
        XCTAssertEqual(exit?.status, 130)
        XCTAssertTrue(
            child.outputText.contains("Cancelled while looking for files in \(source.path): nothing was copied."),
            child.outputText.debugDescription)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "nothing is created")
        XCTAssertEqual(child.isInKeyMode, false)
    }

    // MARK: Termination

    /// SIGTERM (`kill`, `timeout`, a service manager stopping the job) in the middle of a file used to end
    /// the program by the signal's default action, leaving ".big.bin.file-copy-partial" in DEST.
    func test_sigterm_in_the_middle_of_a_file_leaves_no_partial_file_and_exits_143() throws {
        try Data(repeating: 7, count: 3_000_000).write(to: source.appendingPathComponent("big.bin"))
        let process = Process()
        process.executableURL = try executable()
        // The test hook pauses the copy once 1 MB is copied (after the first 1 MiB chunk) and says so.
        process.arguments = [source.path, destination.path, "--progress", "none", "--pause-after-bytes", "1000000"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("paused after") {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { break }
            said.append(data)
        }
        XCTAssertTrue(String(decoding: said, as: UTF8.self).contains("paused after 1048576 bytes"))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: destination.path), [".big.bin.file-copy-partial"])

        process.terminate()  // SIGTERM
        process.waitUntilExit()

        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path), [])
    }

    // MARK: Helpers

    private func executable() throws -> URL { try FileCopyProcess.executable() }

    private func run(_ arguments: String...) throws -> FileCopyProcess.Result { try FileCopyProcess.run(arguments) }
}
