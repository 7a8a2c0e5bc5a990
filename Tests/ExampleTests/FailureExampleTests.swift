import Foundation
import XCTest

/// The examples' failure paths (Docs/Cancellation.md, "Failure"), run as processes with plain progress:
/// the failure is shown as one, with its reason, and the exit status is 1.
final class FailureExampleTests: XCTestCase {
    func test_loading_rows_with_fail_shows_the_load_failed_and_exits_1() throws {
        let result = try FileCopyProcess.run(
            ["--rows", "3", "--delay", "0", "--fail", "--progress", "plain"], named: "loading-rows")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.standardOutput, "", "no table")
        XCTAssertEqual(
            result.standardError.split(separator: "\n").filter { !$0.contains("started") },
            [
                "[   %] Loading customers from the archive: failed: the archive is not answering (simulated with --fail)"
            ],
            "the reason once: on the load's line (no summary repeating it, no error message after it)")
        XCTAssertFalse(result.standardError.contains("done"), "a failed load is never shown as a success")
    }

    func test_photo_import_with_fail_every_goes_on_and_says_how_many_failed() throws {
        let result = try FileCopyProcess.run(
            ["--photos", "6", "--speed", "20", "--fail-every", "4", "--progress", "plain"], named: "photo-import")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(
            result.standardOutput.hasPrefix("Imported 5 photos, 1 failed, in "), result.standardOutput)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        XCTAssertTrue(
            lines.contains("[ 91%] Importing 6 photos: failed: 1 of 6 photos failed, 5 of 6"), result.standardError)
        XCTAssertEqual(
            lines.last,
            "1 failed: IMG_0004.jpg: the camera stopped answering (simulated with --fail-every 4)",
            "the summary counts the photo that failed, not the download its failure cancelled")
    }

    func test_file_copy_marks_the_file_that_hit_an_io_error_failed_stops_and_exits_1() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("failure-\(UUID().uuidString)")
        let source = folder.appendingPathComponent("source")
        let destination = folder.appendingPathComponent("copy")
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent("media"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("hello\n".utf8).write(to: source.appendingPathComponent("a.txt"))
        try Data(repeating: 7, count: 3_000_000).write(to: source.appendingPathComponent("media/big.bin"))
        try Data("after\n".utf8).write(to: source.appendingPathComponent("media/z.txt"))

        // The hidden test hook fails the read of the chunk that crosses 1.5 MB, in big.bin; at 2 MB a second,
        // big.bin runs for about 0.7 s first, so the renderer (15 frames a second) has seen its node.
        let result = try FileCopyProcess.run([
            source.path, destination.path, "--progress", "json", "--limit", "2M", "--fail-after-bytes", "1500000",
        ])
        XCTAssertEqual(result.status, 1)
        let reason = source.path + "/media/big.bin: Input/output error"
        let objects = try result.standardOutput.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard line.hasPrefix("{") else { return nil }
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let root = try XCTUnwrap(objects.last { $0["parent"] is NSNull })
        XCTAssertEqual(root["state"] as? String, "failed")
        XCTAssertEqual(root["reason"] as? String, reason)
        XCTAssertEqual(root["failedBelow"] as? Int, 1, "the file's node failed")
        let file = try XCTUnwrap(objects.last { $0["name"] as? String == "Copying “big.bin”…" }, result.standardError)
        XCTAssertEqual(file["state"] as? String, "failed", "failed, not cancelled")
        XCTAssertEqual(file["reason"] as? String, reason)
        XCTAssertTrue(result.standardError.contains("file-copy: \(reason)\n"), result.standardError)
        // It stopped there: the file before it is copied, nothing after it, no partial file.
        let copied = try FileManager.default.subpathsOfDirectory(atPath: destination.path).sorted()
        XCTAssertEqual(copied, ["a.txt", "media"])
    }
}
