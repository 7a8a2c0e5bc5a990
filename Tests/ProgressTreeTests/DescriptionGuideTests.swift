import Foundation
import ProgressTree
import XCTest

/// The snippets of `Docs/Descriptions.md`, as tests: each `test_guide_` mirrors one snippet.
final class DescriptionGuideTests: XCTestCase {
    func test_guide_describing_a_download() {
        let download = ProgressNode.discreteProgress(totalUnitCount: 789_100_000)  // bytes
        download.estimationClock = ManualProgressClock()  // (the guide uses the system clock)
        download.kind = .file
        download.fileOperationKind = .downloading
        download.fileURL = URL(fileURLWithPath: "/Users/me/Downloads/photo.jpg")
        download.completedUnitCount = 123_000

        XCTAssertEqual(download.localizedDescription, "Downloading “photo.jpg”…")
        XCTAssertEqual(download.localizedAdditionalDescription, "123 KB of 789.1 MB")
    }

    func test_guide_estimates_appear_when_read() {
        let clock = ManualProgressClock()
        let download = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        download.estimationClock = clock
        download.kind = .file
        download.completedUnitCount = 520_000
        _ = download.localizedAdditionalDescription  // a progress bar's read
        clock.advance(by: .seconds(120))
        download.completedUnitCount = 760_000
        XCTAssertEqual(download.localizedAdditionalDescription, "760 KB of 1 MB (2 KB/s) — 2 minutes remaining")
    }

    func test_guide_aggregation() {
        let copy = ProgressNode.discreteProgress(totalUnitCount: 3)  // one unit per file
        copy.estimationClock = ManualProgressClock()
        copy.fileOperationKind = .copying  // says what it does; its units are not bytes
        let files: [(name: String, size: Int64)] = [
            ("a.mov", 2_000_000_000), ("b.mov", 1_000_000_000), ("c.txt", 2_000),
        ]
        for (name, size) in files {
            let file = ProgressNode(totalUnitCount: size, parent: copy, pendingUnitCount: 1)
            file.kind = .file
            file.fileURL = URL(fileURLWithPath: "/Volumes/Backup/" + name)
        }
        XCTAssertEqual(copy.localizedDescription, "Copying 3 files…")
        XCTAssertEqual(copy.localizedAdditionalDescription, "Zero KB of 3 GB")
        XCTAssertEqual(
            copy.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 3, fileCompletedCount: 0, totalByteCount: 3_000_002_000, completedByteCount: 0))
        XCTAssertTrue(copy.fileSummary.hasCompleteByteCounts)
    }

    func test_guide_comparison_table_numbers_for_this_library() {
        // The ProgressTree column of the comparison table: steady 100 units/s for 60 s.
        func steady() -> (ThroughputEstimator, Double) {
            var estimator = ThroughputEstimator()
            estimator.record(0, at: .zero)
            for tick in 1...600 { estimator.record(Double(tick) * 10, at: .milliseconds(100 * tick)) }
            return (estimator, 6000)
        }
        // A stall: a tenth of the rate 5.1 s in (usual gap 0.1 s + 5 s).
        let (stalled, _) = steady()
        XCTAssertEqual(stalled.rate(at: .milliseconds(65_100))!, 10, accuracy: 1e-6)
        XCTAssertGreaterThan(stalled.rate(at: .milliseconds(65_000))!, 10)
        // A burst of 10,000 units in 1 ms: 4,705/s at once, 560/s five seconds later.
        var (burst, value) = steady()
        value += 10_000
        burst.record(value, at: .microseconds(60_001_000))
        XCTAssertEqual(burst.rate(at: .microseconds(60_001_000))!, 4705, accuracy: 1)
        for tick in 1...50 {
            value += 10
            burst.record(value, at: .microseconds(60_001_000 + 100_000 * tick))
        }
        XCTAssertEqual(burst.rate(at: .microseconds(65_001_000))!, 560, accuracy: 1)
    }
}
