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
}
