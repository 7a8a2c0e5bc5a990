@testable import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// A thread-safe record of handler calls, in the order they happened. Shared by the control tests.
final class ControlCallLog: Sendable {
    private let entries = Lock<[String]>([])

    func record(_ entry: String) { entries.withLock { $0.append(entry) } }

    /// A handler that records `entry` each time it runs.
    func handler(_ entry: String) -> @Sendable () -> Void {
        { [self] in record(entry) }
    }

    var all: [String] { entries.withLock { $0 } }

    func count(_ entry: String) -> Int { all.filter { $0 == entry }.count }
}

/// Single-threaded semantics of `cancel()` (Docs/Cancellation.md). What it shares with `pause()` and
/// `resume()` is in `ControlTransitionTests`.
final class CancellationTests: XCTestCase {
    // MARK: Propagation

    func test_cancelling_a_leaf_leaves_its_parent_running() {
        let root = ProgressNode(totalUnitCount: 2)
        let leaf = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let log = ControlCallLog()
        root.cancellationHandler = log.handler("root")
        leaf.cancel()
        XCTAssertTrue(leaf.isCancelled)
        XCTAssertFalse(root.isCancelled)
        XCTAssertEqual(log.all, [])
    }

    func test_child_attached_to_cancelled_parent_becomes_cancelled() {
        let root = ProgressNode(totalUnitCount: 10)
        root.cancel()

        let explicit = ProgressNode(totalUnitCount: 5, parent: root, pendingUnitCount: 1)
        XCTAssertTrue(explicit.isCancelled)

        let discrete = ProgressNode.discreteProgress(totalUnitCount: 5)
        XCTAssertFalse(discrete.isCancelled)
        root.addChild(discrete, withPendingUnitCount: 1)
        XCTAssertTrue(discrete.isCancelled)

        let implicit = root.withCurrent(pendingUnitCount: 1) { ProgressNode(totalUnitCount: 5) }
        XCTAssertTrue(implicit.isCancelled)
    }

    func test_subtree_attached_to_cancelled_parent_is_cancelled_with_handlers_once_in_order() {
        let root = ProgressNode(totalUnitCount: 10)
        root.cancel()

        let log = ControlCallLog()
        let child = ProgressNode.discreteProgress(totalUnitCount: 4)
        let grandchild = ProgressNode(totalUnitCount: 4, parent: child, pendingUnitCount: 2)
        child.cancellationHandler = log.handler("child")
        grandchild.cancellationHandler = log.handler("grandchild")
        XCTAssertEqual(log.all, [], "not cancelled before it is attached")

        root.addChild(child, withPendingUnitCount: 5)

        XCTAssertTrue(child.isCancelled)
        XCTAssertTrue(grandchild.isCancelled)
        XCTAssertEqual(log.all, ["child", "grandchild"])
        root.cancel()
        XCTAssertEqual(log.all, ["child", "grandchild"], "repeated cancel runs no handler")
    }

    func test_cancel_reaches_children_added_before_through_a_later_attach_of_their_parent() {
        // A subtree built bottom-up and attached to a running root is cancelled with it afterwards.
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode.discreteProgress(totalUnitCount: 4)
        let grandchild = ProgressNode(totalUnitCount: 4, parent: child, pendingUnitCount: 2)
        root.addChild(child, withPendingUnitCount: 5)
        XCTAssertFalse(child.isCancelled)
        root.cancel()
        XCTAssertTrue(child.isCancelled)
        XCTAssertTrue(grandchild.isCancelled)
    }

