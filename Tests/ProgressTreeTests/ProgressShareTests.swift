import Dispatch
import ProgressTree
import Synchronization
import TestSupport
import XCTest

/// `ProgressShare` (Sources/ProgressTree/Core/ProgressShare.swift): a share of a node's units handed to a
/// function, started once or dropped. Each test checks exact values, most against a plain child in the
/// same place; no sleeps (threads are joined, tasks awaited).
final class ProgressShareTests: XCTestCase {
    // MARK: Outstanding, dropped, started

    func test_an_outstanding_share_counts_as_a_child_at_zero() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 4)
        child.advance()
        let share = root.share(pendingUnitCount: 4)
        XCTAssertEqual(root.fractionCompleted, 0.2)  // 4 × 0.5 of 10; the share's 4 units count 0
        XCTAssertEqual(root.completedUnitCount, 0)
        XCTAssertEqual(root.children.count, 1)  // a share is not a child
        root.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, 0.4)

        // The same tree with a plain child at 0 in the share's place reads the same.
        let reference = ProgressNode(totalUnitCount: 10)
        ProgressNode(totalUnitCount: 2, parent: reference, pendingUnitCount: 4).advance()
        let atZero = ProgressNode(totalUnitCount: 7, parent: reference, pendingUnitCount: 4)
        reference.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, reference.fractionCompleted)
        XCTAssertEqual(root.completedUnitCount, reference.completedUnitCount)

        _ = consume share  // dropped: its 4 units are done
        atZero.completedUnitCount = 7  // finished: its 4 units are credited
        XCTAssertEqual(root.completedUnitCount, 6)
        XCTAssertEqual(root.fractionCompleted, 0.8)
        XCTAssertEqual(root.completedUnitCount, reference.completedUnitCount)
        XCTAssertEqual(root.fractionCompleted, reference.fractionCompleted)
        assertInvariants(root, reference)
    }

    func test_a_share_dropped_unstarted_credits_its_units_and_can_finish_its_node_and_ancestors() {
        let album = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 3, parent: album, pendingUnitCount: 1)
        photo.advance(by: 1)
        do {
            let share = photo.share(pendingUnitCount: 2)
            XCTAssertEqual(album.fractionCompleted, 1.0 / 6.0)
            skipPhoto(progress: share)
        }
        XCTAssertEqual(photo.completedUnitCount, 3)
        XCTAssertTrue(photo.isFinished)
        XCTAssertEqual(album.completedUnitCount, 1)  // the photo finished and was credited in turn
        XCTAssertEqual(album.fractionCompleted, 0.5)
        XCTAssertEqual(album.children.count, 0)
        assertInvariants(album)
    }

    func test_a_started_share_counts_weighted_and_credits_its_units_when_its_node_finishes() {
        let root = ProgressNode(totalUnitCount: 4)
        let node = root.share(pendingUnitCount: 2).start(totalUnitCount: 10)
        XCTAssertEqual(node.totalUnitCount, 10)
        XCTAssertEqual(root.children.map { ObjectIdentifier($0) }, [ObjectIdentifier(node)])
        node.advance(by: 5)
        XCTAssertEqual(root.fractionCompleted, 0.25)  // 2 × 0.5 of 4
        XCTAssertEqual(root.completedUnitCount, 0)
        node.advance(by: 5)
        XCTAssertEqual(root.completedUnitCount, 2)
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertEqual(root.children.count, 0)  // finished children are let go
        node.completedUnitCount = 0  // too late, as for any finished child
        XCTAssertEqual(root.completedUnitCount, 2)
        assertInvariants(root)
    }

    /// Unlike `ProgressManager`, which completes itself when it goes away: a dropped node credits nothing.
    func test_a_started_node_left_unfinished_credits_nothing() {
        let root = ProgressNode(totalUnitCount: 4)
        do {
            let node = root.share(pendingUnitCount: 2).start(totalUnitCount: 10)
            node.advance(by: 5)
        }
        XCTAssertEqual(root.completedUnitCount, 0)
        XCTAssertEqual(root.fractionCompleted, 0.25)  // the parent keeps its unfinished child
        assertInvariants(root)
    }

    func test_a_function_taking_an_optional_share_reports_into_the_callers_tree_or_to_no_one() {
        let album = ProgressNode(totalUnitCount: 3)
        XCTAssertEqual(importPhoto(progress: album.share(pendingUnitCount: 1), steps: 2), 2)
        XCTAssertEqual(album.completedUnitCount, 1)
        XCTAssertEqual(importPhoto(progress: nil, steps: 2), 2)  // on a node of its own
        XCTAssertEqual(album.completedUnitCount, 1)
        XCTAssertEqual(importPhoto(progress: album.share(pendingUnitCount: 2), steps: 0), 0)  // nothing to do
        XCTAssertEqual(album.completedUnitCount, 3)
        XCTAssertTrue(album.isFinished)
    }

    // MARK: Counts: zero, more than remaining, a finished node

    func test_a_share_of_zero_units_weighs_nothing_started_or_dropped() {
        let root = ProgressNode(totalUnitCount: 2)
        let node = root.share(pendingUnitCount: 0).start(totalUnitCount: 4)
        node.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, 0)
        node.advance(by: 2)
        XCTAssertEqual(root.completedUnitCount, 0)
        _ = root.share(pendingUnitCount: 0)
        XCTAssertEqual(root.completedUnitCount, 0)
        XCTAssertEqual(root.fractionCompleted, 0)
        assertInvariants(root)
    }

    /// As `addChild` does, nothing checks that the units are free: the fraction clamps at 1, the counts are
    /// kept as credited.
    func test_a_share_of_more_units_than_remain_clamps_the_fraction_as_an_added_child_does() {
        let root = ProgressNode(totalUnitCount: 2)
        root.advance()
        let node = root.share(pendingUnitCount: 3).start(totalUnitCount: 2)
        node.advance()
        XCTAssertEqual(root.fractionCompleted, 1.0)  // (1 + 3 × 0.5) / 2, clamped
        XCTAssertFalse(root.isFinished)
        _ = root.share(pendingUnitCount: 3)
        XCTAssertEqual(root.completedUnitCount, 4)
        XCTAssertTrue(root.isFinished)
        node.advance()
        XCTAssertEqual(root.completedUnitCount, 7)
        XCTAssertEqual(root.fractionCompleted, 1.0)
        assertInvariants(root)
    }

    func test_a_share_of_a_finished_node_counts_on_top_as_a_child_added_to_it_would() {
        let root = ProgressNode(totalUnitCount: 2)
        root.advance(by: 2)
        let node = root.share(pendingUnitCount: 1).start(totalUnitCount: 1)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1.0)
        XCTAssertEqual(root.children.count, 1)
        node.advance()
        XCTAssertEqual(root.completedUnitCount, 3)
        _ = root.share(pendingUnitCount: 1)
        XCTAssertEqual(root.completedUnitCount, 4)
        XCTAssertEqual(root.fractionCompleted, 1.0)
        assertInvariants(root)
    }

    // MARK: Beside explicit and implicit composition

    func test_shares_weigh_beside_children_made_with_the_parent_initializer_and_addChild() {
        let root = ProgressNode(totalUnitCount: 10)
        let share = root.share(pendingUnitCount: 5)  // made first, started last
        let made = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 2)
        let added = ProgressNode.discreteProgress(totalUnitCount: 4)
        added.advance(by: 2)
        root.addChild(added, withPendingUnitCount: 3)
        made.advance()
        XCTAssertEqual(root.fractionCompleted, 0.25)  // (2 × 0.5 + 3 × 0.5) / 10
        let started = share.start(totalUnitCount: 8)
        started.advance(by: 4)
        XCTAssertEqual(root.fractionCompleted, 0.5)  // + 5 × 0.5
        // Listed in the order the children attached: a share attaches when it is started.
        XCTAssertEqual(root.children.map { ObjectIdentifier($0) }, [made, added, started].map { ObjectIdentifier($0) })
        made.advance()
        added.advance(by: 2)
        started.advance(by: 4)
        XCTAssertEqual(root.completedUnitCount, 10)
        XCTAssertTrue(root.isFinished)
        assertInvariants(root)
    }

    /// Making or starting a share neither claims a current node's pending count nor attaches to the
    /// current node: the first node made by `ProgressNode(totalUnitCount:)` in the scope still takes it.
    func test_a_share_beside_a_thread_local_scope_leaves_the_scope_to_the_first_implicit_child() {
        let export = ProgressNode(totalUnitCount: 10)
        let other = ProgressNode(totalUnitCount: 10)
        let implicit = export.performAsCurrent(withPendingUnitCount: 4) { () -> ProgressNode in
            let started = export.share(pendingUnitCount: 3).start(totalUnitCount: 1)
            let elsewhere = other.share(pendingUnitCount: 5).start(totalUnitCount: 1)
            let implicit = ProgressNode(totalUnitCount: 2)  // attaches to `export` for 4
            implicit.advance()
            XCTAssertEqual(export.fractionCompleted, 0.2)  // 4 × 0.5 of 10
            started.advance()
            elsewhere.advance()
            return implicit
        }
        XCTAssertEqual(export.completedUnitCount, 3)  // the scope was claimed: no credit at its end
        XCTAssertEqual(export.fractionCompleted, 0.5)
        XCTAssertEqual(other.completedUnitCount, 5)
        implicit.advance()
        XCTAssertEqual(export.completedUnitCount, 7)

        // A share dropped in a scope that nothing claimed: both credits.
        export.performAsCurrent(withPendingUnitCount: 2) { skipPhoto(progress: export.share(pendingUnitCount: 1)) }
        XCTAssertEqual(export.completedUnitCount, 10)
        XCTAssertTrue(export.isFinished)
        assertInvariants(export, other)
    }

    func test_a_share_beside_a_task_local_scope_leaves_the_scope_to_the_first_implicit_child() async {
        let backup = ProgressNode(totalUnitCount: 10)
        await backup.withCurrent(pendingUnitCount: 4) {
            await upload(files: 3, progress: backup.share(pendingUnitCount: 6))
            XCTAssertEqual(backup.completedUnitCount, 6)
            let implicit = ProgressNode(totalUnitCount: 1)  // the scope's 4 units are still unclaimed
            XCTAssertTrue(backup.children.contains { $0 === implicit })
            implicit.advance()
        }
        XCTAssertEqual(backup.completedUnitCount, 10)
        XCTAssertTrue(backup.isFinished)
        assertInvariants(backup)
    }

    // MARK: Cancelling, pausing, failing

    func test_a_share_of_a_cancelled_node_starts_cancelled_as_an_attached_child_would() {
        let root = ProgressNode(totalUnitCount: 2)
        root.cancel()
        let started = root.share(pendingUnitCount: 1).start(totalUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        XCTAssertTrue(started.isCancelled)
        XCTAssertThrowsError(try started.checkCancellation())
        XCTAssertTrue(child.isCancelled)
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 2)
    }

    func test_a_node_cancelled_while_a_share_is_outstanding_starts_the_share_cancelled() {
        let root = ProgressNode(totalUnitCount: 2)
        let share = root.share(pendingUnitCount: 1)
        let handled = Mutex(0)
        root.cancel()
        let started = share.start(totalUnitCount: 1)
        XCTAssertTrue(started.isCancelled)
        started.cancellationHandler = { handled.withLock { $0 += 1 } }  // runs at once: already cancelled
        XCTAssertEqual(handled.withLock { $0 }, 1)
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 1)
        XCTAssertEqual(root.fractionCompleted, 0)  // a cancelled child is not done work
    }

    func test_a_share_of_a_cancelled_node_dropped_unstarted_credits_as_a_finished_child_would() {
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let share = root.share(pendingUnitCount: 1)
        root.cancel()
        child.advance()  // a cancelled child that finishes is credited
        _ = consume share
        XCTAssertEqual(root.completedUnitCount, 2)
        XCTAssertTrue(root.isCancelled)
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 1)  // the child; the share never was one
    }

    func test_a_share_of_a_paused_node_starts_paused_and_resumes_with_it() {
        let root = ProgressNode(totalUnitCount: 3)
        let before = root.share(pendingUnitCount: 1)
        root.pause()
        let during = root.share(pendingUnitCount: 1)
        let startedBefore = before.start(totalUnitCount: 1)
        let startedDuring = during.start(totalUnitCount: 1)
        XCTAssertTrue(startedBefore.isPaused)
        XCTAssertTrue(startedDuring.isPaused)
        root.resume()
        XCTAssertFalse(startedBefore.isPaused)
        XCTAssertFalse(startedDuring.isPaused)
        let startedAfter = root.share(pendingUnitCount: 1).start(totalUnitCount: 1)
        XCTAssertFalse(startedAfter.isPaused)
    }

    func test_a_share_of_a_failed_node_starts_cancelled_not_failed() {
        struct Broken: Error {}
        let root = ProgressNode(totalUnitCount: 2)
        let share = root.share(pendingUnitCount: 1)
        root.fail(Broken())
        let started = share.start(totalUnitCount: 1)
        XCTAssertTrue(started.isCancelled)
        XCTAssertFalse(started.isFailed)
        XCTAssertEqual(root.descendantOutcomes.cancelledByFailureCount, 1)
    }

    // MARK: Across threads and tasks

    /// `ProgressShare: Sendable` is checked by the compiler (no `@unchecked`): this generic requirement, and
    /// the actor below, which hands a share out of its isolation, compile only because it holds.
    func test_a_share_is_sendable_as_the_compiler_checks_it() {
        func requireSendable<T: Sendable & ~Copyable>(_: T.Type) -> Bool { true }
        XCTAssertTrue(requireSendable(ProgressShare.self))
        XCTAssertEqual(MemoryLayout<ProgressShare>.size, 16)  // a node reference and a count
    }

    func test_a_share_sent_to_a_task_through_an_actor_is_started_there() async {
        let album = ProgressNode(totalUnitCount: 4)
        let inbox = ShareInbox()
        await inbox.put(album.share(pendingUnitCount: 3))
        XCTAssertEqual(album.completedUnitCount, 0)
        let task = Task.detached { () -> Int64 in
            guard let share = await inbox.take() else { return -1 }
            let node = share.start(totalUnitCount: 2)
            node.advance()
            let halfway = album.fractionCompleted
            node.advance()
            return Int64(halfway * 8)  // 3 × 0.5 of 4 = 0.375
        }
        let halfwayInEighths = await task.value
        XCTAssertEqual(halfwayInEighths, 3)
        XCTAssertEqual(album.completedUnitCount, 3)
        assertInvariants(album)
    }

    func test_a_share_dropped_on_another_thread_credits_its_units_there() {
        let root = ProgressNode(totalUnitCount: 5)
        let cell = ShareCell(root.share(pendingUnitCount: 5))
        let credited = Mutex<Int64>(-1)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            do { _ = cell.take() }  // the share's end, on this thread
            credited.withLock { $0 = root.completedUnitCount }
        }
        group.wait()
        XCTAssertEqual(credited.withLock { $0 }, 5)
        XCTAssertTrue(root.isFinished)
    }

    /// Shares made on one thread, each started (finished at once or in steps) or dropped on another, and
    /// shares made and ended on each of those threads, while a reader reads the root: the root ends at
    /// exactly the sum of the shares' units.
    func test_many_shares_started_or_dropped_on_many_threads_sum_exactly() {
        let threads = 8
        let perThread = 1_500
        // Handed over: units 1, 2, 3 by turns, 1_500 / 3 × 6 = 3_000 a thread; made there: 1 each, 1_500.
        let total = Int64(threads * perThread / 3 * 6 + threads * perThread)
        let root = ProgressNode(totalUnitCount: total)
        let cells = (0..<threads * perThread).map { index in
            ShareCell(root.share(pendingUnitCount: Int64(index % 3 + 1)))
        }
        XCTAssertEqual(root.completedUnitCount, 0)
        XCTAssertEqual(root.fractionCompleted, 0)
        let done = Flag()
        let readerGroup = DispatchGroup()
        let outOfRange = Mutex(0)
        DispatchQueue.global().async(group: readerGroup) {
            while !done.isSet {
                let fraction = root.fractionCompleted
                if !(0...1).contains(fraction) { outOfRange.withLock { $0 += 1 } }
            }
        }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in stride(from: thread, to: cells.count, by: threads) {
                let own = root.share(pendingUnitCount: 1)
                if index.isMultiple(of: 2) { own.start(totalUnitCount: 1).advance() }
                guard let share = cells[index].take() else { continue }
                switch index % 4 {
                case 0:
                    _ = consume share
                case 1:
                    share.start(totalUnitCount: 1).advance()
                case 2:
                    let node = share.start(totalUnitCount: 3)
                    for _ in 0..<3 { node.advance() }
                default:
                    let node = share.start(totalUnitCount: 2)
                    _ = root.fractionCompleted
                    node.completedUnitCount = 2
                }
            }
        }
        done.set()
        readerGroup.wait()
        XCTAssertEqual(outOfRange.withLock { $0 }, 0)
        XCTAssertEqual(root.completedUnitCount, total)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1.0)
        XCTAssertEqual(root.children.count, 0)
        assertInvariants(root)
    }

    /// A task's closure cannot take a non-copyable value: each child task makes its share, as the guide
    /// shows, and the sums are exact.
    func test_shares_made_in_child_tasks_sum_exactly() async {
        let tasks = 64
        let root = ProgressNode(totalUnitCount: Int64(tasks * 2))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<tasks {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        skipPhoto(progress: root.share(pendingUnitCount: 2))
                    } else {
                        await upload(files: index % 5 + 1, progress: root.share(pendingUnitCount: 2))
                    }
                }
            }
        }
        XCTAssertEqual(root.completedUnitCount, Int64(tasks * 2))
        XCTAssertTrue(root.isFinished)
        assertInvariants(root)
    }
}

