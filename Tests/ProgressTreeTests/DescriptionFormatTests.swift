import ProgressTree
import XCTest

/// The percent, count and time-remaining formatters behind the descriptions.
final class DescriptionFormatTests: XCTestCase {
    func test_percent_rounds_the_shortest_decimal_half_to_even() {
        let table: [(Double, String)] = [
            (0, "0%"), (0.3, "30%"), (0.29, "29%"), (0.07, "7%"), (0.125, "12%"), (0.135, "14%"),
            (0.004, "0%"), (0.005, "0%"), (0.015, "2%"), (0.994, "99%"), (0.995, "100%"), (1, "100%"),
            (0.30000000000000004, "30%"), (1e-5, "0%"), (.leastNonzeroMagnitude, "0%"),
        ]
        for (fraction, text) in table {
            XCTAssertEqual(ProgressFormat.percent(fraction), text, "\(fraction)")
        }
        XCTAssertEqual(ProgressFormat.percent(-0.5), "0%")
        XCTAssertEqual(ProgressFormat.percent(7), "100%")
        XCTAssertEqual(ProgressFormat.percent(.nan), "0%")
        XCTAssertEqual(ProgressFormat.percent(.infinity), "100%")
    }

    func test_counts_are_grouped_by_thousands() {
        XCTAssertEqual(ProgressFormat.count(0), "0")
        XCTAssertEqual(ProgressFormat.count(999), "999")
        XCTAssertEqual(ProgressFormat.count(1000), "1,000")
        XCTAssertEqual(ProgressFormat.count(1_234_567), "1,234,567")
        XCTAssertEqual(ProgressFormat.count(-42_000), "-42,000")
        XCTAssertEqual(ProgressFormat.count(Int64.min), "-9,223,372,036,854,775,808")
    }

    func test_time_remaining_in_one_unit() {
        let table: [(Double, String)] = [
            (0, "0 seconds remaining"), (0.2, "1 second remaining"), (1, "1 second remaining"),
            (1.4, "1 second remaining"), (45, "45 seconds remaining"), (59.4, "59 seconds remaining"),
            (59.6, "1 minute remaining"), (60, "1 minute remaining"), (89, "1 minute remaining"),
            (90, "2 minutes remaining"), (120, "2 minutes remaining"), (3569, "59 minutes remaining"),
            (3570, "1 hour remaining"), (5400, "2 hours remaining"), (86_399, "1 day remaining"),
            (82_800, "23 hours remaining"), (84_600, "1 day remaining"), (172_800, "2 days remaining"),
            (ProgressFormat.longestTimeRemaining, "36,500 days remaining"),
        ]
        for (seconds, text) in table {
            XCTAssertEqual(ProgressFormat.timeRemaining(seconds), text, "\(seconds)")
        }
    }

    func test_time_remaining_fallbacks() {
        XCTAssertNil(ProgressFormat.timeRemaining(-1))
        XCTAssertNil(ProgressFormat.timeRemaining(-.ulpOfOne))
        XCTAssertNil(ProgressFormat.timeRemaining(.nan))
        XCTAssertNil(ProgressFormat.timeRemaining(.infinity))
        XCTAssertNil(ProgressFormat.timeRemaining(ProgressFormat.longestTimeRemaining.nextUp))
        XCTAssertNil(ProgressFormat.timeRemaining(1e300))
    }
}
