import Foundation
import ProgressTree
import XCTest

/// A root over leaves that each describe one file: file counts, bytes and throughput summed over the
/// subtree, with finished leaves folded into their parent and released.
final class DescriptionAggregationTests: XCTestCase {
    /// A copy of `sizes.count` files, all attached up front; the root says what it does but is not a file.
    /// Its clock stands still unless a test moves it, so no estimate appears in the descriptions.
    private func makeCopy(sizes: [Int64]) -> (root: ProgressNode, files: [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(sizes.count))
        root.estimationClock = ManualProgressClock()
        root.fileOperationKind = .copying
        let files = sizes.enumerated().map { index, size in
            let file = ProgressNode(totalUnitCount: size, parent: root, pendingUnitCount: 1)
            file.kind = .file
            file.fileOperationKind = .copying
            file.fileURL = URL(fileURLWithPath: "/tmp/source/file\(index).dat")
            return file
        }
        return (root, files)
    }

    /// How many children `root` still holds, read from its public tree description (one line per node).
    private func attachedChildren(of root: ProgressNode) -> Int {
        root.description.split(separator: "\n").filter { $0.hasPrefix("  portion") }.count
    }

    private let nineSizes: [Int64] = [
        100_000_000, 200_000_000, 300_000_000, 400_000_000, 500_000_000,
        600_000_000, 700_000_000, 800_000_000, 1_400_000_000,
    ]  // 5 GB in all

