import Dispatch
import XCTest

@testable import ProgressTree

/// Edge cases of the model that the rest of the suite does not reach: floating-point precision of the
/// children's sum, re-weighting through extreme totals, pending counts of 0, Int64 extremes, nested implicit
/// scopes, pausing a child that then finishes, snapshots of odd nodes, and the last value of an observed
/// node released right after its last change.
final class EdgeCaseSemanticsTests: XCTestCase {
    // MARK: Fraction of a node with children (exact formula)

    /// SEMANTICS: fraction = clamp((completed + Σ pendingᵢ × fractionᵢ) / total). When every child is back
    /// at 0 and the parent's own count is 0, the sum is exactly 0.
    func test_contributions_return_exactly_to_zero_when_every_child_is_back_at_zero() {
        let parent = ProgressNode(totalUnitCount: 4)
        let a = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        let b = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0)
        a.completedUnitCount = 1
        _ = parent.fractionCompleted
        b.completedUnitCount = 2
        _ = parent.fractionCompleted
        a.completedUnitCount = 0
        _ = parent.fractionCompleted
        b.completedUnitCount = 0
        XCTAssertEqual(parent.fractionCompleted, 0, "(0 + 1×0 + 1×0 + 1×0 + 1×0) / 4")
    }

    /// A big sibling's contribution must not swallow a small sibling's: once the big child is
    /// indeterminate (contributes 0), the small child's 1 × 0.5 of 4 must show.
    func test_a_huge_sibling_going_indeterminate_does_not_erase_a_small_siblings_progress() {
        let parent = ProgressNode(totalUnitCount: 4)
        let huge = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: .max)
        let small = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        _ = parent.fractionCompleted
        huge.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 1, "overshoot is clamped")
        small.completedUnitCount = 1
        _ = parent.fractionCompleted
        huge.totalUnitCount = -1  // indeterminate: contributes 0
        XCTAssertEqual(parent.fractionCompleted, 0.125, "(0 + Int64.max×0 + 1×0.5 + 1×0) / 4")
    }

    /// Same, with the huge child going back to 0 of 2 instead of indeterminate.
    func test_a_huge_sibling_going_back_to_zero_does_not_erase_a_small_siblings_progress() {
        let parent = ProgressNode(totalUnitCount: 4)
        let huge = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1 << 60)
        let small = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        _ = parent.fractionCompleted
        huge.completedUnitCount = 1
        _ = parent.fractionCompleted
        small.completedUnitCount = 1
        _ = parent.fractionCompleted
        huge.completedUnitCount = 0
        XCTAssertEqual(parent.fractionCompleted, 0.125, "(0 + 2⁶⁰×0 + 1×0.5 + 1×0) / 4")
    }

    // MARK: Re-weighting

    /// A parent made indeterminate by its total reports 0, and gets its children's share back when its
    /// total is valid again.
    func test_parent_total_negative_then_positive_restores_the_childs_share() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 5)
        child.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        parent.totalUnitCount = -1
        XCTAssertTrue(parent.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0)
        parent.totalUnitCount = 20
        XCTAssertFalse(parent.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0.125)
    }

    /// Lowering an attached parent's total to its completed count finishes it: it is credited to the
    /// grandparent and detached, while its own unfinished child stays attached to it.
    func test_lowering_an_attached_parents_total_finishes_it_into_the_grandparent() {
        let grandparent = ProgressNode(totalUnitCount: 4)
        let parent = ProgressNode(totalUnitCount: 10, parent: grandparent, pendingUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 5)
        parent.completedUnitCount = 5
        child.completedUnitCount = 1
        XCTAssertEqual(grandparent.fractionCompleted, 0.375, "2 × (5 + 2.5)/10 of 4")
        parent.totalUnitCount = 5
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(grandparent.completedUnitCount, 2)
        XCTAssertEqual(grandparent.fractionCompleted, 0.5)
        XCTAssertTrue(grandparent.children.isEmpty)
        XCTAssertEqual(parent.children.count, 1)
        child.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 10)
        XCTAssertEqual(grandparent.completedUnitCount, 2, "finishing is permanent for the grandparent")
    }

    /// A finished root whose total is raised is no longer finished.
    func test_raising_a_finished_roots_total_unfinishes_it() {
        let root = ProgressNode(totalUnitCount: 10)
        root.completedUnitCount = 10
        XCTAssertTrue(root.isFinished)
        root.totalUnitCount = 20
        XCTAssertFalse(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 0.5)
    }

    // MARK: Explicit composition with a pending count of 0

    func test_addChild_with_pending_zero_counts_nothing_and_is_released_when_finished() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode.discreteProgress(totalUnitCount: 2)
        child.completedUnitCount = 1
        parent.addChild(child, withPendingUnitCount: 0)
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertEqual(parent.children.count, 1)
        child.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertTrue(parent.children.isEmpty)
    }

    func test_finished_child_with_pending_zero_leaves_a_zero_total_parent_indeterminate() {
        let parent = ProgressNode(totalUnitCount: 0)
        let child = ProgressNode.discreteProgress(totalUnitCount: 1)
        child.completedUnitCount = 1
        parent.addChild(child, withPendingUnitCount: 0)
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertTrue(parent.isIndeterminate)
        XCTAssertFalse(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 0)
    }

    // MARK: Negative advances and extremes

    func test_a_child_advanced_below_zero_contributes_zero_then_finishes_normally() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 5)
        child.advance(by: 5)
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        child.advance(by: -6)
        XCTAssertEqual(child.completedUnitCount, -1)
        XCTAssertTrue(child.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0, "an indeterminate child contributes 0")
        XCTAssertFalse(parent.isIndeterminate)
        child.advance(by: 11)
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_child_with_int64_max_pending_finishing_saturates_the_parent() {
        let parent = ProgressNode(totalUnitCount: .max)
        parent.completedUnitCount = .max - 1
        let child = ProgressNode(totalUnitCount: .max, parent: parent, pendingUnitCount: .max)
        child.completedUnitCount = .max - 1
        let fraction = parent.fractionCompleted
        XCTAssertTrue(fraction.isFinite && (0...1).contains(fraction))
        XCTAssertFalse(parent.isFinished)
        child.advance(by: .max)
        XCTAssertEqual(child.completedUnitCount, .max)
        XCTAssertEqual(parent.completedUnitCount, .max)
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 1)
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

    // MARK: Implicit composition

    func test_nested_becomeCurrent_of_two_nodes_inner_takes_the_child_outer_is_credited() {
        let outer = ProgressNode(totalUnitCount: 10)
        let inner = ProgressNode(totalUnitCount: 10)
        outer.becomeCurrent(withPendingUnitCount: 4)
        inner.becomeCurrent(withPendingUnitCount: 6)
        XCTAssertTrue(ProgressNode.current() === inner)
        let child = ProgressNode(totalUnitCount: 2)
        inner.resignCurrent()
        XCTAssertTrue(ProgressNode.current() === outer)
        outer.resignCurrent()
        XCTAssertNil(ProgressNode.current())
        XCTAssertEqual(outer.completedUnitCount, 4, "no node attached to outer: credited at resign")
        child.advance()
        XCTAssertEqual(inner.fractionCompleted, 0.3)
        XCTAssertEqual(outer.fractionCompleted, 0.4)
    }

    func test_performAsCurrent_with_pending_zero_attaches_a_child_worth_nothing() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = parent.performAsCurrent(withPendingUnitCount: 0) { ProgressNode(totalUnitCount: 2) }
        XCTAssertEqual(parent.children.count, 1)
        child.advance()
        XCTAssertEqual(parent.fractionCompleted, 0)
        child.advance()
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertTrue(parent.children.isEmpty)
    }

    func test_a_task_started_in_withCurrent_creating_its_node_after_the_scope_ended_does_not_attach() async {
        let parent = ProgressNode(totalUnitCount: 10)
        let gate = AsyncGate()
        let task = parent.withCurrent(pendingUnitCount: 5) {
            Task { await gate.wait(); return ProgressNode(totalUnitCount: 1) }
        }
        XCTAssertEqual(parent.completedUnitCount, 5, "nothing attached by the end of the scope: credited")
        await gate.open()
        let late = await task.value
        XCTAssertTrue(parent.children.isEmpty)
        late.advance()
        XCTAssertEqual(parent.completedUnitCount, 5)
    }

    // MARK: Control

    /// A child paused with its parent and then finished (detached) must not stay paused for ever after the
    /// parent resumes: pause() never pauses a finished node, and a checkpoint on it would never return.
    func test_a_child_that_finished_while_paused_is_not_left_paused_after_the_parent_resumes() {
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        parent.pause()
        XCTAssertTrue(child.isPaused)
        child.advance()  // finishes, credited, detached
        XCTAssertTrue(child.isFinished)
        parent.resume()
        XCTAssertFalse(parent.isPaused)
        XCTAssertFalse(child.isPaused, "child stays paused although every ancestor resumed")
    }

    /// The consequence: a checkpoint on such a child suspends although nothing is paused any more.
    func test_checkpoint_of_a_child_that_finished_while_paused_returns_after_the_parent_resumes() async {
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        parent.pause()
        child.advance()
        parent.resume()
        let returned = expectation(description: "checkpoint returned")
        let task = Task {
            try? await child.checkpoint()
            returned.fulfill()
        }
        await fulfillment(of: [returned], timeout: 5)
        child.resume()  // releases the suspended checkpoint if it hung
        await task.value
    }

    func test_snapshots_of_a_node_cancelled_before_iteration_yield_one_cancelled_snapshot() async {
        let node = ProgressNode(totalUnitCount: 10)
        node.advance(by: 3)
        node.cancel()
        var received: [ProgressNode.Snapshot] = []
        for await snapshot in node.snapshots { received.append(snapshot) }
        XCTAssertEqual(received.count, 1)
        XCTAssertEqual(received.first?.isCancelled, true)
        XCTAssertEqual(received.first?.fractionCompleted, 0.3)
    }

    func test_snapshots_of_a_zero_total_node_end_on_its_first_unit() async {
        let node = ProgressNode(totalUnitCount: 0)
        let gate = AsyncGate()
        let consumer = Task {
            var received: [ProgressNode.Snapshot] = []
            for await snapshot in node.snapshots {
                received.append(snapshot)
                if received.count == 1 { await gate.open() }
            }
            return received
        }
        await gate.wait()
        node.advance()
        let received = await consumer.value
        XCTAssertEqual(received.first?.isIndeterminate, true)
        XCTAssertEqual(received.first?.fractionCompleted, 0)
        XCTAssertEqual(received.last?.isFinished, true)
        XCTAssertEqual(received.last?.fractionCompleted, 1)
    }

    /// "The last value (the node finished, or was cancelled) is always delivered": also when the code that
    /// finished the node lets it go right away (a parent does not retain a finished child).
    func test_the_finished_value_is_delivered_when_the_node_is_released_right_after_finishing() {
        let queue = DispatchQueue(label: "observer")
        queue.suspend()
        var node: ProgressNode? = ProgressNode(totalUnitCount: 1)
        let delivered = expectation(description: "finished value delivered")
        let token = node!.observe(\.isFinished, on: queue) { _, change in
            if change.newValue { delivered.fulfill() }
        }
        node!.completedUnitCount = 1
        node = nil
        queue.resume()
        wait(for: [delivered], timeout: 5)
        token.invalidate()
    }

    func test_the_cancelled_value_is_delivered_when_the_node_is_released_right_after_cancelling() {
        let queue = DispatchQueue(label: "observer")
        queue.suspend()
        let parent = ProgressNode(totalUnitCount: 2)
        var child: ProgressNode? = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let delivered = expectation(description: "cancelled value delivered")
        let token = child!.observe(\.isCancelled, on: queue) { _, change in
            if change.newValue { delivered.fulfill() }
        }
        child!.cancel()
        child!.advance()  // finishes: the parent lets it go
        child = nil
        queue.resume()
        wait(for: [delivered], timeout: 5)
        token.invalidate()
    }

    func test_observer_of_a_detached_finished_child_sees_it_unfinish() {
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let queue = DispatchQueue(label: "observer")
        let finished = expectation(description: "finished delivered")
        let unfinished = expectation(description: "unfinished delivered")
        let token = child.observe(\.isFinished, on: queue) { _, change in
            if change.newValue { finished.fulfill() } else { unfinished.fulfill() }
        }
        child.advance()
        wait(for: [finished], timeout: 10)
        child.completedUnitCount = 0
        wait(for: [unfinished], timeout: 10)
        XCTAssertEqual(parent.completedUnitCount, 1)
        token.invalidate()
    }
}

/// A one-shot gate for async tests (no sleeps).
private actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
