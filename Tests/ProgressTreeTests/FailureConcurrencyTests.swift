import Dispatch
@testable import ProgressTree
import TestSupport
import XCTest
import ProgressTreePlatform

/// `fail(_:)` racing with updates, cancellation, pausing and children finishing (Docs/Cancellation.md, "Failure"). Each race runs
/// many times; whichever side wins, the outcome is one of the allowed ones, with exact counts. Also run
/// under ThreadSanitizer.
final class FailureConcurrencyTests: XCTestCase {
    private let rounds = 150

    func test_fail_racing_with_addChild_of_the_same_node_leaves_it_out_of_the_tree_with_its_share_kept() {
        for round in 0..<2_000 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 4)
            let child = ProgressNode.discreteProgress(totalUnitCount: 10)
            child.completedUnitCount = 5
            let start = DispatchGroup()
            start.enter()
            let done = DispatchGroup()
            DispatchQueue.global().async(group: done) {
                start.wait()
                child.fail(ArchiveDown())
            }
            DispatchQueue.global().async(group: done) {
                start.wait()
                root.addChild(child, withPendingUnitCount: 2)
            }
            start.leave()
            done.wait()
            XCTAssertTrue(child.isFailed)
            XCTAssertEqual(root.children.count, 0, "round \(round): the failed child stays in the tree")
            XCTAssertEqual(root.completedUnitCount, 0, "round \(round)")
            XCTAssertEqual(root.fractionCompleted, 0.25, "round \(round): its share at failure")
            XCTAssertEqual(root.descendantOutcomes.failedCount, 1, "round \(round)")
            child.completedUnitCount = 9
            XCTAssertEqual(root.fractionCompleted, 0.25, "round \(round): later changes move the root")
        }
    }

    func test_fail_racing_with_the_last_updates_either_fails_or_finishes_never_both() {
        var failures = 0
        for _ in 0..<rounds {
            let parent = ProgressNode(totalUnitCount: 10)
            // Enough updates that the failure usually lands among them, whatever order the threads start in.
            let child = ProgressNode(totalUnitCount: 4_000, parent: parent, pendingUnitCount: 10)
            DispatchQueue.concurrentPerform(iterations: 3) { index in
                if index == 0 {
                    child.fail(ArchiveDown())
                } else {
                    for _ in 0..<2_000 { child.advance() }
                }
            }
            XCTAssertEqual(child.completedUnitCount, 4_000, "no update is lost")
            XCTAssertNotEqual(child.isFailed, child.isFinished, "exactly one final outcome")
            XCTAssertTrue(parent.children.isEmpty)
            if child.isFailed {
                failures += 1
                XCTAssertEqual(parent.completedUnitCount, 0, "a failed child is never credited")
                XCTAssertLessThan(parent.fractionCompleted, 1, "its share stays where it was when it failed")
                XCTAssertFalse(parent.isFinished)
                XCTAssertEqual(parent.descendantOutcomes.failedCount, 1)
            } else {
                XCTAssertEqual(parent.completedUnitCount, 10)
                XCTAssertTrue(parent.isFinished)
                XCTAssertEqual(parent.descendantOutcomes, ProgressNode.DescendantOutcomes())
            }
        }
        XCTAssertGreaterThan(failures, 0, "the failure won at least one race")
    }

    func test_fail_racing_with_a_cancel_of_an_ancestor_counts_every_node_once() {
        for _ in 0..<rounds {
            let root = ProgressNode(totalUnitCount: 10)
            let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
            let calls = CallCounter()
            let nodeCalls = CallCounter()
            node.cancellationHandler = nodeCalls.increment
            let leaves = (0..<4).map { _ in
                let leaf = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 1)
                leaf.cancellationHandler = calls.increment
                return leaf
            }
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 { node.fail(ArchiveDown()) } else { root.cancel() }
            }
            XCTAssertEqual(calls.value, 4, "each leaf's handler ran once")
            XCTAssertEqual(leaves.filter(\.isCancelled).count, 4)
            XCTAssertEqual(leaves.filter(\.isFailed).count, 0)
            XCTAssertNotEqual(node.isFailed, node.isCancelled, "exactly one final outcome")
            XCTAssertEqual(
                node.descendantOutcomes,
                ProgressNode.DescendantOutcomes(cancelledCount: 4, cancelledByFailureCount: node.isFailed ? 4 : 0))
            if node.isFailed {
                XCTAssertEqual(nodeCalls.value, 0)
                XCTAssertEqual(
                    root.descendantOutcomes,
                    ProgressNode.DescendantOutcomes(
                        failedCount: 1, cancelledCount: 4, cancelledByFailureCount: 4,
                        firstFailureDescription: "the archive is not answering"))
            } else {
                XCTAssertEqual(nodeCalls.value, 1)
                XCTAssertEqual(root.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 5))
            }
        }
    }

    func test_fail_racing_with_pause_and_resume_leaves_the_node_failed_and_never_paused() {
        for _ in 0..<rounds {
            let root = ProgressNode(totalUnitCount: 10)
            let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
            let child = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 10)
            DispatchQueue.concurrentPerform(iterations: 3) { index in
                switch index {
                case 0: node.fail(ArchiveDown())
                case 1: for _ in 0..<20 { node.pause(); node.resume() }
                default: for _ in 0..<20 { root.pause(); root.resume() }
                }
            }
            XCTAssertTrue(node.isFailed)
            XCTAssertFalse(node.isPaused, "a failed node is never paused")
            XCTAssertEqual(node.pauseWaiterCount, 0)
            XCTAssertTrue(child.isCancelled)
            XCTAssertFalse(root.isPaused)
            XCTAssertEqual(root.descendantOutcomes.failedCount, 1)
            XCTAssertEqual(root.descendantOutcomes.cancelledCount, 1)
        }
    }

    func test_fail_racing_with_children_finishing_never_credits_the_failed_node_to_its_parent() {
        var failures = 0
        for _ in 0..<rounds {
            let root = ProgressNode(totalUnitCount: 10)
            let node = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 10)
            let children = (0..<4).map { _ in ProgressNode(totalUnitCount: 500, parent: node, pendingUnitCount: 1) }
            DispatchQueue.concurrentPerform(iterations: 5) { index in
                if index == 0 {
                    node.fail(ArchiveDown())
                } else {
                    for _ in 0..<500 { children[index - 1].advance() }
                }
            }
            XCTAssertEqual(node.completedUnitCount, 4, "every child reached its total and credited the node")
            XCTAssertNotEqual(node.isFailed, node.isFinished, "exactly one final outcome")
            let cancelled = children.filter(\.isCancelled).count
            if node.isFailed {
                failures += 1
                XCTAssertEqual(root.completedUnitCount, 0)
                XCTAssertLessThan(root.fractionCompleted, 1)
                XCTAssertFalse(root.isFinished)
                XCTAssertEqual(node.descendantOutcomes.cancelledCount, cancelled)
                XCTAssertEqual(
                    root.descendantOutcomes,
                    ProgressNode.DescendantOutcomes(
                        failedCount: 1, cancelledCount: cancelled, cancelledByFailureCount: cancelled,
                        firstFailureDescription: "the archive is not answering"))
            } else {
                XCTAssertEqual(cancelled, 0)
                XCTAssertEqual(root.completedUnitCount, 10)
                XCTAssertEqual(root.descendantOutcomes, ProgressNode.DescendantOutcomes())
            }
        }
        XCTAssertGreaterThan(failures, 0, "the failure won at least one race")
    }

    func test_siblings_failing_at_once_are_each_counted_once_with_their_shares() {
        for _ in 0..<rounds {
            let root = ProgressNode(totalUnitCount: 16)
            let children = (0..<16).map { index in
                let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
                child.completedUnitCount = Int64(index % 4)
                return child
            }
            let reads = Lock<[Double]>([])
            DispatchQueue.concurrentPerform(iterations: 17) { index in
                if index < 16 {
                    children[index].fail(ArchiveDown())
                } else {
                    for _ in 0..<20 {
                        let fraction = root.fractionCompleted
                        reads.withLock { $0.append(fraction) }
                    }
                }
            }
            XCTAssertEqual(root.descendantOutcomes.failedCount, 16)
            XCTAssertEqual(root.descendantOutcomes.firstFailureDescription, "the archive is not answering")
            XCTAssertEqual(root.fractionCompleted, 0.375, "Σ (0, ¼, ½, ¾) × 4 over 16: each share once")
            XCTAssertEqual(root.completedUnitCount, 0)
            XCTAssertTrue(root.children.isEmpty)
            XCTAssertTrue(
                reads.withLock { $0 }.allSatisfy { $0 == 0.375 },
                "a reader sees each share as the child's contribution or as its frozen share, never twice or never")
        }
    }
}
