import Foundation
import ProgressTree
@testable import ProgressTreeFoundation
import XCTest

/// `addChild(_: Progress, withPendingUnitCount:)`: a Foundation Progress as a weighted child, mirrored.
/// Each test drives the sampler by hand (`sampleNow()`: one tick on its queue, after the test's writes).
final class AdoptionTests: XCTestCase {
    private let sampler = ProgressSampler.shared

    func test_adopting_counts_a_half_done_progress_at_once() {
        let root = ProgressNode(totalUnitCount: 10)
        let progress = Progress.discreteProgress(totalUnitCount: 200)
        progress.completedUnitCount = 100
        let node = root.addChild(progress, withPendingUnitCount: 4)
        XCTAssertEqual(node.completedUnitCount, 100)
        XCTAssertEqual(node.totalUnitCount, 200)
        XCTAssertEqual(root.fractionCompleted, 0.2)  // 4 × 0.5 of 10
        XCTAssertEqual(root.children.map { $0 === node }, [true])
    }

    func test_a_sample_carries_new_counts_and_finishing_credits_the_parent_and_lets_the_progress_go() {
        let root = ProgressNode(totalUnitCount: 10)
        weak var released: Progress?
        do {
            let progress = Progress.discreteProgress(totalUnitCount: 4)
            released = progress
            let node = root.addChild(progress, withPendingUnitCount: 5)
            progress.completedUnitCount = 1
            sampler.sampleNow()
            XCTAssertEqual(node.completedUnitCount, 1)
            XCTAssertEqual(root.fractionCompleted, 0.125)  // 5 × 0.25 of 10
            progress.completedUnitCount = 4
            sampler.sampleNow()
            XCTAssertTrue(node.isFinished)
        }
        XCTAssertEqual(root.completedUnitCount, 5)
        XCTAssertEqual(root.children.count, 0)
        XCTAssertNil(released, "the mirror ended and let the Progress go")
    }

    func test_indeterminate_progress_is_mirrored_and_adds_nothing_until_its_total_is_known() {
        let root = ProgressNode(totalUnitCount: 10)
        let progress = Progress.discreteProgress(totalUnitCount: -1)
        progress.completedUnitCount = 300
        let node = root.addChild(progress, withPendingUnitCount: 10)
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertEqual(node.completedUnitCount, 300)
        XCTAssertEqual(root.fractionCompleted, 0)
        progress.totalUnitCount = 600
        sampler.sampleNow()
        XCTAssertFalse(node.isIndeterminate)
        XCTAssertEqual(root.fractionCompleted, 0.5)
        progress.completedUnitCount = 600
        sampler.sampleNow()
    }

    func test_partial_work_of_the_progress_children_shows_in_the_fraction_not_in_the_counts() {
        let root = ProgressNode(totalUnitCount: 2)
        let progress = Progress.discreteProgress(totalUnitCount: 4)
        let foundationChild = Progress(totalUnitCount: 10, parent: progress, pendingUnitCount: 2)
        foundationChild.completedUnitCount = 5  // 2 × 0.5 = 1 unit of 4
        progress.completedUnitCount = 1
        let node = root.addChild(progress, withPendingUnitCount: 2)
        XCTAssertEqual(progress.fractionCompleted, 0.5)
        XCTAssertEqual(node.completedUnitCount, 1)
        XCTAssertEqual(node.fractionCompleted, 0.5, "its own unit and half of its child's two")
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertEqual(node.children.map(\.localizedDescription), ["Subtasks"])
        foundationChild.completedUnitCount = 10  // finished: Foundation credits 2 units to `progress`
        sampler.sampleNow()
        XCTAssertEqual(node.completedUnitCount, 3)
        XCTAssertEqual(node.fractionCompleted, 0.75)
        progress.completedUnitCount = 4
        sampler.sampleNow()
        XCTAssertEqual(root.completedUnitCount, 2)
        XCTAssertTrue(root.isFinished)
    }