    func test_a_finished_child_is_detached_and_not_cancelled() {
        let root = ProgressNode(totalUnitCount: 10)
        let done = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 4)
        let running = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 6)
        let log = ControlCallLog()
        done.cancellationHandler = log.handler("done")
        running.cancellationHandler = log.handler("running")
        done.completedUnitCount = 2
        XCTAssertTrue(done.isFinished)

        root.cancel()

        XCTAssertFalse(done.isCancelled, "a finished child is no longer attached")
        XCTAssertTrue(running.isCancelled)
        XCTAssertEqual(log.all, ["running"])
        XCTAssertEqual(root.completedUnitCount, 4)
    }

    // MARK: Handlers

    func test_cancelling_a_child_first_then_the_root_runs_the_child_handler_once() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        let other = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        root.cancellationHandler = log.handler("root")
        child.cancellationHandler = log.handler("child")
        other.cancellationHandler = log.handler("other")

        child.cancel()
        root.cancel()

        XCTAssertEqual(log.all, ["child", "root", "other"])
    }

    func test_handler_set_on_cancelled_node_runs_at_once_on_the_setting_thread() {
        let node = ProgressNode(totalUnitCount: 10)
        node.cancel()
        let log = ControlCallLog()
        node.cancellationHandler = log.handler("late")
        XCTAssertEqual(log.all, ["late"], "ran before the setter returned")
        node.cancel()
        XCTAssertEqual(log.all, ["late"], "and not again")
    }

    func test_handler_set_on_a_node_cancelled_through_its_ancestor_runs_at_once() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.cancel()
        let log = ControlCallLog()
        child.cancellationHandler = log.handler("child")
        XCTAssertEqual(log.all, ["child"])
    }

    func test_clearing_the_handler_on_a_cancelled_node_runs_nothing() {
        let node = ProgressNode(totalUnitCount: 10)
        let log = ControlCallLog()
        node.cancellationHandler = log.handler("first")
        node.cancel()
        node.cancellationHandler = nil
        XCTAssertNil(node.cancellationHandler)
        XCTAssertEqual(log.all, ["first"])
    }

    func test_handler_replaced_before_cancel_runs_only_the_new_one() {
        let node = ProgressNode(totalUnitCount: 10)
        let log = ControlCallLog()
        node.cancellationHandler = log.handler("old")
        node.cancellationHandler = log.handler("new")
        node.cancel()
        XCTAssertEqual(log.all, ["new"])
    }

    func test_handler_cleared_before_cancel_runs_nothing() {
        let node = ProgressNode(totalUnitCount: 10)
        let log = ControlCallLog()
        node.cancellationHandler = log.handler("old")
        node.cancellationHandler = nil
        node.cancel()
        XCTAssertEqual(log.all, [])
        XCTAssertTrue(node.isCancelled)
    }

    /// A handler replaced or cleared from inside another handler of the same transition, before the child's
    /// turn: the cancellation calls the handler current at the child's turn (the new one, or none) once, and
    /// the old one never; the setter does not also run the new one "at once".
    func test_handler_replaced_or_cleared_from_inside_a_parent_handler_is_the_one_current_at_the_childs_turn() {
        for replacement in ["child-new", nil] as [String?] {
            let log = ControlCallLog()
            let root = ProgressNode(totalUnitCount: 10)
            let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
            child.cancellationHandler = log.handler("child-old")
            root.cancellationHandler = { [log] in
                log.record("root")
                child.cancellationHandler = replacement.map(log.handler)
                log.record("root done")
            }

            root.cancel()

            let expected = ["root", "root done"] + (replacement.map { [$0] } ?? [])
            XCTAssertTrue(child.isCancelled)
            XCTAssertEqual(child.cancellationHandler == nil, replacement == nil)
            XCTAssertEqual(log.all, expected)
            root.cancel()
            child.cancel()
            XCTAssertEqual(log.all, expected, "each handler once")
        }
    }

    /// A child's handler replacing its parent's handler after the parent's turn: the new one is set on a
    /// node cancelled and already called, so it runs at once, and the old one is not called again.
    func test_handler_replaced_after_its_turn_runs_at_once() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.cancellationHandler = log.handler("root-old")
        child.cancellationHandler = { [log] in
            log.record("child")
            root.cancellationHandler = log.handler("root-new")
            log.record("child done")
        }

        root.cancel()

        XCTAssertEqual(log.all, ["root-old", "child", "root-new", "child done"])
    }

    func test_handler_that_replaces_itself_runs_once() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.cancellationHandler = { [log] in
            log.record("self")
            // Setting a handler on the (now cancelled) node runs the new one at once, never the old one.
            node.cancellationHandler = log.handler("replacement")
        }
        node.cancel()
        XCTAssertEqual(log.all, ["self", "replacement"])
    }

    func test_handlers_reenter_the_tree_on_the_same_thread_without_deadlock() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 100)
        let a = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 50)
        let b = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 50)
        let aChild = ProgressNode(totalUnitCount: 10, parent: a, pendingUnitCount: 10)
        a.completedUnitCount = 5
        b.cancellationHandler = log.handler("b")
        aChild.pausingHandler = log.handler("aChild paused")
        a.cancellationHandler = { [log] in
            log.record("a fraction \(root.fractionCompleted)")
            aChild.pause()
            b.cancel()
            log.record("a done")
        }

        a.cancel()

        XCTAssertEqual(log.all, ["a fraction 0.25", "b", "a done"])
        XCTAssertTrue(b.isCancelled)
        XCTAssertFalse(root.isCancelled)
        XCTAssertFalse(aChild.isPaused, "pause after cancel does nothing")
    }

    // MARK: checkCancellation

    func test_checkCancellation_throws_only_once_cancelled() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        XCTAssertNoThrow(try child.checkCancellation())
        root.cancel()
        var caught: CancellationError?
        do { try child.checkCancellation() } catch { caught = error }
        XCTAssertNotNil(caught)
        XCTAssertThrowsError(try root.checkCancellation()) { XCTAssertTrue($0 is CancellationError) }
    }

    func test_checkCancellation_does_not_throw_for_a_cancelled_child_on_the_parent() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        child.cancel()
        XCTAssertNoThrow(try root.checkCancellation())
        XCTAssertThrowsError(try child.checkCancellation())
    }

    // MARK: Scale

    func test_10_000_deep_chain_is_cancelled_iteratively_in_order() {
        let chain = makeChain(depth: 10_000)
        let log = ControlCallLog()
        for (index, node) in chain.enumerated() { node.cancellationHandler = log.handler("\(index)") }

        chain[0].cancel()

        XCTAssertEqual(chain.filter(\.isCancelled).count, 10_000)
        XCTAssertEqual(log.all, (0..<10_000).map { "\($0)" }, "parent before child, each once")
        XCTAssertThrowsError(try chain[9_999].checkCancellation())
        releaseChain(chain)
    }
}

/// Counts handler calls without a lock on the caller's side.
final class CallCounter: Sendable {
    private let storage = Atomic<Int>(0)
    var increment: @Sendable () -> Void { { [self] in storage.add(1, ordering: .sequentiallyConsistent) } }
    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// A chain `chain[0] → chain[1] → … → chain[depth - 1]`, each node standing for all of its parent's units.
/// Built from the leaf up, so each `addChild` has no ancestors to check for a cycle (O(depth) in total).
func makeChain(depth: Int) -> [ProgressNode] {
    var chain = [ProgressNode.discreteProgress(totalUnitCount: 1)]
    chain.reserveCapacity(depth)
    for _ in 1..<depth {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        parent.addChild(chain[chain.count - 1], withPendingUnitCount: 1)
        chain.append(parent)
    }
    return chain.reversed()
}

/// Releases a deep chain root first, so that no node's release cascades down the whole chain at once.
/// (Releasing a chain through its root alone frees it recursively, one level per stack frame: fine at
/// 10,000 levels, a stack overflow at 100,000. The control tests keep clear of that, which is not theirs.)
func releaseChain(_ chain: consuming [ProgressNode]) {
    while !chain.isEmpty { chain.removeFirst() }
}
