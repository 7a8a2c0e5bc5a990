import Foundation
import ProgressTree
import Synchronization
import XCTest

/// `userInfo`, the typed properties over it (one storage), the Foundation key and kind values, and the
/// folding of finished children's files into their parent.
final class MetadataTests: XCTestCase {
    func test_foundation_raw_values() {
        XCTAssertEqual(
            ProgressNode.UserInfoKey.estimatedTimeRemainingKey.rawValue, "NSProgressEstimatedTimeRemainingKey")
        XCTAssertEqual(ProgressNode.UserInfoKey.throughputKey.rawValue, "NSProgressThroughputKey")
        XCTAssertEqual(ProgressNode.UserInfoKey.fileOperationKindKey.rawValue, "NSProgressFileOperationKindKey")
        XCTAssertEqual(ProgressNode.UserInfoKey.fileURLKey.rawValue, "NSProgressFileURLKey")
        XCTAssertEqual(ProgressNode.UserInfoKey.fileTotalCountKey.rawValue, "NSProgressFileTotalCountKey")
        XCTAssertEqual(ProgressNode.UserInfoKey.fileCompletedCountKey.rawValue, "NSProgressFileCompletedCountKey")
        XCTAssertEqual(ProgressNode.Kind.file.rawValue, "NSProgressKindFile")
        let operations: [(ProgressNode.FileOperationKind, String)] = [
            (.downloading, "Downloading"), (.decompressingAfterDownloading, "DecompressingAfterDownloading"),
            (.receiving, "Receiving"), (.copying, "Copying"), (.uploading, "Uploading"),
            (.duplicating, "Duplicating"),
        ]
        for (operation, suffix) in operations {
            XCTAssertEqual(operation.rawValue, "NSProgressFileOperationKind" + suffix)
        }
    }

    /// Foundation spells these `ProgressKind("…")`, `Progress.FileOperationKind("…")` and
    /// `ProgressUserInfoKey("…")`; the same unlabelled initializers exist here, so migrating is a rename.
    func test_unlabelled_initializers_match_the_labelled_ones() {
        XCTAssertEqual(ProgressNode.Kind("NSProgressKindFile"), .file)
        XCTAssertEqual(ProgressNode.Kind("MyKind").rawValue, "MyKind")
        XCTAssertEqual(ProgressNode.FileOperationKind("NSProgressFileOperationKindCopying"), .copying)
        XCTAssertEqual(ProgressNode.FileOperationKind("Rendering").rawValue, "Rendering")
        XCTAssertEqual(ProgressNode.UserInfoKey("NSProgressThroughputKey"), .throughputKey)
    }

    func test_typed_properties_and_keys_share_one_storage() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        let url = URL(fileURLWithPath: "/tmp/photo.jpg")
        node.setUserInfoObject(url, forKey: .fileURLKey)
        XCTAssertEqual(node.fileURL, url)
        node.fileOperationKind = .uploading
        XCTAssertEqual(node.userInfo[.fileOperationKindKey] as? ProgressNode.FileOperationKind, .uploading)
        node.setUserInfoObject("NSProgressFileOperationKindCopying", forKey: .fileOperationKindKey)
        XCTAssertEqual(node.fileOperationKind, .copying, "the raw string works too")
        node.throughput = 512
        XCTAssertEqual(node.userInfo[.throughputKey] as? Int, 512)
        node.estimatedTimeRemaining = 12.5
        XCTAssertEqual(node.userInfo[.estimatedTimeRemainingKey] as? Double, 12.5)
        node.setUserInfoObject(Int64(7), forKey: .fileTotalCountKey)
        node.setUserInfoObject(UInt8(3), forKey: .fileCompletedCountKey)
        XCTAssertEqual(node.fileTotalCount, 7)
        XCTAssertEqual(node.fileCompletedCount, 3)
        node.setUserInfoObject(4.0, forKey: .fileCompletedCountKey)
        XCTAssertEqual(node.fileCompletedCount, 4, "an integral Double counts")
        let custom = ProgressNode.UserInfoKey("com.example.album")
        node.setUserInfoObject("Holidays", forKey: custom)
        XCTAssertEqual(node.userInfo[custom] as? String, "Holidays")
        XCTAssertEqual(node.userInfo.count, 7)

