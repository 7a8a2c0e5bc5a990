import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest

private struct WeakNode {
    weak var node: ProgressNode?
}

/// A spin barrier for two threads, one per round; `abandon()` lets a waiting thread go (a watchdog fired).
private final class RoundBarrier: Sendable {
    private let arrived = Atomic<Int>(0)
    private let abandoned = Atomic<Bool>(false)
    /// Rounds both threads have finished (for a report after a hang).
    let completedRounds = Atomic<Int>(0)
    func abandon() { abandoned.store(true, ordering: .releasing) }
    /// Returns `false` once abandoned.
    func wait(round: Int) -> Bool {
        arrived.add(1, ordering: .acquiringAndReleasing)
        var spins = 0
        while arrived.load(ordering: .acquiring) < 2 * (round + 1) {
            if abandoned.load(ordering: .acquiring) { return false }
            spins += 1
            if spins > 64 { sched_yield() }
        }
        if round > 0 { completedRounds.store(round, ordering: .relaxed) }
        return true
    }
}

/// Two dedicated threads run `body(round, side)` for every round, starting each round together. Returns
/// `false` (and lets the threads go, but for one stuck in `body`) when they are not done within `seconds`.
private func raceInPairs(
    rounds: Int, seconds: Double = 60, file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable (_ round: Int, _ side: Int) -> Void
) -> Bool {
    let barrier = RoundBarrier()
    let done = DispatchSemaphore(value: 0)
    for side in 0..<2 {
        Thread {
            for round in 0..<rounds {
                guard barrier.wait(round: round) else { break }
                body(round, side)
            }
            done.signal()
        }.start()
    }
    let deadline = DispatchTime.now() + seconds
    guard done.wait(timeout: deadline) == .success, done.wait(timeout: deadline) == .success else {
        barrier.abandon()
        XCTFail(
            "hung after round \(barrier.completedRounds.load(ordering: .relaxed)) of \(rounds)", file: file, line: line)
        return false
    }
    return true
}

/// Children created attached (the fresh-children stack), the parent a finishing child holds while it
/// credits it (`detachFromParent`, `orphan`), and the credit without the domain lock (`shared`, `claimShare`).
final class FreshChildLifetimeTests: XCTestCase {

    // MARK: A parent going away while its child finishes into it

