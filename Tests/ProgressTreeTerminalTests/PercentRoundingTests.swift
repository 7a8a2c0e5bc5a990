import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// The percentage shown is `fractionCompleted` rounded down to a whole percent (`WholePercent`), in every
/// mode, robust to binary floating point.
final class PercentRoundingTests: XCTestCase {
    /// Percent is `fractionCompleted` rounded down, robust to binary floating point: 29 of 100 shows 29%
    /// in live and plain mode, although 0.29 × 100 is 28.999999999999996.
    func test_percent_of_29_of_100_is_29_not_28() {
        let root = makeRoot("Work", total: 100)
        root.completedUnitCount = 29
        let terminal = VirtualTerminal(columns: 60, rows: 5)
        makeTestRenderer(root, output: terminal).drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• Work             ████▉░░░░░░░░░░░░  29% 29 of 100"])

        let log = VirtualTerminal(columns: 80, rows: 10, isTerminal: false)
        makeTestRenderer(root, mode: .plain, output: log).drawFrame()
        XCTAssertEqual(log.allLines, ["[ 29%] Work: started, 29 of 100"])
    }
}
