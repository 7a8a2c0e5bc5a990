import Foundation
import XCTest

/// The examples' failure paths (issue 14), run as processes with plain progress: the failure is shown as
/// one, with its reason, and the exit status is 1.
final class FailureExampleTests: XCTestCase {
    func test_loading_rows_with_fail_shows_the_load_failed_and_exits_1() throws {
        let result = try FileCopyProcess.run(
            ["--rows", "3", "--delay", "0", "--fail", "--progress", "plain"], named: "loading-rows")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.standardOutput, "", "no table")
        XCTAssertEqual(
            result.standardError.split(separator: "\n").filter { !$0.contains("started") },
            [
                "[   %] Loading customers from the archive…: failed: the archive is not answering (simulated with --fail)",
                "Failed: the archive is not answering (simulated with --fail)",
                "loading-rows: the archive is not answering (simulated with --fail)",
            ])
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
            "1 failed, 1 cancelled: IMG_0004.jpg: the camera stopped answering (simulated with --fail-every 4)",
            "the summary: the photo failed, which cancelled its download")
    }
}