    /// A paused child that finishes leaves its pause (resumingHandler) before it credits its parent. That
    /// handler may drop the last other reference to the parent: the finish, which holds the parent, still
    /// credits it, and the parent goes when the finish lets go of it.
    func test_a_resuming_handler_that_drops_the_last_reference_to_the_parent_during_the_finish_does_not_hang() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let weakParent = { [weak parent] in parent }
        let owner = ReleasableNode(parent)
        _ = consume parent
        child.pause()
        XCTAssertTrue(child.isPaused)
        child.resumingHandler = { owner.release() }
        let returned = returnsInTime { child.completedUnitCount = 1 }
        XCTAssertTrue(returned, "the finish waits for the parent's deinit, which waits for the finish")
        guard returned else { return }
        XCTAssertNil(weakParent())
        XCTAssertFalse(child.isPaused)
        XCTAssertTrue(child.isFinished)
    }

    /// The same one level up: a child's credit finishes a paused parent, whose resumingHandler drops the last
    /// reference to the grandparent while the parent is crediting it.
    func test_a_resuming_handler_that_drops_the_grandparent_while_a_credit_finishes_the_parent_does_not_hang() {
        let grandparent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let parent = ProgressNode(totalUnitCount: 1, parent: grandparent, pendingUnitCount: 5)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let owner = ReleasableNode(grandparent)
        _ = consume grandparent
        parent.pause()
        child.resume()  // the child stays running; only the parent is paused
        XCTAssertTrue(parent.isPaused)
        parent.resumingHandler = { owner.release() }
        let returned = returnsInTime { child.completedUnitCount = 1 }
        XCTAssertTrue(returned, "the parent's finish waits for the grandparent's deinit, which waits for it")
        guard returned else { return }
        XCTAssertTrue(parent.isFinished)
        XCTAssertFalse(parent.isPaused)
    }

    /// A parent released on one thread while its fresh child finishes on another: the child must not touch a
    /// freed parent (run under ThreadSanitizer / address checks), and is finished either way.
    func test_a_parent_released_while_its_fresh_child_finishes_is_never_used_after_it_is_freed() {
        let rounds = 20_000
        nonisolated(unsafe) var owners: [ReleasableNode] = []
        nonisolated(unsafe) var children: [ProgressNode] = []
        nonisolated(unsafe) var siblings: [ProgressNode?] = []
        for round in 0..<rounds {
            // Even rounds: the credit finishes the parent (its retain races with its deinit).
            let parent = ProgressNode.discreteProgress(totalUnitCount: round % 2 == 0 ? 1 : 3)
            siblings.append(round % 3 == 0 ? ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1) : nil)
            let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
            if round % 4 == 1 {
                // Shared: the parent holds a share of it (queued, or recorded by a path refresh).
                child.advance(by: 1)
                _ = parent.fractionCompleted
            }
            owners.append(ReleasableNode(parent))
            children.append(child)
        }
        let finished = raceInPairs(rounds: rounds) { round, side in
            if side == 0 { children[round].advance(by: round % 4 == 1 ? 1 : 2) } else { owners[round].release() }
        }
        guard finished else { return }
        for round in 0..<rounds {
            XCTAssertTrue(children[round].isFinished)
            XCTAssertNil(children[round].parent)
        }
    }

    // MARK: Shares and credits

    /// Two threads update one fresh child at once, each having just read the parent (so one of them may
    /// record the child in the parent's sums by a path refresh while the other finishes it and credits the
    /// parent without the domain lock). Exactly one of the share and the credit counts, so after each child
    /// finished the parent is at exactly `finished / total`.
    func test_a_fresh_child_updated_and_finished_at_once_is_credited_once_and_leaves_no_share() {
        let rounds = 20_000
        nonisolated(unsafe) var parents: [ProgressNode] = []
        nonisolated(unsafe) var children: [ProgressNode] = []
        for _ in 0..<rounds {
            let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
            parents.append(parent)
            children.append(ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1))
        }
        let finished = raceInPairs(rounds: rounds) { round, _ in
            _ = parents[round].fractionCompleted  // the last reader's update refreshes its path itself
            children[round].advance(by: 1)
        }
        guard finished else { return }
        var wrong = 0
        for round in 0..<rounds {
            XCTAssertTrue(children[round].isFinished)
            XCTAssertEqual(parents[round].completedUnitCount, 1)
            if parents[round].fractionCompleted != 0.5 || !parents[round].children.isEmpty { wrong += 1 }
        }
        XCTAssertEqual(wrong, 0, "parents not at exactly 1/2 with no children")
    }

    /// Many fresh children created, advanced halfway (polling the parent in between) and finished on two
    /// threads, with a third reading: the parent never shows more than the finished children plus the
    /// partial ones, and ends at exactly half.
    func test_fresh_children_finishing_on_several_threads_with_readers_end_exactly_and_never_overshoot() {
        let perThread = 10_000
        let threads = 2
        let parent = ProgressNode.discreteProgress(totalUnitCount: Int64(2 * threads * perThread))
        let done = Flag()
        let overshoot = Atomic<Int>(0)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            while !done.isSet {
                if parent.fractionCompleted > 0.5 { overshoot.add(1, ordering: .relaxed) }
            }
        }
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for index in 0..<perThread {
                let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
                child.advance(by: 1)
                if index % 2 == 0 { _ = parent.fractionCompleted }
                child.advance(by: 1)
            }
        }
        done.set()
        group.wait()
        XCTAssertEqual(overshoot.load(ordering: .relaxed), 0)
        XCTAssertEqual(parent.completedUnitCount, Int64(threads * perThread))
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        XCTAssertTrue(parent.children.isEmpty)
    }

    // MARK: Order, memory

    /// `children` lists fresh children and added ones in the order they were attached, with finished ones
    /// (whether on top of the stack or not) gone.
    func test_children_lists_fresh_and_added_children_in_attachment_order() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        let c1 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let c2 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let d = ProgressNode.discreteProgress(totalUnitCount: 1)
        parent.addChild(d, withPendingUnitCount: 1)
        let c3 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let c4 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let c5 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        c4.completedUnitCount = 1  // not on top: leaves through the table
        c5.completedUnitCount = 1  // on top: pops itself
        let e = ProgressNode.discreteProgress(totalUnitCount: 1)
        parent.addChild(e, withPendingUnitCount: 1)
        let c6 = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        XCTAssertEqual(parent.children.map(ObjectIdentifier.init), [c1, c2, d, c3, e, c6].map(ObjectIdentifier.init))
        XCTAssertEqual(parent.completedUnitCount, 2)
    }

    /// Finished fresh children are let go whatever the order they finish in, without any read of the parent.
    func test_fresh_children_finishing_in_any_order_are_released_without_a_read() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        var weak: [WeakNode] = []
        do {
            var children: [ProgressNode] = []
            for _ in 0..<8 { children.append(ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)) }
            weak = children.map { WeakNode(node: $0) }
            for index in [7, 3, 6, 0, 5, 4, 1, 2] { children[index].completedUnitCount = 1 }
        }
        XCTAssertEqual(weak.filter { $0.node != nil }.count, 0)
        XCTAssertEqual(parent.completedUnitCount, 8)
        XCTAssertTrue(parent.children.isEmpty)
        XCTAssertEqual(parent.fractionCompleted, 0.08)
    }

    /// Creating and finishing fresh children on one parent from several threads (the stack's push and the
    /// finishing child's pop contend), with a thread listing the children: every credit counts once and
    /// every child is let go.
    func test_fresh_children_created_and_finished_on_several_threads_are_credited_once_and_released() {
        let perThread = 20_000
        let threads = 3
        let parent = ProgressNode.discreteProgress(totalUnitCount: Int64(threads * perThread))
        let done = Flag()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            while !done.isSet { _ = parent.children.count }
        }
        // Checked once the lister stopped: an array of children it took just before a child finished
        // holds that child until the array goes.
        let watched = Mutex<[WeakNode]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var previous: ProgressNode?
            var weakOnes: [WeakNode] = []
            for index in 0..<perThread {
                let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
                if index % 100 == 0 { weakOnes.append(WeakNode(node: child)) }
                // Every other child finishes after the next one was created (not on top any more).
                if thread == 0, index % 2 == 0 {
                    previous?.completedUnitCount = 1
                    previous = child
                } else {
                    child.completedUnitCount = 1
                }
            }
            previous?.completedUnitCount = 1
            previous = nil
            watched.withLock { $0 += weakOnes }
        }
        done.set()
        group.wait()
        XCTAssertEqual(parent.completedUnitCount, Int64(threads * perThread))
        XCTAssertEqual(parent.fractionCompleted, 1)
        XCTAssertTrue(parent.children.isEmpty)
        XCTAssertEqual(watched.withLock { $0.filter { $0.node != nil }.count }, 0, "children still alive")
    }

    /// A parent released with fresh children on its stack orphans them: the ones nobody else holds go, the
    /// others lose their parent and can still finish.
    func test_a_parent_released_with_fresh_children_still_on_its_stack_orphans_them() {
        var parent: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 10)
        let weakParent = { [weak parent] in parent }
        let kept = ProgressNode(totalUnitCount: 1, parent: parent!, pendingUnitCount: 1)
        weak var dropped: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 1, parent: parent!, pendingUnitCount: 1)
            dropped = child
        }
        XCTAssertNotNil(dropped, "the parent holds its fresh child")
        parent = nil
        XCTAssertNil(weakParent())
        XCTAssertNil(dropped)
        XCTAssertNil(kept.parent)
        kept.completedUnitCount = 1
        XCTAssertTrue(kept.isFinished)
        XCTAssertEqual(kept.fractionCompleted, 1)
    }

    // MARK: Failure and control

    /// A fresh child that fails leaves the table, is counted, and keeps its share at failure.
    func test_fail_on_a_fresh_child_keeps_its_share_and_lets_it_go() {
        for readFirst in [false, true] {
            let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
            weak var weakChild: ProgressNode?
            do {
                let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 4)
                weakChild = child
                child.completedUnitCount = 1
                if readFirst { XCTAssertEqual(parent.fractionCompleted, 0.2) }
                child.fail(CocoaError(.fileReadUnknown))
                XCTAssertTrue(child.isFailed)
            }
            XCTAssertNil(weakChild, "readFirst: \(readFirst)")
            XCTAssertTrue(parent.children.isEmpty)
            XCTAssertEqual(parent.descendantOutcomes.failedCount, 1)
            XCTAssertEqual(parent.completedUnitCount, 0)
            XCTAssertEqual(parent.fractionCompleted, 0.2, "readFirst: \(readFirst)")
        }
    }

    /// `cancel()`, `fail` and `pause()` of a parent racing with the creation of fresh children: every child
    /// created ends in the parent's state (the push and the transition's settle are ordered).
    func test_fresh_children_created_while_the_parent_is_cancelled_failed_or_paused_inherit_its_state() {
        let perRound = 16
        for round in 0..<3_000 {
            let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
            nonisolated(unsafe) let created = UnsafeMutableBufferPointer<ProgressNode?>.allocate(capacity: perRound)
            created.initialize(repeating: nil)
            defer {
                created.deinitialize()
                created.deallocate()
            }
            let kind = round % 3
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    for slot in 0..<perRound {
                        created[slot] = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
                    }
                } else {
                    switch kind {
                    case 0: parent.cancel()
                    case 1: parent.fail(CocoaError(.fileReadUnknown))
                    default: parent.pause()
                    }
                }
            }
            for slot in 0..<perRound {
                let child = created[slot]!
                let ok = kind == 2 ? child.isPaused : child.isCancelled
                if !ok {
                    XCTFail("round \(round) kind \(kind): child \(slot) did not inherit the parent's state")
                    return
                }
            }
            if kind != 2, parent.descendantOutcomes.cancelledCount != perRound {
                XCTFail("round \(round) kind \(kind): \(parent.descendantOutcomes.cancelledCount) cancelled")
                return
            }
            if kind == 2 {
                parent.resume()
                XCTAssertFalse((0..<perRound).contains { created[$0]!.isPaused })
            }
        }
    }
}
