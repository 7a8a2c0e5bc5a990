import Foundation
import XCTest

/// A cancelled file-copy leaves a destination the same command can run into again: removed when nothing was
/// copied, kept with a sentence saying how to go on otherwise (file-copy never overwrites).
final class FileCopyRerunTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rerun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("source/media"), withIntermediateDirectories: true)
        try Data(count: 20_000_000).write(to: folder.appendingPathComponent("source/media/big.bin"))
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: folder)
    }

    /// Runs file-copy until its test hook pauses it after 1 MB, then sends SIGINT (Ctrl-C); returns the
    /// exit status and what it wrote on standard output.
    private func copyAndCancel(to destination: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try FileCopyProcess.executable()
        process.arguments = [
            folder.appendingPathComponent("source").path, destination.path, "--progress", "none",
            "--pause-after-bytes", "1000000",
        ]
        let errors = Pipe()
        let output = Pipe()
        process.standardError = errors
        process.standardOutput = output
        try process.run()
        let said = FileCopyProcess.read(errors, until: "paused after")
        XCTAssertTrue(said.contains("paused after"), said)
        process.interrupt()
        process.waitUntilExit()
        let written = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, written)
    }

    func test_a_copy_cancelled_before_its_first_file_removes_its_destination_and_runs_again() throws {
        let destination = folder.appendingPathComponent("copy")
        let cancelled = try copyAndCancel(to: destination)
        XCTAssertEqual(cancelled.status, 130)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertTrue(
            cancelled.output.contains(
                "Nothing was copied: \(destination.path) was removed, run the same command to start again."),
            cancelled.output)
        let again = try FileCopyProcess.run(
            [folder.appendingPathComponent("source").path, destination.path, "--progress", "none"])
        XCTAssertEqual(again.status, 0, again.standardError + again.standardOutput)
        XCTAssertEqual(
            try Data(contentsOf: destination.appendingPathComponent("media/big.bin")).count, 20_000_000)
    }

    func test_a_copy_cancelled_after_some_files_keeps_them_and_says_how_to_go_on() throws {
        try Data("notes\n".utf8).write(to: folder.appendingPathComponent("source/a.txt"))
        let destination = folder.appendingPathComponent("copy")
        let cancelled = try copyAndCancel(to: destination)
        XCTAssertEqual(cancelled.status, 130)
        XCTAssertEqual(try String(contentsOf: destination.appendingPathComponent("a.txt"), encoding: .utf8), "notes\n")
        XCTAssertTrue(
            cancelled.output.contains("To copy again, remove \(destination.path) or give another destination."),
            cancelled.output)
    }
}
