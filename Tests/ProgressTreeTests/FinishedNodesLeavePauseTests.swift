import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// A finished node is never paused: `pause()` skips it, and a paused node that finishes, by its own update
/// or through its children's credit, leaves the pause as `resume()` would (handler, checkpoints return)
/// (Docs/Cancellation.md: "A finished node is not paused", "Final nodes are passed through"); and a pause flows down
/// to the nodes it reaches only ("Only what is reached").
final class FinishedNodesLeavePauseTests: XCTestCase {
    // MARK: A root finished through its children's credit

    /// The reproduction: the credit finishes the root, which has no parent.
    func test_a_paused_root_finished_by_its_childs_credit_leaves_the_pause() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode.discreteProgress(totalUnitCount: 5)
        root.addChild(child, withPendingUnitCount: 2)
        let resumed = CallCounter()
        root.resumingHandler = resumed.increment
        root.pause()

        child.advance(by: 5)  // the root finishes through the credit

        XCTAssertTrue(root.isFinished)
        XCTAssertFalse(root.isPaused, "a finished node is never paused")
        XCTAssertEqual(resumed.value, 1, "it leaves the pause as resume() would: its handler runs once")
        XCTAssertFalse(child.isPaused)
    }

    /// The same through `addChild` of a child already finished (found by `ModelBasedTests`).
    func test_a_paused_root_finished_by_adding_a_finished_child_leaves_the_pause() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let child = ProgressNode.discreteProgress(totalUnitCount: 1)
        child.advance()
        let resumed = CallCounter()
        root.resumingHandler = resumed.increment
        root.pause()

        root.addChild(child, withPendingUnitCount: 1)

        XCTAssertTrue(root.isFinished)
        XCTAssertFalse(root.isPaused)
        XCTAssertEqual(resumed.value, 1)
    }

    /// Two levels: the middle node (attached) leaves its pause today; the root above it must too.
    func test_a_paused_root_finished_by_a_credit_two_levels_up_leaves_the_pause() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 1)
        root.pause()

        leaf.advance()

        XCTAssertEqual([root, middle, leaf].map(\.isFinished), [true, true, true])
        XCTAssertEqual([root, middle, leaf].map(\.isPaused), [false, false, false])
    }

    /// The consequence: work awaiting a checkpoint of the finished root must go on. (On failure the wait
    /// ends after 10 s and the root is resumed, so that the test ends.)
    func test_checkpoint_of_a_paused_root_finished_by_its_childs_credit_returns() async {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode.discreteProgress(totalUnitCount: 5)
        root.addChild(child, withPendingUnitCount: 2)
        root.pause()
        child.advance(by: 5)

        let returned = expectation(description: "checkpoint() returned")
        let task = Task {
            try? await root.checkpoint()
            returned.fulfill()
        }
        await fulfillment(of: [returned], timeout: 10)
        root.resume()  // releases a checkpoint left waiting
        await task.value
    }

    /// A child that is finished when it is added is credited at once; with a node still attached below it,
    /// the parent keeps it for transitions, so the parent's pause reaches that node through it, and so does
    /// the parent's resume (Docs/Cancellation.md, "Through finished nodes").
    func test_a_finished_child_added_to_a_paused_parent_passes_the_pause_to_the_node_below_it() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.pause()
        let child = ProgressNode.discreteProgress(totalUnitCount: 1)
        let grandchild = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 0)
        child.completedUnitCount = 1  // finished, with `grandchild` still attached to it

        root.addChild(child, withPendingUnitCount: 1)

        XCTAssertEqual(root.completedUnitCount, 1, "credited at once")
        XCTAssertEqual(root.children.count, 0)
        XCTAssertFalse(child.isPaused, "a finished node is never paused")
        XCTAssertTrue(grandchild.isPaused, "work below a paused ancestor is paused")
        root.resume()
        XCTAssertFalse(grandchild.isPaused)
    }

    /// A finished child with nothing attached below it is let go: nothing is paused through it, and a child
    /// attached to it afterwards starts a tree of its own.
    func test_a_finished_childless_child_added_to_a_paused_parent_is_let_go_and_leaves_later_children_alone() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.pause()
        let child = ProgressNode.discreteProgress(totalUnitCount: 1)
        child.completedUnitCount = 1

        root.addChild(child, withPendingUnitCount: 1)
        let later = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 0)

        XCTAssertEqual(root.completedUnitCount, 1)
        XCTAssertFalse(child.isPaused)
        XCTAssertFalse(later.isPaused)
    }

    // MARK: A child detached while a pause of its parent is under way

    /// `pause()` lists a node's children, then marks them one at a time. A child that finishes (and so
    /// detaches) and is set back below its total in between must not be marked: no `resume()` of the
    /// parent reaches it any more, so it would stay paused for good.
    ///
    /// One thread pauses and resumes the parent in a loop; the other creates leaves, finishes each and sets
    /// it back to 0. Ten children attached first make each pause visit the new leaf last, which widens the
    /// window. Without the fix every run here left leaves paused: 12 to 10,000 of the 100,000, on 2 busy
    /// cores, in 0.5–1 s. No sleep: the looping thread stops when the other is done (or after 60 s, as a
    /// guard).
    func test_a_leaf_finished_and_reset_during_a_pause_of_its_parent_is_not_left_paused() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let siblings = (0..<10).map { _ in ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1) }
        let leafCount = 100_000
        let shared = RaceResults()
        let finished = DispatchGroup()

        finished.enter()
        let pauser = Thread { [parent] in
            let deadline = ContinuousClock.now + .seconds(60)
            while !shared.creatorDone && ContinuousClock.now < deadline {
                parent.pause()
                parent.resume()
            }
            finished.leave()
        }
        finished.enter()
        let creator = Thread { [parent] in
            var created: [ProgressNode] = []
            created.reserveCapacity(leafCount)
            for _ in 0..<leafCount {
                let leaf = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 0)
                leaf.completedUnitCount = 1  // finished: detached from the parent
                leaf.completedUnitCount = 0  // set back below its total, still detached
                created.append(leaf)
            }
            shared.creatorFinished(with: created)
            finished.leave()
        }
        pauser.start()
        creator.start()
        finished.wait()
        parent.resume()

        let all = shared.leaves
        XCTAssertEqual(all.count, leafCount)
        XCTAssertEqual(all.filter(\.isPaused).count, 0, "leaves paused although every ancestor resumed")
        XCTAssertEqual(all.filter(\.isFinished).count, 0)
        XCTAssertEqual(parent.children.count, siblings.count, "every leaf detached")
        XCTAssertEqual(siblings.filter(\.isPaused).count, 0)
    }

    /// The same one level down (found by `ConcurrentInvariantTests`): `pause()` of the root marks `node`,
    /// lists its children and visits them one at a time. If `node` finishes before the pause reaches its last
    /// child, it detaches and leaves its pause (its `resume()` finds that child not yet paused), and the pause
    /// then marks the child, which is still attached to `node` but out of reach of any `resume()` above.
    ///
    /// To make that order likely rather than lucky: `node`'s first child is a cancelled subtree of 10,000
    /// nodes, which the pause walks through (marking nothing) before it reaches `child`. As soon as `node`
    /// shows paused, this thread finishes that first child (which detaches, so `node`'s `resume()` skips it)
    /// and then `node`. Without the fix most of the 8 rounds end with `child` paused.
    func test_a_child_of_a_node_finished_during_a_pause_of_the_root_is_not_left_paused() {
        var pausedRounds = 0
        for _ in 0..<8 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 10)
            let node = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let cancelled = ProgressNode.discreteProgress(totalUnitCount: 1)
            for _ in 0..<10_000 { _ = ProgressNode(totalUnitCount: 1, parent: cancelled, pendingUnitCount: 0) }
            cancelled.cancel()
            node.addChild(cancelled, withPendingUnitCount: 0)
            let child = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 0)

            let paused = DispatchSemaphore(value: 0)
            Thread { [root] in
                root.pause()
                paused.signal()
            }.start()
            let deadline = ContinuousClock.now + .seconds(30)
            while !node.isPaused && ContinuousClock.now < deadline {}
            cancelled.completedUnitCount = 1  // detaches from `node`
            node.completedUnitCount = 1  // finishes while paused: detaches and leaves the pause
            paused.wait()
            root.resume()

            XCTAssertTrue(node.isFinished)
            XCTAssertFalse(node.isPaused)
            if child.isPaused { pausedRounds += 1 }
        }
        XCTAssertEqual(pausedRounds, 0, "rounds that left the child paused although every node above it resumed")
    }

    /// The mirror image, found while fixing the above: `resume()` of the root lists its children and visits
    /// them one at a time; a `pause()` of the root that overtook it (finding the child still paused, so
    /// leaving it alone) was followed by the resume un-pausing the child: the root paused, its child running.
    /// To make that order likely: the root's first child has 10,000 paused children, which the resume walks
    /// through first. Once it has resumed the first of them, this thread finishes that first child (it
    /// detaches) and pauses the root, which then goes straight to `child`. Without the fix most of the 8
    /// rounds end with `child` running.
    func test_a_pause_that_overtakes_a_resume_of_the_root_leaves_the_child_paused() {
        var runningRounds = 0
        for _ in 0..<8 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 10)
            let big = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
            let first = ProgressNode(totalUnitCount: 1, parent: big, pendingUnitCount: 0)
            for _ in 1..<10_000 { _ = ProgressNode(totalUnitCount: 1, parent: big, pendingUnitCount: 0) }
            let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            root.pause()

            let resumed = DispatchSemaphore(value: 0)
            Thread { [root] in
                root.resume()
                resumed.signal()
            }.start()
            let deadline = ContinuousClock.now + .seconds(30)
            while first.isPaused && ContinuousClock.now < deadline {}
            big.completedUnitCount = 1  // detaches from `root` (not paused any more: no resume() of its own)
            root.pause()  // the last call: the root and its child end paused
            resumed.wait()

            XCTAssertTrue(root.isPaused)
            if !child.isPaused { runningRounds += 1 }
        }
        XCTAssertEqual(runningRounds, 0, "rounds that left the child running under its paused parent")
    }

    // MARK: A node finishing by its own update while another thread pauses it

    /// `pause()` read the counts and then set the paused flag; a node finishing by its own update in between
    /// (a root: no lock taken) found it not paused yet, so it did not leave the pause, and ended finished and
    /// paused (no `resumingHandler`, checkpoints waiting). Found by reasoning about the order of the two
    /// threads' loads and stores; the two threads meet on a barrier before each of 200,000 nodes. Without
    /// the fix, 6 to 11 of them end finished and paused, in every run here (0.6-0.9 s). On a machine too
    /// busy to meet 200,000 times within 30 s, the rounds both threads completed are checked; the first
    /// 10,000 are met whatever the time they take (the deadline for those is only a guard against a hang).
    func test_a_node_finishing_while_another_thread_pauses_it_is_not_left_paused() {
        let rounds = 200_000
        let minimumRounds = 10_000
        let nodes = (0..<rounds).map { _ in ProgressNode.discreteProgress(totalUnitCount: 1) }
        let barrier = TwoThreadBarrier()
        let finished = DispatchGroup()
        let deadline = ContinuousClock.now + .seconds(30)
        let hangDeadline = ContinuousClock.now + .seconds(600)
        let completed = [Counter(), Counter()]
        for thread in 0..<2 {
            finished.enter()
            Thread {
                for (round, node) in nodes.enumerated() {
                    let roundDeadline = round < minimumRounds ? hangDeadline : deadline
                    guard barrier.arriveAndWait(round: round, deadline: roundDeadline) else { break }
                    if thread == 0 { node.pause() } else { node.completedUnitCount = 1 }
                    completed[thread].add()
                }
                finished.leave()
            }.start()
        }
        finished.wait()

        let both = nodes.prefix(min(completed[0].count, completed[1].count))
        XCTAssertGreaterThanOrEqual(both.count, minimumRounds, "rounds met")
        XCTAssertEqual(both.filter(\.isFinished).count, both.count)
        XCTAssertEqual(both.filter(\.isPaused).count, 0, "nodes finished and paused")
    }

    // MARK: A child that finished while its parent was paused

    /// A child paused with its parent and then finished (detached) is not paused any more after the parent
    /// resumes: it left the pause when it finished, and no `resume()` of an ancestor reaches it now.
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

    /// So a checkpoint on such a child returns once nothing is paused.
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
}

/// Lets two threads start each round together: spins, yielding now and then so that a descheduled partner
/// gets the core back on a busy machine.
private final class TwoThreadBarrier: Sendable {
    private let arrivals = Atomic<Int>(0)

    /// Waits for the other thread to arrive at `round`; `false` once `deadline` has passed.
    func arriveAndWait(round: Int, deadline: ContinuousClock.Instant) -> Bool {
        arrivals.add(1, ordering: .sequentiallyConsistent)
        var spins = 0
        while arrivals.load(ordering: .sequentiallyConsistent) < 2 * (round + 1) {
            spins += 1
            if spins % 1_000 == 0 {
                sched_yield()
                if ContinuousClock.now > deadline { return false }
            }
        }
        return true
    }
}

/// What the creating thread hands the test.
private final class RaceResults: Sendable {
    private let done = Atomic<Bool>(false)
    private let created = Lock<[ProgressNode]>([])

    var creatorDone: Bool { done.load(ordering: .acquiring) }
    var leaves: [ProgressNode] { created.withLock { $0 } }

    func creatorFinished(with leaves: [ProgressNode]) {
        created.withLock { $0 = leaves }
        done.store(true, ordering: .releasing)
    }
}
