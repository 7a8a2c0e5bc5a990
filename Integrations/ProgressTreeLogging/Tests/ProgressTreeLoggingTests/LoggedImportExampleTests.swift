import Foundation
import XCTest

/// The example run as a program, its output piped: plain lines, and nothing lost at exit.
final class LoggedImportExampleTests: XCTestCase {

    /// Runs logged-import with `arguments`, standard output and standard error each piped to a file.
    private func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let executable = productsDirectory.appendingPathComponent("logged-import")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), executable.path)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("logged-import-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputURL = folder.appendingPathComponent("stdout")
        let errorsURL = folder.appendingPathComponent("stderr")
        XCTAssertTrue(FileManager.default.createFile(atPath: outputURL.path, contents: nil))
        XCTAssertTrue(FileManager.default.createFile(atPath: errorsURL.path, contents: nil))
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, try String(contentsOf: outputURL, encoding: .utf8),
            try String(contentsOf: errorsURL, encoding: .utf8)
        )
    }

    func testPipedRunLogsEachDecisionAsAPlainLineAndTheLastRecordsSurviveTheExit() throws {
        let run = try run(["--photos", "5", "--delay-ms", "0", "--verbose"])
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.output, "")
        XCTAssertFalse(run.errors.contains("\u{1B}"))
        let lines = run.errors.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "info photo-import: importing [photos=5]")
        XCTAssertTrue(
            lines.contains(
                "warning photo-import: skipped IMG_0004.jpg (duplicate) [photo=IMG_0004.jpg progress=Importing 5 photos › IMG_0004.jpg]"
            ),
            run.errors)
        XCTAssertTrue(
            lines.contains(
                "debug photo-import: reading [photo=IMG_0005.jpg progress=Importing 5 photos › IMG_0005.jpg]"))
        // Logged just before stop() and just after it, as the program ends.
        XCTAssertTrue(lines.contains("notice photo-import: done [imported=4]"), run.errors)
        XCTAssertEqual(lines.last, "info photo-import: bye")
    }

    func testJsonRunWritesOnlyJSONOnStandardOutputAndTheRecordsOnStandardError() throws {
        let run = try run(["--photos", "3", "--delay-ms", "0", "--progress", "json"])
        XCTAssertEqual(run.status, 0)
        let jsonLines = run.output.split(separator: "\n")
        XCTAssertFalse(jsonLines.isEmpty)
        for line in jsonLines {
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8)), String(line))
        }
        XCTAssertEqual(
            run.errors.split(separator: "\n"),
            [
                "info photo-import: importing [photos=3]", "notice photo-import: done [imported=3]",
                "info photo-import: bye",
            ])
    }
}
