import Foundation
@testable import ProgressTree
import TestSupport
import XCTest
import ProgressTreePlatform

/// Transitions reach the work still running below a finished node (Docs/Cancellation.md, "Final nodes are
/// passed through", "Through finished nodes"): a node finished by its counts while children run (set to
/// its total by hand, or 1 of a total of 0) is never changed by `cancel()`, `pause()`, `resume()` or a
/// failure's cancellation itself, but each of them goes on to the nodes attached below it, and its parent
/// keeps it for that until nothing is attached below it.
final class ThroughFinishedNodesTests: XCTestCase {
    /// The shape found by a model check: a finished root with a live child, added to a paused node.
    func test_a_pause_reaches_the_child_of_a_finished_node_added_to_a_paused_node() {
        let n0 = ProgressNode(parent: nil)  // 0 of 0
        n0.advance(by: 1)  // finished: completed 1, total 0
        let n1 = ProgressNode(totalUnitCount: 0, parent: n0, pendingUnitCount: 0)
        let n2 = ProgressNode.discreteProgress(totalUnitCount: 0)
        n2.pause()

        n2.addChild(n0, withPendingUnitCount: 0)

        XCTAssertTrue(n1.isPaused, "attached, unfinished, below a paused ancestor")
        XCTAssertFalse(n0.isPaused, "a finished node is never paused")
        n2.resume()
        XCTAssertFalse(n1.isPaused)
        n2.pause()
        XCTAssertTrue(n1.isPaused)
        XCTAssertEqual(n2.children.count, 0, "a finished node is not among the children")
    }

