#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
@testable import ProgressTree
import TestSupport
import XCTest

/// An error whose `description` is the reason a person reads.
struct ArchiveDown: Error, Equatable, CustomStringConvertible {
    var description: String { "the archive is not answering" }
}

/// A `LocalizedError`: its `errorDescription` wins over its `description`.
private struct DiskFull: LocalizedError, CustomStringConvertible {
    var errorDescription: String? { "the disk is full" }
    var description: String { "DiskFull(code: 28)" }
}

// BEGIN snippet: migrating-failure
/// Runs `download` as `progress`'s work: finished, cancelled or failed, never a failure shown as one of
/// the others.
func runDownload(_ progress: ProgressNode, _ download: () throws -> Void) {
    do {
        try download()
        progress.completedUnitCount = progress.totalUnitCount
    } catch is CancellationError {
        progress.cancel()
    } catch {
        progress.fail(error)  // Foundation: completedUnitCount = totalUnitCount, or cancel()
    }
}
// END snippet: migrating-failure

/// Single-threaded semantics of `fail(_:)` (Docs/Cancellation.md, "Failure").
final class FailureTests: XCTestCase {
    // MARK: The outcome

    func test_a_new_node_has_not_failed() {
        let node = ProgressNode(totalUnitCount: 10)
        XCTAssertFalse(node.isFailed)
        XCTAssertNil(node.failure)
        XCTAssertEqual(node.descendantOutcomes, ProgressNode.DescendantOutcomes())
    }

    func test_fail_makes_the_node_failed_with_the_error_and_keeps_its_counts() {
        let node = ProgressNode(totalUnitCount: 10)
        node.completedUnitCount = 3
        node.fail(ArchiveDown())
        XCTAssertTrue(node.isFailed)
        XCTAssertEqual(node.failure as? ArchiveDown, ArchiveDown())
        XCTAssertFalse(node.isFinished)
        XCTAssertFalse(node.isCancelled)
        XCTAssertFalse(node.isPaused)
        XCTAssertEqual(node.completedUnitCount, 3)
        XCTAssertEqual(node.fractionCompleted, 0.3)
    }

    func test_fail_on_a_finished_or_cancelled_node_does_nothing() {
        let outcomes: [(String, (ProgressNode) -> Void, (ProgressNode) -> Bool)] = [
            ("finished", { $0.completedUnitCount = 2 }, \.isFinished), ("cancelled", { $0.cancel() }, \.isCancelled),
        ]
        for (outcome, reach, hasReached) in outcomes {
            let node = ProgressNode(totalUnitCount: 2)
            reach(node)
            node.fail(ArchiveDown())
            XCTAssertFalse(node.isFailed, outcome)
            XCTAssertNil(node.failure, outcome)
            XCTAssertTrue(hasReached(node), outcome)
        }
    }

