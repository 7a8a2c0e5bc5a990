import Foundation
import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// The default `localizedDescription` / `localizedAdditionalDescription` of single nodes: Apple's English
/// shapes, exactly, and the overrides.
final class DescriptionShapesTests: XCTestCase {
    /// A root whose estimation clock stands still (unless a test replaces it), so descriptions show an
    /// estimate only where a test makes time pass.
    private func makeNode(_ total: Int64) -> ProgressNode {
        let node = ProgressNode.discreteProgress(totalUnitCount: total)
        node.estimationClock = ManualProgressClock()
        return node
    }

    private func fileNode(
        total: Int64, completed: Int64 = 0, operation: ProgressNode.FileOperationKind? = .copying
    ) -> ProgressNode {
        let node = makeNode(total)
        node.completedUnitCount = completed
        node.kind = .file
        node.fileOperationKind = operation
        return node
    }

    // MARK: Generic nodes

    func test_percent_completed_and_unit_counts() {
        let node = makeNode(10)
        node.completedUnitCount = 3
        XCTAssertEqual(node.localizedDescription, "30% completed")
        let counts = makeNode(42)
        counts.completedUnitCount = 16
        XCTAssertEqual(counts.localizedAdditionalDescription, "16 of 42")
        XCTAssertEqual(counts.localizedDescription, "38% completed")
    }

