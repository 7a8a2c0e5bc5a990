import ProgressTree
import XCTest

/// A cancelled node never finishes, so it shows no estimated rate or time remaining; values set by the
/// user are still shown.
final class CancelledEstimatesTests: XCTestCase {
    /// A cancelled node never finishes: an estimated "— 1 minute remaining" (growing as the rate decays)
    /// and a rate in bytes per second are wrong on it. Values set by the user are still shown.
    func test_a_cancelled_node_shows_no_estimated_rate_or_time_remaining() {
        let clock = ManualProgressClock()
        let copy = ProgressNode.discreteProgress(totalUnitCount: 10_000_000)
        copy.kind = .file
        copy.fileOperationKind = .copying
        copy.estimationClock = clock
        _ = copy.localizedAdditionalDescription  // the first sample
        for _ in 1...5 {
            clock.advance(by: .seconds(1))
            copy.advance(by: 100_000)
        }
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB (100 KB/s) — 2 minutes remaining")

        copy.cancel()
        XCTAssertNil(copy.throughput)
        XCTAssertNil(copy.estimatedTimeRemaining)
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB")
        clock.advance(by: .seconds(30))
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB")

        copy.throughput = 2_000
        copy.estimatedTimeRemaining = 60
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB (2 KB/s) — 1 minute remaining")
    }

    /// The children of a cancelled root are cancelled too: a file line below it shows no estimates either.
    func test_a_file_below_a_cancelled_root_shows_no_estimates() {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.estimationClock = clock
        let file = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1)
        file.kind = .file
        _ = file.localizedAdditionalDescription
        clock.advance(by: .seconds(1))
        file.advance(by: 100_000)
        XCTAssertEqual(file.localizedAdditionalDescription, "100 KB of 1 MB (100 KB/s) — 9 seconds remaining")
        root.cancel()
        XCTAssertEqual(file.localizedAdditionalDescription, "100 KB of 1 MB")
        XCTAssertEqual(root.localizedAdditionalDescription, "0 of 1")
    }
}