    func test_fail_on_a_child_that_finished_into_its_parent_does_nothing_even_after_its_counts_drop() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 5)
        child.completedUnitCount = 4
        child.completedUnitCount = 1  // detached already: finishing was permanent for the parent
        child.fail(ArchiveDown())
        XCTAssertFalse(child.isFailed)
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.descendantOutcomes.failedCount, 0)
    }

    func test_a_failed_node_added_as_a_child_leaves_at_once_with_its_share_kept_and_counted_as_failed() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let child = ProgressNode.discreteProgress(totalUnitCount: 10)
        let grandchild = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 5)
        child.completedUnitCount = 5
        child.fail(ArchiveDown())
        XCTAssertTrue(grandchild.isCancelled)

        root.addChild(child, withPendingUnitCount: 2)
        XCTAssertEqual(root.children.count, 0)
        XCTAssertNil(child.parent)
        XCTAssertEqual(root.completedUnitCount, 0, "failure is not done work")
        XCTAssertEqual(root.fractionCompleted, 2 * 0.5 / 4, "its share at 5 of 10 stays")
        // Counted as failed; the grandchild its failure cancelled was cancelled before it was attached here.
        XCTAssertEqual(
            root.descendantOutcomes,
            ProgressNode.DescendantOutcomes(
                failedCount: 1, cancelledCount: 0, firstFailureDescription: "the archive is not answering"))
        child.completedUnitCount = 9
        XCTAssertEqual(root.fractionCompleted, 0.25, "a failed node's later changes do not move its ancestors")
    }

    func test_a_failed_node_with_completed_counts_added_as_a_child_is_never_credited() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode.discreteProgress(totalUnitCount: 4)
        child.fail(ArchiveDown())
        child.completedUnitCount = 4  // a failed node's counts may change; it never finishes
        root.addChild(child, withPendingUnitCount: 5)
        XCTAssertFalse(child.isFinished)
        XCTAssertEqual(root.completedUnitCount, 0, "failure is not done work")
        XCTAssertEqual(root.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(root.children.count, 0)
        XCTAssertEqual(root.fractionCompleted, 0.5, "its share as it was when it left: 5 × 4/4 of 10")
    }

    func test_a_second_fail_keeps_the_first_error() {
        let node = ProgressNode(totalUnitCount: 10)
        node.fail(Numbered(number: 1))
        node.fail(Numbered(number: 2))
        XCTAssertEqual((node.failure as? Numbered)?.number, 1)
        XCTAssertEqual(node.snapshot.failureDescription, "failure 1")
    }

    func test_a_failed_node_never_becomes_finished_or_cancelled_while_its_counts_still_change() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.cancellationHandler = log.handler("cancelled")
        node.completedUnitCount = 4
        node.fail(ArchiveDown())
        node.advance(by: 6)
        XCTAssertEqual(node.completedUnitCount, 10)
        XCTAssertEqual(node.fractionCompleted, 1)
        XCTAssertFalse(node.isFinished, "failed is final: full counts do not make it finished")
        node.cancel()
        XCTAssertFalse(node.isCancelled)
        XCTAssertEqual(log.all, [], "a failed node is not cancelled: its cancellation handler never runs")
        XCTAssertTrue(node.isFailed)
    }

    func test_a_failed_node_is_not_paused_and_cannot_be_paused() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.pausingHandler = log.handler("paused")
        node.resumingHandler = log.handler("resumed")
        node.pause()
        node.fail(ArchiveDown())
        XCTAssertFalse(node.isPaused, "failing leaves the pause")
        node.pause()
        node.resume()
        XCTAssertFalse(node.isPaused)
        XCTAssertEqual(log.all, ["paused"], "leaving the pause by failing is not a resume: no handler")
    }

    func test_checkCancellation_throws_on_a_failed_node() {
        let node = ProgressNode(totalUnitCount: 10)
        XCTAssertNoThrow(try node.checkCancellation())
        node.fail(ArchiveDown())
        XCTAssertThrowsError(try node.checkCancellation()) { XCTAssertTrue($0 is CancellationError) }
    }

    func test_checkpoint_throws_on_a_failed_node() async {
        let node = ProgressNode(totalUnitCount: 10)
        node.fail(ArchiveDown())
        let result = await Task { try await node.checkpoint() }.result
        XCTAssertTrue(result.isCancellationError)
    }

    func test_a_checkpoint_waiting_while_paused_throws_when_the_node_fails() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        node.pause()
        let task = Task { try await node.checkpoint() }
        try await waitUntil { node.pauseWaiterCount == 1 }
        node.fail(ArchiveDown())
        let result = await task.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual(node.pauseWaiterCount, 0)
    }

    func test_failing_cancels_the_task_linked_to_the_node() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let task = node.task { await yieldUntilCancelled() }
        try await waitUntil { node.linkedTaskCount == 1 }
        node.fail(ArchiveDown())
        let stoppedByCancellation = try await task.value
        XCTAssertTrue(stoppedByCancellation)
        XCTAssertTrue(node.isFailed, "the task's cancellation does not turn the failure into a cancellation")
        XCTAssertFalse(node.isCancelled)
    }

    func test_a_task_linked_to_a_failed_node_starts_cancelled() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        node.fail(ArchiveDown())
        let startedCancelled = try await node.withCancellationLink { Task.isCancelled }
        XCTAssertTrue(startedCancelled)
        let task = node.task { Task.isCancelled }
        let taskStartedCancelled = try await task.value
        XCTAssertTrue(taskStartedCancelled)
        XCTAssertEqual(node.linkedTaskCount, 0)
    }

    // MARK: Down: the descendants are cancelled

    func test_failing_cancels_the_unfinished_descendants_parent_before_children() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        let a = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 5)
        let b = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 5)
        let b1 = ProgressNode(totalUnitCount: 1, parent: b, pendingUnitCount: 1)
        node.cancellationHandler = log.handler("node")
        a.cancellationHandler = log.handler("a")
        b.cancellationHandler = log.handler("b")
        b1.cancellationHandler = log.handler("b1")

        node.fail(ArchiveDown())

        XCTAssertEqual(log.all, ["a", "b", "b1"])
        for child in [a, b, b1] {
            XCTAssertTrue(child.isCancelled)
            XCTAssertFalse(child.isFailed, "the descendants are cancelled, not failed")
        }
        XCTAssertEqual(
            node.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 3, cancelledByFailureCount: 3))
        XCTAssertEqual(
            b.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 1, cancelledByFailureCount: 1))
    }

    /// What a person would call cancelled is work somebody cancelled: the nodes a failure cancelled below
    /// the failed node (a photo's download) are counted apart, in `cancelledByFailureCount`, also those
    /// attached below them later; `cancelledCount` keeps counting every cancelled node.
    func test_nodes_cancelled_by_a_failure_are_counted_apart_from_nodes_cancelled_on_purpose() {
        let album = ProgressNode(totalUnitCount: 2)
        // A photo of the album: 10 units, 9 of them its download's.
        func photoWithDownload() -> (photo: ProgressNode, download: ProgressNode) {
            let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
            return (photo, ProgressNode(totalUnitCount: 10, parent: photo, pendingUnitCount: 9))
        }
        let (failing, failingDownload) = photoWithDownload()
        let (cancelled, cancelledDownload) = photoWithDownload()
        failing.fail(ArchiveDown())
        let late = ProgressNode(totalUnitCount: 1, parent: failingDownload, pendingUnitCount: 1)
        cancelled.cancel()
        XCTAssertTrue(late.isCancelled && cancelledDownload.isCancelled)
        XCTAssertEqual(
            album.descendantOutcomes,
            ProgressNode.DescendantOutcomes(
                failedCount: 1, cancelledCount: 3, cancelledByFailureCount: 1,
                firstFailureDescription: "the archive is not answering"))
        XCTAssertEqual(
            failing.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 2, cancelledByFailureCount: 2))
        XCTAssertEqual(
            failingDownload.descendantOutcomes,
            ProgressNode.DescendantOutcomes(cancelledCount: 1, cancelledByFailureCount: 1))
        XCTAssertEqual(cancelled.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 1))
    }

    func test_failing_cancels_the_tasks_linked_to_the_descendants() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 10)
        let task = child.task { await yieldUntilCancelled() }
        try await waitUntil { child.linkedTaskCount == 1 }
        node.fail(ArchiveDown())
        let stoppedByCancellation = try await task.value
        XCTAssertTrue(stoppedByCancellation)
        XCTAssertTrue(child.isCancelled)
    }

    func test_a_child_attached_to_a_failed_node_is_cancelled_and_counted_by_it_only() {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        node.fail(ArchiveDown())
        let late = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1)
        let adopted = ProgressNode.discreteProgress(totalUnitCount: 1)
        node.addChild(adopted, withPendingUnitCount: 1)
        XCTAssertTrue(late.isCancelled)
        XCTAssertTrue(adopted.isCancelled)
        XCTAssertEqual(node.descendantOutcomes.cancelledCount, 2)
        XCTAssertEqual(node.descendantOutcomes.cancelledByFailureCount, 2)
        XCTAssertEqual(
            root.descendantOutcomes,
            ProgressNode.DescendantOutcomes(failedCount: 1, firstFailureDescription: "the archive is not answering"),
            "a failed node is detached: what happens below it later does not reach its ancestors")
    }

    func test_failing_does_not_flow_up() {
        let root = ProgressNode(totalUnitCount: 10)
        let sibling = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        node.fail(ArchiveDown())
        XCTAssertFalse(root.isFailed)
        XCTAssertFalse(root.isCancelled)
        XCTAssertFalse(sibling.isFailed)
        XCTAssertFalse(sibling.isCancelled)
    }

    // MARK: Up: the share stays, never credited

    func test_a_failed_childs_share_stays_at_its_fraction_at_failure_and_is_never_credited() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 4)
        let sibling = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 6)
        child.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.2)

        child.fail(ArchiveDown())
        XCTAssertEqual(parent.fractionCompleted, 0.2, "the share stays at 4 × 50%")
        XCTAssertEqual(parent.completedUnitCount, 0)

        child.completedUnitCount = 100
        XCTAssertEqual(child.fractionCompleted, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.2, "later changes to a failed child do not move its parent")
        XCTAssertEqual(parent.completedUnitCount, 0, "failure is never counted as done work")

        sibling.advance()
        XCTAssertEqual(parent.completedUnitCount, 6)
        XCTAssertEqual(parent.fractionCompleted, 0.8)
        XCTAssertFalse(parent.isFinished, "a parent with a failed child does not finish on its own")
        XCTAssertEqual(parent.children.count, 0, "the failed child is released like a finished one")
    }

    func test_the_share_of_a_failed_grandchild_reaches_the_root_at_its_fraction_at_failure() {
        let root = ProgressNode(totalUnitCount: 2)
        let album = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 4, parent: album, pendingUnitCount: 10)
        photo.completedUnitCount = 1
        XCTAssertEqual(root.fractionCompleted, 0.25)
        photo.fail(ArchiveDown())
        photo.completedUnitCount = 3
        XCTAssertEqual(album.fractionCompleted, 0.25)
        XCTAssertEqual(root.fractionCompleted, 0.25)
        XCTAssertEqual(album.completedUnitCount, 0)
        XCTAssertEqual(root.completedUnitCount, 0)
    }

    func test_an_indeterminate_child_fails_with_no_share() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: -1, parent: parent, pendingUnitCount: 10)
        child.fail(ArchiveDown())
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertEqual(parent.completedUnitCount, 0)
    }

    func test_a_failed_child_is_released_by_its_parent() {
        let parent = ProgressNode(totalUnitCount: 10)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 10)
            weakChild = child
            child.fail(ArchiveDown())
        }
        XCTAssertNil(weakChild, "the parent keeps the counts and the description, not the failed node")
        XCTAssertEqual(parent.descendantOutcomes.failedCount, 1)
    }

    /// For writers of the wire format, a parent keeps the line of each of its last 64 failed children as
    /// it left (`failedChildren`), not the children themselves.
    func test_a_parent_keeps_the_line_of_its_last_64_failed_children_not_the_children() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 70)
        weak var lastChild: ProgressNode?
        for index in 0..<70 {
            let child = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
            child.localizedDescription = "child \(index)"
            child.completedUnitCount = 5
            child.fail(Numbered(number: index))
            lastChild = child
        }
        XCTAssertNil(lastChild, "released as it failed")
        let (children, next) = parent.failedChildren(since: 0)
        XCTAssertEqual(next, 70)
        XCTAssertEqual(children.map(\.record.label), (6..<70).map { "child \($0)" })
        XCTAssertEqual(Set(children.map(\.record.state)), [.failed])
        XCTAssertEqual(children.last?.record.failureReason, "failure 69")
        XCTAssertEqual(children.last?.record.pendingUnitCount, 1)
        XCTAssertEqual(children.last?.record.fractionCompleted, 0.5)
        XCTAssertEqual(parent.failedChildren(since: 68).children.map(\.record.label), ["child 68", "child 69"])
        XCTAssertEqual(parent.failedChildren(since: 70).children.count, 0)
        XCTAssertEqual(ProgressNode.discreteProgress(totalUnitCount: 1).failedChildren(since: 0).next, 0)
    }

    /// With a failed child, its parent keeps the lines of the nodes below it as its failure left them, in
    /// tree order: the failed children it had kept (with what was below those) before its cancelled
    /// children, each with the index of its parent.
    func test_a_failed_child_keeps_the_lines_of_the_nodes_below_it_as_its_failure_left_them() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let photo = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        let download = makeNamedNode("download", total: 100, parent: photo, pending: 9)
        makeNamedNode("chunk", total: 1, parent: download)
        let thumbnail = makeNamedNode("thumbnail", total: 10, parent: photo)
        makeNamedNode("resize", total: 10, parent: thumbnail)
        thumbnail.fail(Numbered(number: 1))
        download.completedUnitCount = 50
        photo.fail(Numbered(number: 2))
        let child = try XCTUnwrap(parent.failedChildren(since: 0).children.first)
        XCTAssertEqual(child.record.cancelledBelow, 3, "resize, by the thumbnail's failure; download and chunk")
        XCTAssertEqual(child.descendants.map(\.record.label), ["thumbnail", "resize", "download", "chunk"])
        XCTAssertEqual(child.descendants.map(\.record.state), [.failed, .cancelled, .cancelled, .cancelled])
        XCTAssertEqual(child.descendants.map(\.parentIndex), [-1, 0, -1, 2])
        XCTAssertEqual(child.descendants.first?.record.failureReason, "failure 1")
        XCTAssertEqual(child.descendants.dropFirst(2).first?.record.completedUnitCount, 50)
    }

    /// The lines kept below one failed child are bounded: the first 64 nodes, in tree order.
    func test_a_failed_child_keeps_the_lines_of_at_most_64_nodes_below_it() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let photo = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 1)
        for index in 0..<40 {
            makeNamedNode("piece \(index)", total: 1, parent: makeNamedNode("part \(index)", total: 1, parent: photo))
        }
        photo.fail(Numbered(number: 1))
        let child = try XCTUnwrap(parent.failedChildren(since: 0).children.first)
        XCTAssertEqual(child.record.cancelledBelow, 80)
        XCTAssertEqual(child.descendants.count, 64)
        XCTAssertEqual(
            child.descendants.map(\.record.label), (0..<32).flatMap { ["part \($0)", "piece \($0)"] })
    }

    // MARK: What each ancestor knows

    func test_every_ancestor_counts_the_failed_and_cancelled_descendants() {
        let root = ProgressNode(totalUnitCount: 10)
        let mid = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let failing = ProgressNode(totalUnitCount: 10, parent: mid, pendingUnitCount: 5)
        let below = ProgressNode(totalUnitCount: 10, parent: failing, pendingUnitCount: 10)
        let other = ProgressNode(totalUnitCount: 10, parent: mid, pendingUnitCount: 5)
        let otherChild = ProgressNode(totalUnitCount: 10, parent: other, pendingUnitCount: 10)

        failing.fail(ArchiveDown())
        let afterFailure = ProgressNode.DescendantOutcomes(
            failedCount: 1, cancelledCount: 1, cancelledByFailureCount: 1,
            firstFailureDescription: "the archive is not answering")
        XCTAssertEqual(root.descendantOutcomes, afterFailure)
        XCTAssertEqual(mid.descendantOutcomes, afterFailure)
        XCTAssertEqual(
            failing.descendantOutcomes, ProgressNode.DescendantOutcomes(cancelledCount: 1, cancelledByFailureCount: 1))
        XCTAssertTrue(below.isCancelled)

        other.cancel()
        XCTAssertEqual(other.descendantOutcomes.cancelledCount, 1)
        XCTAssertEqual(mid.descendantOutcomes.cancelledCount, 3)
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 3)
        XCTAssertTrue(otherChild.isCancelled)

        root.cancel()  // only mid is left to cancel below root
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 4)
        XCTAssertEqual(root.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(mid.descendantOutcomes.cancelledCount, 3, "a node does not count itself")
    }

    func test_cancelling_a_tree_counts_each_node_in_each_of_its_ancestors() {
        let root = ProgressNode(totalUnitCount: 3)
        let children = (0..<3).map { _ in ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1) }
        for child in children {
            _ = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 1)
            _ = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 1)
        }
        withExtendedLifetime(children) {
            root.cancel()
            XCTAssertEqual(root.descendantOutcomes.cancelledCount, 9)
            XCTAssertEqual(children.map(\.descendantOutcomes.cancelledCount), [2, 2, 2])
            root.cancel()
            XCTAssertEqual(root.descendantOutcomes.cancelledCount, 9, "each node is counted once")
        }
    }

    func test_the_first_failures_description_is_kept_and_every_failure_counted() {
        let root = ProgressNode(totalUnitCount: 12)
        let photos = (0..<12).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        photos[3].fail(Numbered(number: 3))
        photos[7].fail(Numbered(number: 7))
        for (index, photo) in photos.enumerated() where index != 3 && index != 7 { photo.advance(by: 10) }
        XCTAssertEqual(
            root.descendantOutcomes,
            ProgressNode.DescendantOutcomes(failedCount: 2, cancelledCount: 0, firstFailureDescription: "failure 3"))
        XCTAssertEqual(root.completedUnitCount, 10)
        XCTAssertEqual(root.fractionCompleted, 10.0 / 12.0)
        XCTAssertFalse(root.isFinished)
    }

    // MARK: Snapshots, observers, descriptions

    func test_the_snapshot_carries_the_failure_and_is_final() {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        node.completedUnitCount = 3
        node.fail(ArchiveDown())
        let snapshot = node.snapshot
        XCTAssertTrue(snapshot.isFailed)
        XCTAssertEqual(snapshot.failureDescription, "the archive is not answering")
        XCTAssertFalse(snapshot.isFinished)
        XCTAssertFalse(snapshot.isCancelled)
        XCTAssertTrue(snapshot.isFinal)
        XCTAssertEqual(snapshot.fractionCompleted, 0.3)
        let rootSnapshot = root.snapshot
        XCTAssertFalse(rootSnapshot.isFailed)
        XCTAssertNil(rootSnapshot.failureDescription)
        XCTAssertFalse(rootSnapshot.isFinal)
        XCTAssertEqual(
            rootSnapshot.descendantOutcomes,
            ProgressNode.DescendantOutcomes(failedCount: 1, firstFailureDescription: "the archive is not answering"))
    }

    func test_the_snapshots_sequence_ends_with_the_failed_snapshot() async {
        let node = ProgressNode(totalUnitCount: 10)
        node.completedUnitCount = 2
        var received: [ProgressNode.Snapshot] = []
        for await snapshot in node.snapshots {
            received.append(snapshot)
            if received.count == 1 { node.fail(ArchiveDown()) }
        }
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(received.last?.isFailed, true)
        XCTAssertEqual(received.last?.failureDescription, "the archive is not answering")
        XCTAssertEqual(received.last?.fractionCompleted, 0.2)
    }

    func test_observers_get_the_failure_as_the_last_value() {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let queue = DispatchQueue(label: "failure observer")
        let seen = ControlBox<[Bool]>([])
        let outcomes = ControlBox<[Int]>([])
        let failedDelivered = expectation(description: "failed delivered")
        let countDelivered = expectation(description: "count delivered")
        let observation = node.observe(\.isFailed, on: queue) { _, change in
            seen.update { $0.append(change.newValue) }
            if change.newValue { failedDelivered.fulfill() }
        }
        let rootObservation = root.observe(\.descendantOutcomes, on: queue) { _, change in
            outcomes.update { $0.append(change.newValue.failedCount) }
            if change.newValue.failedCount == 1 { countDelivered.fulfill() }
        }
        node.fail(ArchiveDown())
        wait(for: [failedDelivered, countDelivered], timeout: 10)
        queue.sync {}
        XCTAssertEqual(seen.value, [true])
        XCTAssertEqual(outcomes.value, [1])
        observation.invalidate()
        rootObservation.invalidate()
    }

    func test_the_description_says_the_failure() {
        let node = ProgressNode(totalUnitCount: 10)
        node.completedUnitCount = 3
        XCTAssertEqual(node.localizedDescription, "30% completed")
        node.fail(ArchiveDown())
        XCTAssertEqual(node.localizedDescription, "Failed: the archive is not answering")
    }

    func test_a_localized_errors_description_is_used() {
        let node = ProgressNode(totalUnitCount: 10)
        node.fail(DiskFull())
        XCTAssertEqual(node.localizedDescription, "Failed: the disk is full")
        XCTAssertEqual(node.snapshot.failureDescription, "the disk is full")
    }

    func test_a_description_set_by_the_user_stays_after_failure() {
        let node = ProgressNode(totalUnitCount: 10)
        node.localizedDescription = "Loading customers…"
        node.fail(ArchiveDown())
        XCTAssertEqual(node.localizedDescription, "Loading customers…")
    }

    func test_a_failed_file_node_has_no_estimates() {
        let node = ProgressNode(totalUnitCount: 1_000)
        node.kind = .file
        node.completedUnitCount = 400
        node.fail(ArchiveDown())
        XCTAssertNil(node.throughput)
        XCTAssertNil(node.estimatedTimeRemaining)
    }

    func test_the_tree_description_marks_the_failed_node() {
        let node = ProgressNode(totalUnitCount: 10)
        node.completedUnitCount = 5
        node.fail(ArchiveDown())
        XCTAssertEqual(node.description, "ProgressNode: 50.00% (5 of 10), failed: the archive is not answering")
    }

    // MARK: The guides

    func test_migration_guide_snippet_finishes_cancels_or_fails() {
        let album = ProgressNode(totalUnitCount: 3)
        let done = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        let stopped = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        let broken = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
        runDownload(done) {}
        runDownload(stopped) { throw CancellationError() }
        runDownload(broken) { throw ArchiveDown() }
        XCTAssertTrue(done.isFinished)
        XCTAssertTrue(stopped.isCancelled)
        XCTAssertEqual(broken.failure as? ArchiveDown, ArchiveDown())
        XCTAssertEqual(album.completedUnitCount, 1)
        XCTAssertEqual(
            album.descendantOutcomes,
            ProgressNode.DescendantOutcomes(
                failedCount: 1, cancelledCount: 1, firstFailureDescription: "the archive is not answering"))
    }

    /// The example at the top of Cancellation.md's "Failure".
    func test_cancellation_guide_failure_example() {
        let album = ProgressNode(totalUnitCount: 12)
        let photo = ProgressNode(totalUnitCount: 100, parent: album, pendingUnitCount: 1)
        photo.completedUnitCount = 40
        photo.fail(ArchiveDown())
        XCTAssertTrue(photo.isFailed)
        XCTAssertEqual(album.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(album.fractionCompleted, 0.4 / 12)
    }

}
