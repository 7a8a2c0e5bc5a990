@testable import ProgressTreeTerminal
import XCTest

/// The counts column is planned wide enough for its counts when they are done ("12 of 12", "1.6 MB of
/// 1.6 MB"): the plan finds the " of " between done and total in the text's bytes.
final class CountsReserveTests: XCTestCase {
    func test_the_first_of_is_found_where_the_standard_library_finds_it() {
        let texts = [
            "197 KB of 1.6 MB", "0 of 12", "12 of 12", "no counts", "", " of ", "of of of", "a of b of c",
            "éé of ü", "“of” of 3", "1 ofx 2 of 3", "12 o f 3", "1 of", "1  of  2", "1 of\u{301} 2 of 3",
            "1 of \u{301}2 of 3",
        ]
        for text in texts {
            XCTAssertEqual(ColumnPlan.firstOf(in: text), text.firstRange(of: " of "), "in \"\(text)\"")
        }
    }

    func test_the_reserve_is_the_width_of_the_counts_when_done() {
        func reserve(_ counts: String) -> Int {
            ColumnPlan.countsReserve(
                LineContent(
                    depth: 0, label: "Copying “a.dat”…", fraction: 0.5, isIndeterminate: false, status: .running,
                    completedUnitCount: 1, totalUnitCount: 2, describedCounts: counts))
        }
        XCTAssertEqual(reserve("0 of 12"), "12 of 12".count)
        XCTAssertEqual(reserve("197 KB of 1.6 MB"), "1.6 MB of 1.6 MB".count)
        XCTAssertEqual(reserve("3 files"), "3 files".count)
    }
}
