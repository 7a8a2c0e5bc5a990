import Foundation
import ProgressTree
@testable import ProgressTreeFoundation
import XCTest

/// `ProgressNode.foundationProgress`: a `Foundation.Progress` that follows a node.
final class FoundationProgressTests: XCTestCase {
    /// Waits until `condition` holds: what Foundation stores (`fractionCompleted`, a Foundation parent's
    /// view) is written by deliveries on the Progress's own queue, whose end nothing signals.
    private func waitUntil(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline {
                XCTFail("not reached in 10 s", file: file, line: line)
                return
            }
            usleep(1_000)
        }
    }

    func test_counts_and_fraction_follow_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let progress = node.foundationProgress
        node.advance(by: 4)
        XCTAssertEqual(progress.completedUnitCount, 4, "read from the node")
        XCTAssertEqual(progress.totalUnitCount, 10)
        waitUntil { progress.fractionCompleted == 0.4 }
        node.totalUnitCount = 8
        node.advance(by: 4)
        XCTAssertTrue(progress.isFinished)
        waitUntil { progress.fractionCompleted == 1 }
    }

    func test_partial_work_of_the_node_children_shows_in_the_fraction_and_in_a_foundation_parent() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let child = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 2)
        let foundationParent = Progress.discreteProgress(totalUnitCount: 2)
        foundationParent.addChild(node.foundationProgress, withPendingUnitCount: 2)
        child.completedUnitCount = 5
        XCTAssertEqual(node.fractionCompleted, 0.25)
        XCTAssertEqual(node.foundationProgress.completedUnitCount, 0, "partial work is not in the counts")
        waitUntil { abs(node.foundationProgress.fractionCompleted - 0.25) < 1e-6 }
        waitUntil { abs(foundationParent.fractionCompleted - 0.25) < 1e-6 }
        child.completedUnitCount = 10
        node.advance(by: 2)
        waitUntil { foundationParent.isFinished }
        XCTAssertEqual(foundationParent.completedUnitCount, 2)
    }

    func test_the_same_progress_while_it_lives_and_a_new_one_after() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        weak var first: Progress?
        do {
            let progress = node.foundationProgress
            first = progress
            XCTAssertTrue(node.foundationProgress === progress)
        }
        XCTAssertNil(first, "nobody holds it: it went, and its observation with it")
        XCTAssertNotNil(node.foundationProgress as? FollowingProgress)
    }

    func test_descriptions_and_metadata_are_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 2_000_000)
        node.kind = .file
        node.fileOperationKind = .downloading
        node.fileURL = URL(fileURLWithPath: "/tmp/photo.jpg")
        node.completedUnitCount = 500_000
        let progress = node.foundationProgress
        XCTAssertEqual(progress.localizedDescription, "Downloading “photo.jpg”…")
        XCTAssertEqual(progress.localizedAdditionalDescription, "500 KB of 2 MB")
        XCTAssertEqual(progress.kind, .file)
        XCTAssertEqual(progress.userInfo[.fileOperationKindKey] as? Progress.FileOperationKind, .downloading)
        progress.setUserInfoObject(NSNumber(value: 1_000), forKey: .throughputKey)
        XCTAssertEqual(node.throughput, 1_000)
    }

    func test_cancel_pause_and_resume_on_it_reach_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let below = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 5)
        let progress = node.foundationProgress
        progress.pause()
        XCTAssertTrue(node.isPaused)
        XCTAssertTrue(below.isPaused)
        progress.resume()
        XCTAssertFalse(node.isPaused)
        progress.cancel()
        XCTAssertTrue(node.isCancelled)
        XCTAssertTrue(below.isCancelled)
    }

    func test_the_node_cancelled_by_an_ancestor_cancels_the_progress_and_runs_its_handler() {
        let root = ProgressNode(totalUnitCount: 1)
        let node = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let progress = node.foundationProgress
        let handlerRan = expectation(description: "the handler the API set")
        progress.cancellationHandler = { handlerRan.fulfill() }
        root.cancel()
        wait(for: [handlerRan], timeout: 10)
        XCTAssertTrue(progress.isCancelled)
    }

    func test_writes_to_its_counts_update_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let progress = node.foundationProgress
        progress.totalUnitCount = 20
        progress.completedUnitCount = 5
        XCTAssertEqual(node.completedUnitCount, 5)
        XCTAssertEqual(node.fractionCompleted, 0.25)
    }

    func test_a_foundation_child_added_to_it_is_adopted_by_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = Progress.discreteProgress(totalUnitCount: 2)
        node.foundationProgress.addChild(child, withPendingUnitCount: 10)
        child.completedUnitCount = 1
        ProgressSampler.shared.sampleNow()
        XCTAssertEqual(node.fractionCompleted, 0.5)
        child.completedUnitCount = 2
        ProgressSampler.shared.sampleNow()
        XCTAssertTrue(node.isFinished)
    }

    func test_a_progress_created_while_it_is_current_is_adopted_by_the_node() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let progress = node.foundationProgress
        progress.becomeCurrent(withPendingUnitCount: 4)
        let child = Progress(totalUnitCount: 1)
        child.completedUnitCount = 1
        progress.resignCurrent()
        XCTAssertEqual(node.completedUnitCount, 4)
        progress.becomeCurrent(withPendingUnitCount: 6)
        progress.resignCurrent()
        XCTAssertEqual(node.completedUnitCount, 10, "no child: credited when it resigned")
    }

    func test_a_progress_reporting_type_can_hand_out_its_node() {
        final class Export: NSObject, Foundation.ProgressReporting {
            let node = ProgressNode.discreteProgress(totalUnitCount: 3)
            var progress: Progress { node.foundationProgress }
        }
        let export = Export()
        let reporting: any Foundation.ProgressReporting = export
        export.node.advance()
        XCTAssertEqual(reporting.progress.completedUnitCount, 1)
        XCTAssertTrue(reporting.progress === export.progress)
    }
}