    func test_cancelling_an_ancestor_cancels_the_progress_before_cancel_returns_and_runs_its_handler() {
        let root = ProgressNode(totalUnitCount: 1)
        let parent = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 100)
        let handlerRan = expectation(description: "the Progress's cancellation handler")
        progress.cancellationHandler = { handlerRan.fulfill() }  // as URLSessionTask sets, to cancel the task
        let node = parent.addChild(progress, withPendingUnitCount: 1)
        root.cancel()
        XCTAssertTrue(progress.isCancelled)
        XCTAssertTrue(node.isCancelled)
        wait(for: [handlerRan], timeout: 10)
        sampler.sampleNow()
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress), "the mirror ended")
    }

    func test_adopting_into_a_cancelled_node_cancels_the_progress() {
        let root = ProgressNode(totalUnitCount: 1)
        root.cancel()
        let progress = Progress.discreteProgress(totalUnitCount: 100)
        let node = root.addChild(progress, withPendingUnitCount: 1)
        XCTAssertTrue(node.isCancelled)
        XCTAssertTrue(progress.isCancelled)
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
    }

    func test_pausing_and_resuming_an_ancestor_reach_the_progress() {
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 100)
        let node = root.addChild(progress, withPendingUnitCount: 1)
        root.pause()
        XCTAssertTrue(progress.isPaused)
        XCTAssertTrue(node.isPaused)
        root.resume()
        XCTAssertFalse(progress.isPaused)
        XCTAssertFalse(node.isPaused)
        sampler.sampleNow()
        XCTAssertFalse(node.isPaused, "the sample of a resumed Progress changes nothing")
        progress.completedUnitCount = 100
        sampler.sampleNow()
    }

    func test_a_progress_cancelled_by_its_owner_cancels_the_node_and_ends_the_mirror() {
        let root = ProgressNode(totalUnitCount: 2)
        let sibling = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        weak var released: Progress?
        var node: ProgressNode?
        do {
            let progress = Progress.discreteProgress(totalUnitCount: 100)
            released = progress
            node = root.addChild(progress, withPendingUnitCount: 1)
            progress.completedUnitCount = 30
            progress.cancel()
            sampler.sampleNow()
        }
        XCTAssertEqual(node?.isCancelled, true)
        XCTAssertEqual(node?.completedUnitCount, 30, "the work done is kept")
        XCTAssertFalse(sibling.isCancelled, "cancellation flows down, never up")
        XCTAssertFalse(root.isCancelled)
        XCTAssertNil(released)
    }

    func test_a_progress_paused_by_its_owner_pauses_the_node_and_resumes_it() {
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 100)
        let node = root.addChild(progress, withPendingUnitCount: 1)
        progress.pause()
        sampler.sampleNow()
        XCTAssertTrue(node.isPaused)
        XCTAssertFalse(root.isPaused)
        progress.resume()
        sampler.sampleNow()
        XCTAssertFalse(node.isPaused)
        progress.completedUnitCount = 100
        sampler.sampleNow()
    }

    func test_kind_and_file_metadata_are_carried_when_the_counts_move() throws {
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 2_000_000)
        progress.kind = .file
        progress.setUserInfoObject(Progress.FileOperationKind.downloading, forKey: .fileOperationKindKey)
        progress.setUserInfoObject(URL(fileURLWithPath: "/tmp/photo.jpg"), forKey: .fileURLKey)
        let node = root.addChild(progress, withPendingUnitCount: 1)
        XCTAssertEqual(node.kind, .file)
        XCTAssertEqual(node.fileOperationKind, .downloading)
        XCTAssertEqual(node.fileURL?.lastPathComponent, "photo.jpg")
        XCTAssertEqual(node.localizedDescription, "Downloading “photo.jpg”…")

        progress.setUserInfoObject(NSNumber(value: 250_000), forKey: .throughputKey)
        progress.setUserInfoObject(6.0, forKey: .estimatedTimeRemainingKey)
        sampler.sampleNow()
        XCTAssertNil(node.userInfo[.throughputKey], "not read while the counts stand still")
        progress.completedUnitCount = 500_000
        sampler.sampleNow()
        XCTAssertEqual(node.throughput, 250_000)
        XCTAssertEqual(node.estimatedTimeRemaining, 6)
        XCTAssertEqual(node.localizedAdditionalDescription, "500 KB of 2 MB (250 KB/s) — 6 seconds remaining")
        progress.completedUnitCount = 2_000_000
        sampler.sampleNow()
    }

    func test_a_mirror_node_that_fails_cancels_the_progress_and_ends() {
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 100)
        let node = root.addChild(progress, withPendingUnitCount: 1)
        node.fail(CocoaError(.fileReadUnknown))
        sampler.sampleNow()
        XCTAssertTrue(progress.isCancelled, "a failed node's work stops")
        XCTAssertTrue(node.isFailed)
        XCTAssertFalse(node.isCancelled)
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
    }

    func test_a_released_tree_ends_the_mirror() {
        weak var released: Progress?
        do {
            let progress = Progress.discreteProgress(totalUnitCount: 100)
            released = progress
            let root = ProgressNode(totalUnitCount: 1)
            root.addChild(progress, withPendingUnitCount: 1)
        }
        sampler.sampleNow()
        XCTAssertNil(released)
    }

    func test_an_already_finished_progress_is_credited_at_once_and_not_sampled() {
        let root = ProgressNode(totalUnitCount: 3)
        let progress = Progress.discreteProgress(totalUnitCount: 1)
        progress.completedUnitCount = 1
        root.addChild(progress, withPendingUnitCount: 2)
        XCTAssertEqual(root.completedUnitCount, 2)
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
    }

    func test_adopting_a_following_progress_adds_its_node() {
        let root = ProgressNode(totalUnitCount: 2)
        let job = ProgressNode.discreteProgress(totalUnitCount: 4)
        XCTAssertTrue(root.addChild(job.foundationProgress, withPendingUnitCount: 2) === job)
        job.advance()
        XCTAssertEqual(root.fractionCompleted, 0.25)
    }

    func test_the_timer_runs_only_while_something_is_adopted() {
        sampler.sampleNow()
        XCTAssertEqual(sampler.status.mirrors, 0, "the earlier tests' mirrors all ended")
        XCTAssertFalse(sampler.status.isTimerRunning)
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 2)
        root.addChild(progress, withPendingUnitCount: 1)
        XCTAssertEqual(sampler.status.mirrors, 1)
        XCTAssertTrue(sampler.status.isTimerRunning)
        progress.completedUnitCount = 2
        sampler.sampleNow()
        XCTAssertEqual(sampler.status.mirrors, 0)
        XCTAssertFalse(sampler.status.isTimerRunning)
    }

    func test_a_change_reaches_an_observer_of_the_root_through_the_timer_alone() {
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 4)
        root.addChild(progress, withPendingUnitCount: 1)
        let seen = expectation(description: "the observer sees 0.75")
        let observation = root.observe(\.fractionCompleted, on: DispatchQueue(label: "observer")) { _, change in
            if change.newValue == 0.75 { seen.fulfill() }
        }
        // The Progress is written on the sampler's queue, as an owner writes it on its own, so that the
        // timer's read is ordered after the write (a test must not race).
        sampler.queue.sync { progress.completedUnitCount = 3 }
        wait(for: [seen], timeout: 10)
        observation.invalidate()
        sampler.queue.sync { progress.completedUnitCount = 4 }
        sampler.sampleNow()
    }
}
