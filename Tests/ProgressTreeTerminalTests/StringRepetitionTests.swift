@testable import ProgressTreeTerminal
import XCTest

/// Bars, indentation and padding are runs of one unit: `String.repeated` gives what the standard library's
/// `String(repeating:count:)` gives, for units of one or more bytes, characters and scalars.
final class StringRepetitionTests: XCTestCase {
    func test_a_run_is_the_unit_written_count_times() {
        for unit in ["█", " ", "░", "#", "ab", "é", "e\u{301}", "👍🏽", "━╸"] {
            for count in [0, 1, 2, 3, 7, 40] {
                XCTAssertEqual(String.repeated(unit, count: count), String(repeating: unit, count: count), unit)
            }
        }
        XCTAssertEqual(String.repeated("█", count: -3), "", "no cells for a negative count")
        XCTAssertEqual(String.repeated("", count: 5), "")
    }
}
