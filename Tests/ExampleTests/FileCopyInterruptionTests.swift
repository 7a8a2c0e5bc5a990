import Foundation
import XCTest

/// Ending file-copy early on a small tree: Ctrl-C while it is still looking for files, and SIGTERM in the
/// middle of a file (the cases on the large tree are in `FileCopyTests`).
final class FileCopyInterruptionTests: XCTestCase {
    private var folders: CopyFolders!

    override func setUpWithError() throws {
        folders = try CopyFolders(prefix: "file-copy-interruption")
    }

    override func tearDownWithError() throws {
        folders?.remove()
    }

    /// A large SOURCE takes seconds to search: a spinner and the count found so far show meanwhile, and
    /// Ctrl-C cancels with a sentence saying nothing was copied.
    func test_while_looking_for_files_a_spinner_counts_them_and_ctrl_c_cancels_cleanly() throws {
        for index in 0..<300 {
            try Data().write(to: folders.source.appendingPathComponent("file-\(index)"))
        }
        let child = try ExampleProcess(
            "file-copy", [folders.source.path, folders.destination.path, "--pause-after-entries", "200"],
            terminal: true, columns: 250)
        XCTAssertTrue(child.waitForOutput(containing: "scan paused after 200 entries"), child.outputText)
        XCTAssertTrue(
            child.waitForOutput(containing: "Looking for files in \(folders.source.path)… 200 found"),
            child.outputText.debugDescription)
        let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
        XCTAssertTrue(spinner.contains { child.outputText.contains("\r\($0) Looking for files in") })
        child.send(SIGINT)
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.reason, .exit)
        XCTAssertEqual(exit?.status, 130)
        XCTAssertTrue(
            child.outputText.contains(
                "Cancelled while looking for files in \(folders.source.path): nothing was copied."),
            child.outputText.debugDescription)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folders.destination.path), "nothing is created")
        XCTAssertEqual(child.isInKeyMode, false)
    }

    /// SIGTERM (`kill`, `timeout`, a service manager stopping the job) in the middle of a file removes the
    /// partial file (".big.bin.file-copy-partial") before the program ends with 143.
    func test_sigterm_in_the_middle_of_a_file_leaves_no_partial_file_and_exits_143() throws {
        try Data(repeating: 7, count: 3_000_000).write(to: folders.source.appendingPathComponent("big.bin"))
        let process = Process()
        process.executableURL = try FileCopyProcess.executable()
        // The test hook pauses the copy once 1 MB is copied (after the first 1 MiB chunk) and says so.
        process.arguments = [
            folders.source.path, folders.destination.path, "--progress", "none", "--pause-after-bytes", "1000000",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let said = FileCopyProcess.read(errors, until: "paused after")
        XCTAssertTrue(said.contains("paused after 1048576 bytes"), said)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folders.destination.path),
            [".big.bin.file-copy-partial"])

        process.terminate()  // SIGTERM
        process.waitUntilExit()

        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folders.destination.path), [])
    }
}