// MARK: Functions that take a share, and ways to hand one over

/// Takes a share and does nothing with it: the share's end credits its units.
private func skipPhoto(progress: consuming ProgressShare) {}

/// Reports `steps` steps for the caller's share, or on a node of its own; returns the steps it counted.
private func importPhoto(progress: consuming ProgressShare?, steps: Int64) -> Int64 {
    guard steps > 0 else { return 0 }  // the share is dropped: its units count as done
    let node = progress?.start(totalUnitCount: steps) ?? .discreteProgress(totalUnitCount: steps)
    for _ in 0..<steps { node.advance() }
    return node.completedUnitCount
}

private func upload(files: Int, progress: consuming ProgressShare) async {
    let node = progress.start(totalUnitCount: Int64(files))
    for _ in 0..<files {
        await Task.yield()
        node.advance()
    }
}

/// Hands a share from one task to another: in through a parameter, out through a result, both across the
/// actor's isolation.
private actor ShareInbox {
    private var share: ProgressShare?

    func put(_ share: consuming ProgressShare) {
        self.share = consume share
    }

    func take() -> ProgressShare? {
        share.take()
    }
}

/// Holds a share until one thread takes it.
private final class ShareCell: Sendable {
    private let slot: Mutex<ProgressShare?>

    init(_ share: consuming ProgressShare) {
        slot = Mutex(consume share)
    }

    func take() -> ProgressShare? {
        slot.withLock { $0.take() }
    }
}