    /// A middle node set to its total by hand while its child runs: the root's pause, resume and cancel
    /// reach the child; the middle node itself is neither paused nor cancelled, and no handler of it runs.
    func test_transitions_of_the_root_reach_the_child_of_a_middle_node_finished_by_hand() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let middle = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 5)
        let leaf = ProgressNode(totalUnitCount: 100, parent: middle, pendingUnitCount: 2)
        let middleCalls = Counter()
        middle.cancellationHandler = { middleCalls.add() }
        middle.pausingHandler = { middleCalls.add() }
        middle.resumingHandler = { middleCalls.add() }
        leaf.completedUnitCount = 30

        middle.completedUnitCount = 4  // finished while `leaf` runs
        XCTAssertEqual(root.completedUnitCount, 5, "credited")
        XCTAssertTrue(root.children.isEmpty, "no longer a child")
        XCTAssertEqual(root.fractionCompleted, 0.5, "later progress of `leaf` does not move the root")

        root.pause()
        XCTAssertEqual([middle.isPaused, leaf.isPaused], [false, true])
        root.resume()
        XCTAssertEqual([middle.isPaused, leaf.isPaused], [false, false])
        root.cancel()
        XCTAssertEqual([middle.isCancelled, leaf.isCancelled], [false, true])
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 1, "the leaf")
        XCTAssertEqual(middleCalls.count, 0)
        XCTAssertEqual(leaf.completedUnitCount, 30, "the work done is kept")
    }

    /// 1 of a total of 0 finishes a node: the same.
    func test_a_node_finished_by_one_of_a_total_of_zero_passes_a_pause_of_its_parent_on() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let middle = ProgressNode(totalUnitCount: 0, parent: root, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 3, parent: middle, pendingUnitCount: 0)
        middle.advance(by: 1)
        XCTAssertTrue(root.isFinished)

        root.pause()

        XCTAssertTrue(leaf.isPaused)
        XCTAssertFalse(middle.isPaused)
        XCTAssertFalse(root.isPaused, "finished")
    }

    /// A paused node that finishes leaves the pause itself (its resuming handler runs once); the node
    /// below it stays paused until a resume reaches it, here the root's.
    func test_a_paused_node_that_finishes_leaves_the_pause_and_the_nodes_below_it_stay_paused() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
        let middleResumed = Counter()
        let leafResumed = Counter()
        middle.resumingHandler = { middleResumed.add() }
        leaf.resumingHandler = { leafResumed.add() }
        root.pause()

        middle.completedUnitCount = 1

        XCTAssertEqual([root.isPaused, middle.isPaused, leaf.isPaused], [true, false, true])
        XCTAssertEqual([middleResumed.count, leafResumed.count], [1, 0])
        root.resume()
        XCTAssertEqual([root.isPaused, middle.isPaused, leaf.isPaused], [false, false, false])
        XCTAssertEqual([middleResumed.count, leafResumed.count], [1, 1])
    }

    /// The same for a root, with no parent: its own `resume()` reaches the node below it.
    func test_a_paused_root_that_finishes_keeps_its_children_paused_until_it_is_resumed() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        root.pause()
        root.completedUnitCount = 1
        XCTAssertEqual([root.isPaused, leaf.isPaused], [false, true])
        let later = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        XCTAssertTrue(later.isPaused, "attached below a node that still stands for its pause")

        root.resume()

        XCTAssertEqual([root.isPaused, leaf.isPaused, later.isPaused], [false, false, false])
    }

    /// `cancel()` of a finished node does not make it cancelled; it reaches its children and the children
    /// attached to it later.
    func test_cancel_of_a_finished_node_cancels_its_children_and_later_ones_but_not_the_node() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 5, parent: root, pendingUnitCount: 0)
        let rootCancelled = Counter()
        root.cancellationHandler = { rootCancelled.add() }
        root.completedUnitCount = 1

        root.cancel()

        XCTAssertFalse(root.isCancelled)
        XCTAssertEqual(rootCancelled.count, 0)
        XCTAssertTrue(child.isCancelled)
        let later = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        XCTAssertTrue(later.isCancelled)
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 2)
    }

    /// A failure cancels the nodes below the failed node, through a child of it that finished by hand.
    func test_fail_cancels_the_work_below_a_finished_child_of_the_failed_node() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let failing = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        let finished = ProgressNode(totalUnitCount: 1, parent: failing, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 1, parent: finished, pendingUnitCount: 0)
        finished.completedUnitCount = 1

        failing.fail(CocoaError(.fileReadUnknown))

        XCTAssertTrue(leaf.isCancelled)
        XCTAssertFalse(finished.isCancelled)
        XCTAssertEqual(failing.descendantOutcomes.cancelledCount, 1)
    }

    /// The parent holds a finished node only while something is attached below it: once the last such
    /// node finishes, the parent lets go of it (nothing keeps it in memory), and a child attached to it
    /// afterwards is out of the former parent's reach.
    func test_the_parent_lets_a_finished_node_go_once_nothing_is_attached_below_it() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        weak var released: ProgressNode?
        var later: ProgressNode?
        do {
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
            middle.completedUnitCount = 1
            root.pause()
            XCTAssertTrue(leaf.isPaused)
            leaf.completedUnitCount = 1  // the last node below `middle` finishes: the hold ends
            XCTAssertFalse(leaf.isPaused)
            later = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
            released = middle
        }
        XCTAssertEqual(later?.isPaused, false, "out of the paused root's reach")
        later = nil
        XCTAssertNil(released, "the root let go of the finished node")
    }

    /// Holds end upward: a chain of finished nodes is let go when the node at its bottom finishes.
    func test_a_chain_of_held_nodes_is_let_go_when_the_last_running_node_below_it_finishes() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        weak var top: ProgressNode?
        weak var bottom: ProgressNode?
        var leaf: ProgressNode?
        do {
            let a = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let b = ProgressNode(totalUnitCount: 1, parent: a, pendingUnitCount: 1)
            leaf = ProgressNode(totalUnitCount: 1, parent: b, pendingUnitCount: 0)
            b.completedUnitCount = 1  // held by `a`, which finishes by the credit and is held by `root`
            XCTAssertTrue(a.isFinished)
            top = a
            bottom = b
        }
        XCTAssertNotNil(top, "held while `leaf` runs")
        XCTAssertNotNil(bottom)
        root.cancel()
        XCTAssertEqual(leaf?.isCancelled, true)
        leaf?.completedUnitCount = 1
        leaf = nil
        XCTAssertNil(bottom)
        XCTAssertNil(top)
    }

    /// A finished node held for transitions is not shown: not in `children`, not in `description`, and its
    /// files count once (folded into the parent when it finished).
    func test_a_held_node_is_shown_neither_in_the_tree_nor_twice_in_the_files() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let file = ProgressNode(totalUnitCount: 10, parent: folder, pendingUnitCount: 0)
        file.kind = .file
        let other = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        other.kind = .file
        folder.completedUnitCount = 1

        XCTAssertEqual(root.children.map(ObjectIdentifier.init), [ObjectIdentifier(other)])
        XCTAssertEqual(root.description, "ProgressNode: 50.00% (1 of 2)\n  portion 1: 0.00% (0 of 10)")
        XCTAssertEqual(root.fileSummary.fileTotalCount, 2)
        root.pause()
        XCTAssertTrue(file.isPaused)
    }

    // MARK: Concurrency

    /// The last node below a held node finishes while another thread attaches new children to the held
    /// node, under a paused root. Whichever comes first, no node is left paused once the root resumes: a
    /// child either joins while the node is still held (the root's resume reaches it) or after the hold
    /// ended (then it was not paused by the root at all).
    func test_a_hold_ending_while_children_attach_under_a_paused_root_strands_no_pause() {
        var stranded = 0
        for _ in 0..<2_000 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 1)
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let last = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
            middle.completedUnitCount = 1
            root.pause()
            let start = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            let attached = Lock<[ProgressNode]>([])
            Thread {
                start.wait()
                for _ in 0..<4 {
                    let child = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
                    attached.withLock { $0.append(child) }
                }
                done.signal()
            }.start()
            start.signal()
            last.completedUnitCount = 1
            done.wait()
            root.resume()
            stranded += attached.withLock { $0.filter(\.isPaused).count }
        }
        XCTAssertEqual(stranded, 0, "children left paused after the root resumed")
    }

    /// One thread pauses and resumes the root; another finishes middle nodes by hand while their leaves
    /// run, and attaches leaves to finished middles. Once both stop and the root resumes, nothing is paused.
    func test_pauses_racing_with_middle_nodes_finished_by_hand_leave_nothing_paused_after_a_resume() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        let stop = Flag()
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            while !stop.isSet {
                root.pause()
                root.resume()
            }
            stopped.signal()
        }.start()
        var leaves: [ProgressNode] = []
        for round in 0..<2_000 {
            let middle = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 0)
            leaves.append(ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 1))
            middle.completedUnitCount = 2  // finished by hand while its leaf runs
            leaves.append(ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0))
            if round % 3 == 0 { leaves[leaves.count - 2].completedUnitCount = 1 }
        }
        stop.set()
        stopped.wait()
        root.resume()
        XCTAssertEqual(leaves.filter(\.isPaused).count, 0)
        root.pause()
        let reachable = leaves.filter { !$0.isFinished }
        XCTAssertEqual(reachable.filter(\.isPaused).count, reachable.count, "every running leaf is reached")
    }
}