    func test_root_counts_the_files_and_bytes_of_its_leaves() {
        let (root, files) = makeCopy(sizes: nineSizes)
        XCTAssertEqual(root.localizedDescription, "Copying 9 files…")
        XCTAssertEqual(root.fileTotalCount, 9)
        XCTAssertEqual(root.fileCompletedCount, 0)
        XCTAssertEqual(root.localizedAdditionalDescription, "Zero KB of 5 GB")
        XCTAssertEqual(files[0].localizedDescription, "Copying “file0.dat”…")
        XCTAssertNil(files[0].fileTotalCount, "a single file node reads its own unset counts as nil")

        files[8].completedUnitCount = 700_000_000  // half of the last file
        XCTAssertEqual(root.localizedAdditionalDescription, "700 MB of 5 GB")
        for file in files[0..<3] { file.completedUnitCount = file.totalUnitCount }
        XCTAssertEqual(attachedChildren(of: root), 6, "finished files are released")
        XCTAssertEqual(root.fileCompletedCount, 3)
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 9, fileCompletedCount: 3, totalByteCount: 5_000_000_000,
                completedByteCount: 1_300_000_000))
        XCTAssertEqual(root.localizedAdditionalDescription, "1.3 GB of 5 GB")
        XCTAssertEqual(root.localizedDescription, "Copying 9 files…", "finished files still count")

        for file in files { file.completedUnitCount = file.totalUnitCount }
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(attachedChildren(of: root), 0)
        XCTAssertEqual(root.fileCompletedCount, 9)
        XCTAssertEqual(root.localizedAdditionalDescription, "5 GB of 5 GB")
    }

    func test_files_announced_before_they_exist_are_counted_not_sized() {
        // Files copied one after another: the root knows there will be 9.
        let root = ProgressNode.discreteProgress(totalUnitCount: 9)
        root.estimationClock = ManualProgressClock()
        root.fileOperationKind = .copying
        root.fileTotalCount = 9
        XCTAssertEqual(root.localizedDescription, "Copying 9 files…")
        XCTAssertEqual(root.localizedAdditionalDescription, "0 of 9 files")
        for size in nineSizes[0..<3] {
            let file = ProgressNode(totalUnitCount: size, parent: root, pendingUnitCount: 1)
            file.kind = .file
            file.completedUnitCount = size
        }
        let fourth = ProgressNode(totalUnitCount: nineSizes[3], parent: root, pendingUnitCount: 1)
        fourth.kind = .file
        fourth.completedUnitCount = 100_000_000
        XCTAssertEqual(root.fileCompletedCount, 3)
        XCTAssertEqual(root.fileSummary.filesOfUnknownSize, 5)
        XCTAssertFalse(root.fileSummary.hasCompleteByteCounts)
        XCTAssertEqual(root.localizedAdditionalDescription, "3 of 9 files", "bytes of 4 of 9 files would mislead")
    }

    func test_zero_and_one_file() {
        let empty = ProgressNode.discreteProgress(totalUnitCount: 1)
        empty.fileOperationKind = .copying
        XCTAssertEqual(empty.localizedDescription, "Copying files…")
        XCTAssertEqual(empty.localizedAdditionalDescription, "0 of 1", "no file known yet: the unit counts")
        XCTAssertNil(empty.fileTotalCount)
        XCTAssertEqual(empty.fileSummary, ProgressNode.FileSummary())

        let (root, files) = makeCopy(sizes: [419_000])
        XCTAssertEqual(root.localizedDescription, "Copying 1 file…")
        XCTAssertEqual(root.localizedAdditionalDescription, "Zero KB of 419 KB")
        files[0].completedUnitCount = 419_000
        XCTAssertEqual(root.localizedAdditionalDescription, "419 KB of 419 KB")
        XCTAssertEqual(root.fileCompletedCount, 1)
    }

    func test_nested_folders_and_a_file_of_unknown_size() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.fileOperationKind = .downloading
        let folder = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        for size in [1_000_000, -1] as [Int64] {
            let file = ProgressNode(totalUnitCount: size, parent: folder, pendingUnitCount: 1)
            file.kind = .file
        }
        let loose = ProgressNode(totalUnitCount: 3_000_000, parent: root, pendingUnitCount: 1)
        loose.kind = .file
        loose.fileTotalCount = 2  // one node standing for two files
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 4, fileCompletedCount: 0, totalByteCount: 4_000_000, completedByteCount: 0,
                filesOfUnknownSize: 1))
        XCTAssertEqual(root.localizedDescription, "Downloading 4 files…")
        XCTAssertEqual(root.localizedAdditionalDescription, "0 of 4 files", "one size unknown: files, not bytes")
        XCTAssertEqual(folder.fileTotalCount, 2)
    }

    func test_a_finished_subtree_is_folded_with_its_own_finished_children() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let folder = ProgressNode(totalUnitCount: 3, parent: root, pendingUnitCount: 1)
        var files: [ProgressNode] = []
        for _ in 0..<3 {
            let file = ProgressNode(totalUnitCount: 1000, parent: folder, pendingUnitCount: 1)
            file.kind = .file
            files.append(file)
        }
        files[0].completedUnitCount = 1000
        XCTAssertEqual(folder.fileCompletedCount, 1)
        files[1].completedUnitCount = 1000
        files[2].completedUnitCount = 1000  // finishes the folder, which finishes the root
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 3, fileCompletedCount: 3, totalByteCount: 3000, completedByteCount: 3000))
    }

    func test_an_already_finished_child_is_folded_when_added() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let done = ProgressNode.discreteProgress(totalUnitCount: 5000)
        done.kind = .file
        done.completedUnitCount = 5000
        root.addChild(done, withPendingUnitCount: 1)
        XCTAssertEqual(attachedChildren(of: root), 0)
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 1, fileCompletedCount: 1, totalByteCount: 5000, completedByteCount: 5000))
    }

    func test_finishing_is_permanent_for_the_parent() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let file = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        file.kind = .file
        file.completedUnitCount = 100
        file.totalUnitCount = 1000  // after it was released
        file.fileTotalCount = 7
        XCTAssertEqual(root.fileSummary.totalByteCount, 100)
        XCTAssertEqual(root.fileSummary.fileTotalCount, 1)
    }

    func test_aggregate_throughput_and_time_remaining() {
        let clock = ManualProgressClock()
        let (root, files) = makeCopy(sizes: [1_000_000, 1_000_000, 2_000_000])
        root.estimationClock = clock
        XCTAssertNil(root.throughput, "first read")
        for _ in 1...5 {
            clock.advance(by: .seconds(1))
            files[0].advance(by: 200_000)
            files[2].advance(by: 100_000)
            XCTAssertEqual(root.throughput, 300_000)
        }
        // files[0] is done (and released): the root's bytes keep growing smoothly with files[1] starting.
        XCTAssertEqual(attachedChildren(of: root), 2)
        for _ in 6...10 {
            clock.advance(by: .seconds(1))
            files[1].advance(by: 200_000)
            files[2].advance(by: 100_000)
            XCTAssertEqual(root.throughput, 300_000)
        }
        XCTAssertEqual(attachedChildren(of: root), 1)
        // Time remaining is in the root's own units (one per file), weighted like fractionCompleted: they
        // grew by 0.2 + 0.05 per second throughout, and 0.5 is left (half of the last file): 2 seconds.
        XCTAssertEqual(root.estimatedTimeRemaining!, 2, accuracy: 1e-9)
        XCTAssertEqual(root.localizedAdditionalDescription, "3 MB of 4 MB (300 KB/s) — 2 seconds remaining")
    }

    func test_explicit_counts_on_the_root_override_the_sum() {
        let (root, files) = makeCopy(sizes: [10, 20])
        root.fileCompletedCount = 1
        XCTAssertEqual(root.fileTotalCount, 2)
        XCTAssertEqual(root.localizedAdditionalDescription, "1 of 2 files", "completed files set: files shown")
        root.fileCompletedCount = nil
        files[0].completedUnitCount = 10
        XCTAssertEqual(root.localizedAdditionalDescription, "10 bytes of 30 bytes")
    }
}