        node.fileURL = nil
        node.throughput = nil
        node.setUserInfoObject(nil, forKey: custom)
        XCTAssertNil(node.userInfo[.fileURLKey])
        XCTAssertNil(node.userInfo[.throughputKey])
        XCTAssertNil(node.fileURL)
        XCTAssertEqual(node.userInfo.count, 4)
    }

    func test_init_with_user_info() {
        let url = URL(fileURLWithPath: "/tmp/movie.mov")
        let node = ProgressNode(
            parent: nil, userInfo: [.fileURLKey: url, .fileOperationKindKey: ProgressNode.FileOperationKind.receiving])
        node.kind = .file
        XCTAssertEqual(node.fileURL, url)
        XCTAssertEqual(node.localizedDescription, "Receiving “movie.mov”…")
    }

    func test_kind_defaults_to_nil_and_can_be_reset() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        node.estimationClock = ManualProgressClock()
        node.completedUnitCount = 1
        XCTAssertNil(node.kind)
        node.kind = .file
        node.fileOperationKind = .copying
        XCTAssertEqual(node.localizedDescription, "Copying files…")
        node.kind = nil
        node.fileOperationKind = nil
        XCTAssertEqual(node.localizedDescription, "25% completed")
    }

    func test_estimation_clock_is_inherited_from_the_nearest_ancestor() {
        let clock = ManualProgressClock(start: .seconds(100))
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 1000, parent: root, pendingUnitCount: 1)
        XCTAssertNil(child.estimationClock)
        root.estimationClock = clock
        XCTAssertTrue(root.estimationClock as? ManualProgressClock === clock)
        _ = child.estimatedTimeRemaining
        clock.advance(by: .seconds(2))
        child.advance(by: 100)
        XCTAssertEqual(child.estimatedTimeRemaining!, 900 / 50, accuracy: 1e-9, "timed by the root's clock")
        clock.advance(by: .seconds(-5))
        XCTAssertEqual(clock.now, .seconds(102), "a manual clock never goes back")
    }

    func test_metadata_changes_notify_observers_of_the_descriptions() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.fileOperationKind = .copying
        let file = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        let queue = DispatchQueue(label: "MetadataTests.observer")
        let delivered = expectation(description: "root sees the file")
        let observation = root.observe(\.localizedDescription, on: queue) { _, change in
            if change.newValue == "Copying 1 file…" { delivered.fulfill() }
        }
        XCTAssertEqual(root.localizedDescription, "Copying files…")
        file.kind = .file  // a change below the root, in metadata only
        wait(for: [delivered], timeout: 10)
        observation.invalidate()
    }

    /// Metadata is not progress: a child's setters do not queue the child, but its own observers and those
    /// of every ancestor still hear of the change (a file URL two levels down, which moves no file).
    func test_a_metadata_change_is_heard_by_the_node_and_its_ancestors() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let file = ProgressNode(totalUnitCount: 10, parent: folder, pendingUnitCount: 1)
        file.kind = .file
        let queue = DispatchQueue(label: "MetadataTests.ancestors")
        let rootHeard = expectation(description: "the root's observer")
        let fileHeard = expectation(description: "the file's observer")
        // A value of the root that only a grandchild's metadata moves: delivered only if the root heard.
        let rootObservation = root.observe(\.firstGrandchildURL, on: queue) { _, change in
            if change.newValue == URL(fileURLWithPath: "/tmp/a.dat") { rootHeard.fulfill() }
        }
        let fileObservation = file.observe(\.localizedDescription, on: queue) { _, change in
            if change.newValue == "Copying “a.dat”…" { fileHeard.fulfill() }
        }
        file.fileOperationKind = .copying
        file.fileURL = URL(fileURLWithPath: "/tmp/a.dat")
        wait(for: [rootHeard, fileHeard], timeout: 10)
        rootObservation.invalidate()
        fileObservation.invalidate()
    }

    func test_finished_file_children_are_folded_and_released() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 100_000)
        root.fileOperationKind = .copying
        weak var firstFile: ProgressNode?
        for index in 0..<100_000 {
            let file = ProgressNode(totalUnitCount: 1000, parent: root, pendingUnitCount: 1)
            file.kind = .file
            if index == 0 { firstFile = file }
            file.completedUnitCount = 1000
        }
        XCTAssertNil(firstFile, "not kept alive to remember its bytes")
        XCTAssertEqual(root.description.split(separator: "\n").count, 1, "no child attached")
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 100_000, fileCompletedCount: 100_000, totalByteCount: 100_000_000,
                completedByteCount: 100_000_000))
        XCTAssertEqual(root.localizedDescription, "Copying 100,000 files…")
    }

    func test_concurrent_finishing_files_are_each_counted_once() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 8 * 500)
        root.fileOperationKind = .copying
        let stop = Atomic<Bool>(false)
        let wentBack = Atomic<Bool>(false)
        let readerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var last = 0
            while !stop.load(ordering: .relaxed) {
                let done = root.fileSummary.fileCompletedCount
                if done < last { wentBack.store(true, ordering: .relaxed) }
                last = done
            }
            readerDone.signal()
        }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 {
                let file = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
                file.kind = .file
                file.advance(by: 4)
                file.advance(by: 6)
            }
        }
        stop.store(true, ordering: .relaxed)
        readerDone.wait()
        XCTAssertFalse(wentBack.load(ordering: .relaxed), "the completed file count never goes back")
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(
            root.fileSummary,
            ProgressNode.FileSummary(
                fileTotalCount: 4000, fileCompletedCount: 4000, totalByteCount: 40_000, completedByteCount: 40_000))
    }
}

extension ProgressNode {
    /// The file URL of the first child of the first child (for observing a root through its grandchild).
    fileprivate var firstGrandchildURL: URL? { children.first?.children.first?.fileURL }
}