    func test_percent_includes_the_partial_work_of_children() {
        let parent = makeNode(10)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 6)
        child.completedUnitCount = 50
        XCTAssertEqual(parent.localizedDescription, "30% completed")
        XCTAssertEqual(parent.localizedAdditionalDescription, "0 of 10", "only finished work is counted in units")
    }

    func test_large_counts_are_grouped_and_zero_and_finished_read_naturally() {
        let node = makeNode(5_678_901)
        node.completedUnitCount = 1234
        XCTAssertEqual(node.localizedAdditionalDescription, "1,234 of 5,678,901")
        XCTAssertEqual(node.localizedDescription, "0% completed")
        let fresh = makeNode(3)
        XCTAssertEqual(fresh.localizedDescription, "0% completed")
        XCTAssertEqual(fresh.localizedAdditionalDescription, "0 of 3")
        fresh.completedUnitCount = 3
        XCTAssertEqual(fresh.localizedDescription, "100% completed")
        XCTAssertEqual(fresh.localizedAdditionalDescription, "3 of 3")
    }

    func test_indeterminate_generic_node_describes_nothing() {
        for (completed, total) in [(0, 0), (0, -1), (5, -1), (-1, 10)] as [(Int64, Int64)] {
            let node = makeNode(total)
            node.completedUnitCount = completed
            XCTAssertEqual(node.localizedDescription, "", "(\(completed), \(total))")
            XCTAssertEqual(node.localizedAdditionalDescription, "", "(\(completed), \(total))")
        }
    }

    func test_indeterminate_node_with_rate_and_time_set() {
        let node = makeNode(-1)
        node.throughput = 1000
        node.estimatedTimeRemaining = 60
        XCTAssertEqual(node.localizedAdditionalDescription, "1 minute remaining (1 KB/s)")
        node.throughput = nil
        XCTAssertEqual(node.localizedAdditionalDescription, "1 minute remaining")
        node.estimatedTimeRemaining = nil
        node.throughput = 2048
        XCTAssertEqual(node.localizedAdditionalDescription, "2 KB/s")
    }

    func test_generic_counts_with_time_remaining() {
        let node = makeNode(42)
        node.completedUnitCount = 16
        node.estimatedTimeRemaining = 120
        XCTAssertEqual(node.localizedAdditionalDescription, "16 of 42 — 2 minutes remaining")
    }

    // MARK: File nodes: main description

    func test_copying_ten_files() {
        let node = fileNode(total: 789_100_000)
        node.fileTotalCount = 10
        XCTAssertEqual(node.localizedDescription, "Copying 10 files…")
    }

    func test_zero_one_and_many_files() {
        let node = fileNode(total: 100)
        XCTAssertEqual(node.localizedDescription, "Copying files…", "count unknown")
        node.fileTotalCount = 0
        XCTAssertEqual(node.localizedDescription, "Copying 0 files…")
        node.fileTotalCount = 1
        XCTAssertEqual(node.localizedDescription, "Copying 1 file…")
        node.fileTotalCount = 12_345
        XCTAssertEqual(node.localizedDescription, "Copying 12,345 files…")
    }

    func test_downloading_a_named_file() {
        let node = fileNode(total: 5_300_000, operation: .downloading)
        node.fileURL = URL(fileURLWithPath: "/Users/me/Downloads/photo.jpg")
        XCTAssertEqual(node.localizedDescription, "Downloading “photo.jpg”…")
        node.fileTotalCount = 3  // the name wins over the count
        XCTAssertEqual(node.localizedDescription, "Downloading “photo.jpg”…")
    }

    func test_every_operation_verb() {
        let verbs: [(ProgressNode.FileOperationKind?, String)] = [
            (.downloading, "Downloading"), (.decompressingAfterDownloading, "Decompressing"),
            (.receiving, "Receiving"), (.copying, "Copying"), (.uploading, "Uploading"),
            (.duplicating, "Duplicating"), (nil, "Processing"),
            (ProgressNode.FileOperationKind(rawValue: "com.example.shredding"), "Processing"),
        ]
        for (operation, verb) in verbs {
            let node = fileNode(total: 1, operation: operation)
            node.fileURL = URL(fileURLWithPath: "/tmp/a.txt")
            XCTAssertEqual(node.localizedDescription, "\(verb) “a.txt”…")
        }
    }

    // MARK: File nodes: additional description

    func test_bytes_of_bytes() {
        let node = fileNode(total: 789_100_000, completed: 123_000)
        XCTAssertEqual(node.localizedAdditionalDescription, "123 KB of 789.1 MB")
        let small = fileNode(total: 5_300_000, completed: 419_000)
        XCTAssertEqual(small.localizedAdditionalDescription, "419 KB of 5.3 MB")
        let fresh = fileNode(total: 2_000_000)
        XCTAssertEqual(fresh.localizedAdditionalDescription, "Zero KB of 2 MB")
    }

    func test_bytes_with_throughput_and_time_remaining() {
        let node = fileNode(total: 3_221_225_472, completed: 1_610_612_736)
        node.throughput = 2000
        node.estimatedTimeRemaining = 120
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB (2 KB/s) — 2 minutes remaining")
        node.throughput = nil
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB — 2 minutes remaining")
        node.estimatedTimeRemaining = nil
        node.throughput = 2000
        XCTAssertEqual(node.localizedAdditionalDescription, "1.61 GB of 3.22 GB (2 KB/s)")
    }

    func test_file_counts_when_completed_files_are_set() {
        let node = fileNode(total: 789_100_000, completed: 123_000)
        node.fileTotalCount = 10
        XCTAssertEqual(node.localizedAdditionalDescription, "123 KB of 789.1 MB", "bytes while only the total is set")
        node.fileCompletedCount = 3
        XCTAssertEqual(node.localizedAdditionalDescription, "3 of 10 files")
        node.fileTotalCount = 1
        node.fileCompletedCount = 0
        XCTAssertEqual(node.localizedAdditionalDescription, "0 of 1 file")
    }

    func test_file_of_unknown_size() {
        let node = fileNode(total: -1, operation: .receiving)
        node.throughput = 1000
        node.estimatedTimeRemaining = 60
        XCTAssertEqual(node.localizedDescription, "Receiving files…")
        XCTAssertEqual(node.localizedAdditionalDescription, "1 minute remaining (1 KB/s)")
        node.fileTotalCount = 10
        XCTAssertEqual(node.localizedAdditionalDescription, "0 of 10 files (1 KB/s) — 1 minute remaining")
    }

    func test_finished_file_shows_its_size_and_no_estimates() {
        let clock = ManualProgressClock()
        let node = fileNode(total: 2_000_000)
        node.estimationClock = clock
        _ = node.localizedAdditionalDescription
        clock.advance(by: .seconds(1))
        node.completedUnitCount = 2_000_000
        XCTAssertEqual(node.localizedAdditionalDescription, "2 MB of 2 MB")
    }

    func test_estimated_throughput_and_time_remaining_appear_in_the_description() {
        let clock = ManualProgressClock()
        let node = fileNode(total: 1_000_000, completed: 520_000)
        node.estimationClock = clock
        XCTAssertEqual(node.localizedAdditionalDescription, "520 KB of 1 MB", "first read: no estimate yet")
        clock.advance(by: .seconds(120))
        node.advance(by: 240_000)  // 2,000 bytes per second; 240,000 bytes left
        XCTAssertEqual(node.localizedAdditionalDescription, "760 KB of 1 MB (2 KB/s) — 2 minutes remaining")
        XCTAssertEqual(node.throughput, 2000)
        XCTAssertEqual(node.estimatedTimeRemaining, 120)
        XCTAssertNil(node.userInfo[.throughputKey], "estimates are not stored in userInfo")
    }

    // MARK: Overrides

    func test_overrides_replace_the_default_and_nil_restores_it() {
        let node = makeNode(10)
        node.completedUnitCount = 3
        node.localizedDescription = "Importing photos"
        node.localizedAdditionalDescription = "3 photos imported"
        XCTAssertEqual(node.localizedDescription, "Importing photos")
        XCTAssertEqual(node.localizedAdditionalDescription, "3 photos imported")
        node.completedUnitCount = 5
        XCTAssertEqual(node.localizedDescription, "Importing photos", "an override does not follow the counts")
        node.localizedDescription = nil
        node.localizedAdditionalDescription = nil
        XCTAssertEqual(node.localizedDescription, "50% completed")
        XCTAssertEqual(node.localizedAdditionalDescription, "5 of 10")
        node.localizedDescription = ""
        XCTAssertEqual(node.localizedDescription, "", "an empty override is kept")
    }

    func test_reads_as_a_string() {
        let node = makeNode(4)
        node.completedUnitCount = 1
        let text: String = node.localizedDescription
        XCTAssertEqual(text.count, 13)
        XCTAssertEqual(node.localizedDescription.uppercased(), "25% COMPLETED")
        XCTAssertEqual("[\(node.localizedDescription!)]", "[25% completed]")
    }

    func test_descriptions_are_observable() throws {
        let node = makeNode(10)
        let queue = DispatchQueue(label: "DescriptionShapesTests.observer")
        let delivered = expectation(description: "50%")
        let seen = ValueBox()
        let observation = node.observe(\.localizedDescription, on: queue) { _, change in
            seen.append(change.newValue ?? "nil")
            if change.newValue == "50% completed" { delivered.fulfill() }
        }
        node.completedUnitCount = 5
        wait(for: [delivered], timeout: 10)
        observation.invalidate()
        XCTAssertEqual(seen.values.last, "50% completed")
    }
}

/// A thread-safe list for observer tests.
private final class ValueBox: Sendable {
    private let storage = Lock<[String]>([])
    func append(_ value: String) { storage.withLock { $0.append(value) } }
    var values: [String] { storage.withLock { $0 } }
}
