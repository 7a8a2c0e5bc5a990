@testable import ProgressTree
import TestSupport
import XCTest

/// Single-threaded semantics of `pause()` and `resume()` (Docs/Cancellation.md). What they share with
/// `cancel()` is in `ControlTransitionTests`; `checkpoint()` is covered in `ControlConcurrencyTests`.
final class PausingTests: XCTestCase {
    /// The first snippet of Docs/Cancellation.md ("The model"), with each comment checked.
    func test_guide_model_snippet() {
        let album = ProgressNode(totalUnitCount: 10)
        let photo = ProgressNode(totalUnitCount: 100, parent: album, pendingUnitCount: 5)

        photo.cancel()
        XCTAssertTrue(photo.isCancelled)
        XCTAssertFalse(album.isCancelled)
        album.pause()
        XCTAssertTrue(album.isPaused)
        XCTAssertFalse(photo.isPaused, "a cancelled node is not paused")
        album.cancel()
        XCTAssertTrue(album.isCancelled)
        XCTAssertTrue(photo.isCancelled)
    }

    // MARK: Propagation

    func test_resuming_a_child_of_a_paused_parent_leaves_the_parent_paused() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        let other = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        root.pause()
        child.resume()
        XCTAssertEqual([root, child, other].map(\.isPaused), [true, false, true])
    }

    func test_resume_of_the_root_resumes_a_child_paused_on_its_own() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        root.resumingHandler = log.handler("root")
        child.resumingHandler = log.handler("child")
        child.pause()

        root.resume()

        XCTAssertFalse(child.isPaused)
        XCTAssertEqual(log.all, ["child"], "the root was not paused: its handler does not run")
    }

    func test_pausing_the_root_again_pauses_a_child_that_was_resumed_alone() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        root.pausingHandler = log.handler("root")
        child.pausingHandler = log.handler("child")
        root.pause()
        child.resume()

        root.pause()

        XCTAssertTrue(child.isPaused)
        XCTAssertEqual(log.all, ["root", "child", "child"], "root already paused: no second root call")
    }

    func test_child_attached_to_paused_parent_becomes_paused_and_resumes_with_it() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        root.pause()

        let child = ProgressNode.discreteProgress(totalUnitCount: 4)
        let grandchild = ProgressNode(totalUnitCount: 4, parent: child, pendingUnitCount: 4)
        child.pausingHandler = log.handler("child paused")
        grandchild.pausingHandler = log.handler("grandchild paused")
        child.resumingHandler = log.handler("child resumed")
        grandchild.resumingHandler = log.handler("grandchild resumed")
        root.addChild(child, withPendingUnitCount: 5)
        let explicit = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        let implicit = root.withCurrent(pendingUnitCount: 1) { ProgressNode(totalUnitCount: 5) }

        XCTAssertEqual([child, grandchild, explicit, implicit].map(\.isPaused), [true, true, true, true])
        XCTAssertEqual(log.all, ["child paused", "grandchild paused"])

        root.resume()

        XCTAssertEqual(
            [root, child, grandchild, explicit, implicit].map(\.isPaused), [false, false, false, false, false])
        XCTAssertEqual(log.all, ["child paused", "grandchild paused", "child resumed", "grandchild resumed"])
    }

    func test_child_attached_to_a_cancelled_and_paused_parent_is_cancelled_only() {
        let root = ProgressNode(totalUnitCount: 10)
        root.pause()
        root.cancel()
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        XCTAssertTrue(child.isCancelled)
        XCTAssertFalse(child.isPaused, "cancelled first: the later pause does nothing")
    }

    // MARK: Handlers: order and single invocation

    func test_resume_without_pause_is_a_no_op() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.resumingHandler = log.handler("root")
        child.resumingHandler = log.handler("child")
        root.resume()
        child.resume()
        XCTAssertFalse(root.isPaused)
        XCTAssertFalse(child.isPaused)
        XCTAssertEqual(log.all, [])
    }

    func test_each_pause_resume_cycle_runs_the_handlers_once() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.pausingHandler = log.handler("p")
        node.resumingHandler = log.handler("r")
        for _ in 0..<3 {
            node.pause()
            node.resume()
        }
        XCTAssertEqual(log.all, ["p", "r", "p", "r", "p", "r"])
    }

    func test_pause_on_a_cancelled_node_does_nothing() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.pausingHandler = log.handler("paused")
        node.cancel()
        node.pause()
        XCTAssertFalse(node.isPaused)
        XCTAssertTrue(node.isCancelled)
        XCTAssertEqual(log.all, [])
    }

    func test_resume_after_cancel_does_nothing() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.resumingHandler = log.handler("root")
        child.resumingHandler = log.handler("child")
        root.pause()
        root.cancel()

        root.resume()
        child.resume()

        XCTAssertTrue(root.isPaused, "no state change after cancel")
        XCTAssertTrue(child.isPaused)
        XCTAssertTrue(root.isCancelled)
        XCTAssertEqual(log.all, [])
    }

    func test_pause_on_a_finished_node_does_nothing() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 2)
        node.pausingHandler = log.handler("paused")
        node.resumingHandler = log.handler("resumed")
        node.completedUnitCount = 2
        XCTAssertTrue(node.isFinished)

        node.pause()
        node.resume()

        XCTAssertFalse(node.isPaused)
        XCTAssertEqual(log.all, [])
    }

    func test_pause_of_the_parent_skips_a_child_cancelled_before() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let cancelled = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        let running = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        cancelled.pausingHandler = log.handler("cancelled")
        running.pausingHandler = log.handler("running")
        cancelled.cancel()

        root.pause()

        XCTAssertEqual([root, cancelled, running].map(\.isPaused), [true, false, true])
        XCTAssertEqual(log.all, ["running"])
    }

    func test_pausing_handler_set_on_a_paused_node_runs_at_once_resuming_handler_does_not() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.pause()
        node.pausingHandler = log.handler("paused")
        XCTAssertEqual(log.all, ["paused"])
        node.resumingHandler = log.handler("resumed")
        XCTAssertEqual(log.all, ["paused"])
        node.resume()
        XCTAssertEqual(log.all, ["paused", "resumed"])
    }

    func test_pausing_handler_set_on_a_running_node_does_not_run() {
        let log = ControlCallLog()
        let node = ProgressNode(totalUnitCount: 10)
        node.pausingHandler = log.handler("paused")
        XCTAssertEqual(log.all, [])
    }

    func test_handlers_replaced_or_cleared_from_inside_a_parent_pausing_handler() {
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let a = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        let b = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 5)
        a.pausingHandler = log.handler("a-old")
        b.pausingHandler = log.handler("b-old")
        root.pausingHandler = { [log] in
            log.record("root")
            // a and b are already paused, but their calls are still pending: the pause calls the handler
            // current at their turn, once.
            a.pausingHandler = log.handler("a-new")
            b.pausingHandler = nil
        }

        root.pause()

        XCTAssertEqual(log.all, ["root", "a-new"])
        XCTAssertNil(b.pausingHandler)
        root.resume()
        root.pause()
        XCTAssertEqual(log.all, ["root", "a-new", "root", "a-new"])
    }

    func test_handler_pausing_the_parent_from_inside_a_child_pausing_handler() {
        // Pausing flows down only; a child handler may pause its parent (outside every lock).
        let log = ControlCallLog()
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.pausingHandler = log.handler("root")
        child.pausingHandler = { [log] in
            log.record("child")
            root.pause()
        }
        child.pause()
        XCTAssertEqual(log.all, ["child", "root"])
        XCTAssertTrue(root.isPaused)
    }

    // MARK: Scale

    func test_10_000_deep_chain_pauses_and_resumes_iteratively() {
        let chain = makeChain(depth: 10_000)
        let paused = CallCounter()
        let resumed = CallCounter()
        for node in chain {
            node.pausingHandler = paused.increment
            node.resumingHandler = resumed.increment
        }

        chain[0].pause()
        XCTAssertEqual(chain.filter(\.isPaused).count, 10_000)
        XCTAssertEqual(paused.value, 10_000)

        chain[0].resume()
        XCTAssertEqual(chain.filter(\.isPaused).count, 0)
        XCTAssertEqual(resumed.value, 10_000)

        chain[0].pause()
        chain[0].cancel()
        chain[0].resume()
        XCTAssertEqual(chain.filter(\.isCancelled).count, 10_000)
        XCTAssertEqual(resumed.value, 10_000, "resume after cancel does nothing")
        XCTAssertEqual(paused.value, 20_000)
        releaseChain(chain)
    }

}
