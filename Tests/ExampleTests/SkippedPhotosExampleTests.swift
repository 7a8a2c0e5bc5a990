import Foundation
import XCTest

/// photo-import's `--skip-every N`: the photos the library has already are counted by a custom property
/// (`PhotosSkipped`), shown on the album's line with `TerminalRenderer.show` and said in the summary.
final class SkippedPhotosExampleTests: XCTestCase {
    /// Piped, the log's last line (the album's) and the summary say how many were skipped.
    func test_photo_import_with_skip_every_counts_the_skipped_photos_on_its_line_and_in_its_summary() throws {
        let result = try FileCopyProcess.run(
            ["--photos", "6", "--speed", "20", "--skip-every", "3", "--progress", "plain"], named: "photo-import")
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.hasPrefix("Imported 4 photos, 2 skipped, in "), result.standardOutput)
        XCTAssertTrue(result.standardOutput.hasSuffix(" s\n"), result.standardOutput)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.last, "[100%] Importing 6 photos: done, 6 of 6, 2 skipped", result.standardError)
    }

    /// Skipped and failed photos are both said, skipped first, as on the album's line.
    func test_photo_import_says_skipped_before_failed() throws {
        let result = try FileCopyProcess.run(
            ["--photos", "6", "--speed", "20", "--skip-every", "3", "--fail-every", "4", "--progress", "plain"],
            named: "photo-import")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(
            result.standardOutput.hasPrefix("Imported 3 photos, 2 skipped, 1 failed, in "), result.standardOutput)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        XCTAssertTrue(
            lines.contains("[ 91%] Importing 6 photos: failed: 1 of 6 photos failed, 5 of 6, 2 skipped"),
            result.standardError)
    }

    /// Without `--skip-every` nothing is skipped, and nothing says so.
    func test_photo_import_without_skips_says_nothing_of_them() throws {
        let result = try FileCopyProcess.run(
            ["--photos", "2", "--speed", "20", "--progress", "plain"], named: "photo-import")
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.hasPrefix("Imported 2 photos in "), result.standardOutput)
        XCTAssertFalse(result.standardError.contains("skipped"), result.standardError)
    }

    /// Cancelled with Ctrl-C once some photos were skipped, the summary still says how many.
    func test_photo_import_cancelled_says_how_many_it_skipped() throws {
        let child = try ExampleProcess(
            "photo-import", ["--photos", "100", "--speed", "5", "--skip-every", "2", "--progress", "plain"])
        XCTAssertTrue(child.waitForOutput(containing: " skipped"), child.outputText)
        child.send(SIGINT)
        XCTAssertEqual(child.waitForExit()?.status, 130)
        let summary = try XCTUnwrap(
            child.outputText.split(separator: "\n").last { $0.hasPrefix("Cancelled at ") }, child.outputText)
        XCTAssertNotNil(
            summary.wholeMatch(of: #/Cancelled at [0-9]{1,2}%: [0-9]{1,2} of 100 photos imported, [0-9]{1,2} skipped/#),
            String(summary))
    }
}
