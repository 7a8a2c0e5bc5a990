import Foundation
import ProgressTree
import Synchronization
import XCTest

/// Bad input never crashes and never shows a nonsense string: each case has a documented fallback
/// (`Docs/Descriptions.md`, "Bad input").
final class DescriptionBadInputTests: XCTestCase {
    private func fileNode(total: Int64, completed: Int64 = 0) -> ProgressNode {
        let node = ProgressNode.discreteProgress(totalUnitCount: total)
        node.estimationClock = ManualProgressClock()
        node.completedUnitCount = completed
        node.kind = .file
        node.fileOperationKind = .downloading
        return node
    }

    func test_negative_zero_and_absurd_throughput() {
        let node = fileNode(total: 3_221_225_472, completed: 1_610_612_736)
        node.estimatedTimeRemaining = 120
        node.throughput = -2000
        XCTAssertEqual(node.throughput, -2000, "kept as set")
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB — 2 minutes remaining")
        node.throughput = 0
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB — 2 minutes remaining")
        node.throughput = .max
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB (9.22 EB/s) — 2 minutes remaining")
        node.setUserInfoObject(Double.nan, forKey: .throughputKey)
        XCTAssertNil(node.throughput)
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB — 2 minutes remaining")
        node.setUserInfoObject(1e300, forKey: .throughputKey)
        XCTAssertEqual(node.throughput, .max, "clamped")
        node.setUserInfoObject("fast", forKey: .throughputKey)
        XCTAssertNil(node.throughput, "not a number: nil, and no estimate either")
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB — 2 minutes remaining")
        node.setUserInfoObject(2500.4, forKey: .throughputKey)
        XCTAssertEqual(node.throughput, 2500)
    }

    func test_negative_infinite_and_absurd_time_remaining() {
        let node = fileNode(total: 789_100_000, completed: 123_000)
        node.throughput = 2000
        for value in [-1, -.infinity, .infinity, .nan, 1e300, ProgressFormat.longestTimeRemaining * 2] as [Double] {
            node.estimatedTimeRemaining = value
            XCTAssertEqual(node.localizedAdditionalDescription, "123 KB of 789.1 MB (2 KB/s)", "\(value)")
        }
        node.estimatedTimeRemaining = -1
        XCTAssertEqual(node.estimatedTimeRemaining, -1, "kept as set")
        node.setUserInfoObject(Duration.seconds(90), forKey: .estimatedTimeRemainingKey)
        XCTAssertEqual(node.estimatedTimeRemaining, 90)
        XCTAssertEqual(node.localizedAdditionalDescription, "123 KB of 789.1 MB (2 KB/s) — 2 minutes remaining")
        node.setUserInfoObject("soon", forKey: .estimatedTimeRemainingKey)
        XCTAssertNil(node.estimatedTimeRemaining)
        let indeterminate = ProgressNode.discreteProgress(totalUnitCount: -1)
        indeterminate.estimatedTimeRemaining = -5
        indeterminate.throughput = -5
        XCTAssertEqual(indeterminate.localizedAdditionalDescription, "")
    }

    func test_file_url_without_a_usable_name() {
        let node = fileNode(total: 100)
        node.fileURL = URL(string: "https://example.com")!
        XCTAssertEqual(node.fileURL?.lastPathComponent, "")
        XCTAssertEqual(node.localizedDescription, "Downloading files…")
        node.fileURL = URL(fileURLWithPath: "/")
        XCTAssertEqual(node.localizedDescription, "Downloading files…")
        node.fileTotalCount = 2
        XCTAssertEqual(node.localizedDescription, "Downloading 2 files…")
        node.fileURL = URL(string: "https://example.com/a/b/archive.zip?token=1")!
        XCTAssertEqual(node.localizedDescription, "Downloading “archive.zip”…")
        node.setUserInfoObject("/tmp/photo.jpg", forKey: .fileURLKey)
        XCTAssertNil(node.fileURL, "a String is not a URL")
        XCTAssertEqual(node.localizedDescription, "Downloading 2 files…")
    }

    func test_unusable_file_counts_read_as_not_set() {
        let node = fileNode(total: 100)
        node.fileTotalCount = -3
        XCTAssertNil(node.fileTotalCount)
        XCTAssertEqual(node.localizedDescription, "Downloading files…")
        node.setUserInfoObject(2.5, forKey: .fileTotalCountKey)
        XCTAssertNil(node.fileTotalCount)
        node.setUserInfoObject("ten", forKey: .fileTotalCountKey)
        XCTAssertNil(node.fileTotalCount)
        node.setUserInfoObject(UInt64.max, forKey: .fileTotalCountKey)
        XCTAssertEqual(node.fileTotalCount, .max, "clamped")
        XCTAssertEqual(node.localizedDescription, "Downloading 9,223,372,036,854,775,807 files…")
    }

    func test_totals_that_overflow_saturate() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        root.estimationClock = ManualProgressClock()
        root.fileOperationKind = .copying
        var files: [ProgressNode] = []
        for _ in 0..<3 {
            let file = ProgressNode(totalUnitCount: .max, parent: root, pendingUnitCount: 1)
            file.kind = .file
            file.fileTotalCount = .max
            files.append(file)
        }
        files[0].completedUnitCount = .max
        let summary = root.fileSummary
        XCTAssertEqual(summary.totalByteCount, .max)
        XCTAssertEqual(summary.completedByteCount, .max)
        XCTAssertEqual(summary.fileTotalCount, .max)
        XCTAssertEqual(root.localizedAdditionalDescription, "9.22 EB of 9.22 EB")
        XCTAssertEqual(root.localizedDescription, "Copying 9,223,372,036,854,775,807 files…")
    }

    func test_overshoot_keeps_generic_counts_and_clamps_bytes() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = 15
        XCTAssertEqual(node.localizedDescription, "100% completed")
        XCTAssertEqual(node.localizedAdditionalDescription, "15 of 10", "raw counts, as set")
        let file = fileNode(total: 2_000_000, completed: 3_000_000)
        XCTAssertEqual(file.localizedAdditionalDescription, "2 MB of 2 MB")
    }

    func test_a_clock_that_goes_back_does_no_harm() {
        let clock = WobblyClock()
        let node = fileNode(total: 10_000)
        node.estimationClock = clock
        for step in 0..<50 {
            node.advance(by: 100)
            _ = node.localizedAdditionalDescription
            XCTAssertGreaterThanOrEqual(node.throughput ?? 0, 0, "step \(step)")
        }
    }

    func test_descriptions_of_int64_extremes_never_trap() {
        let node = ProgressNode(totalUnitCount: .max)
        node.completedUnitCount = .max
        XCTAssertEqual(node.localizedDescription, "100% completed")
        XCTAssertEqual(
            node.localizedAdditionalDescription,
            "9,223,372,036,854,775,807 of 9,223,372,036,854,775,807")
        node.completedUnitCount = .min
        XCTAssertEqual(node.localizedDescription, "", "indeterminate generic node")
        XCTAssertEqual(node.localizedAdditionalDescription, "")
        node.kind = .file
        node.completedUnitCount = .max
        XCTAssertEqual(node.localizedAdditionalDescription, "9.22 EB of 9.22 EB")
    }
}

/// A broken clock: jumps forward and back.
private final class WobblyClock: ProgressClock {
    private let ticks = Atomic<Int>(0)
    var now: Duration {
        let tick = ticks.add(1, ordering: .relaxed).newValue
        return .milliseconds(tick % 3 == 0 ? 10 * tick : 5000 - 7 * tick)
    }
}
