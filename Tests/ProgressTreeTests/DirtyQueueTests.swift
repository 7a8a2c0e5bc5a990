import XCTest
import Synchronization

@testable import ProgressTree

/// The dirty queue of a node is an intrusive stack of its changed children, and its child table compacts as
/// children finish (see `ChildTable`, `ChildSums`). These tests cover what that adds: children that finish
/// while queued leave the queue and the sums, slots reused after the table empties are new children, and
/// compaction of the table keeps the queued children queued.
final class DirtyQueueTests: XCTestCase {
    /// 100 children, all queued; the first 60 finish, which compacts the table (holes outnumber the live
    /// children) while the other 40 sit in the queue at slots that move. Each of the 40 must still count.
    func test_compaction_keeps_queued_children_queued() {
        let root = ProgressNode(totalUnitCount: 1_000)
        let children = (0..<100).map { _ in ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 10) }
        XCTAssertEqual(root.fractionCompleted, 0)
        for child in children { child.advance() }  // all queued, a quarter each
        for child in children[..<60] { child.advance(by: 3) }  // finished: credited, removed, compacted
        XCTAssertEqual(root.completedUnitCount, 600)
        XCTAssertLessThan(root.state.withLock { $0.children.slots.count }, 60, "the table was compacted")
        // 600 units of finished children, and 40 × 10 × 1/4 of the rest.
        XCTAssertEqual(root.fractionCompleted, 0.7, accuracy: 1e-12)
        // And they stay tracked after the compaction: one more unit each.
        for child in children[60...] { child.advance() }
        XCTAssertEqual(root.fractionCompleted, 0.8, accuracy: 1e-12)
        for child in children[60...] { child.advance(by: 2) }
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1)
    }

    /// The same with the queue order scrambled: the children are queued in reverse and finished in a
    /// stride, so the compaction remaps entries that are not in slot order.
    func test_compaction_remaps_queue_entries_in_any_order() {
        let root = ProgressNode(totalUnitCount: 640)
        let children = (0..<64).map { _ in ProgressNode(totalUnitCount: 8, parent: root, pendingUnitCount: 10) }
        XCTAssertEqual(root.fractionCompleted, 0)
        for child in children.reversed() { child.advance() }
        let finishing = Set(stride(from: 0, to: 64, by: 4)).union(stride(from: 1, to: 64, by: 4))
            .union(stride(from: 2, to: 64, by: 8))
        for index in finishing.sorted() { children[index].advance(by: 7) }
        let remaining = 64 - finishing.count
        XCTAssertLessThan(remaining * 2, 64)
        XCTAssertLessThan(root.state.withLock { $0.children.slots.count }, 64, "the table was compacted")
        let expected = (Double(finishing.count) * 10 + Double(remaining) * 10 / 8) / 640
        XCTAssertEqual(root.fractionCompleted, expected, accuracy: 1e-12)
        for index in 0..<64 where !finishing.contains(index) { children[index].advance(by: 3) }
        XCTAssertEqual(
            root.fractionCompleted, (Double(finishing.count) * 10 + Double(remaining) * 10 / 2) / 640, accuracy: 1e-12)
    }

    /// When the last child leaves, the table starts again at slot 0. A new child there must not be taken
    /// for the old one (or the old one's queue entry for the new child).
    func test_a_slot_reused_after_the_table_emptied_is_a_new_child() {
        let root = ProgressNode(totalUnitCount: 2)
        let first = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(root.fractionCompleted, 0)
        first.advance()  // queued at slot 0
        first.advance()  // finished: the table empties
        XCTAssertEqual(root.queuedChildCount, 0)
        let second = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(root.children.map { ObjectIdentifier($0) }, [ObjectIdentifier(second)])  // into the table
        XCTAssertEqual(second.slotInParent, 0)
        second.advance()
        XCTAssertEqual(root.fractionCompleted, 1.25 / 2)
        first.completedUnitCount = 0  // a finished child no longer moves its parent
        XCTAssertEqual(root.fractionCompleted, 1.25 / 2)
    }

    /// Children that finish while queued are drained at once when no read runs, so the queue (which holds
    /// them until drained) stays proportional to the live children even when nobody reads.
    func test_the_queue_stays_bounded_without_reads() {
        let root = ProgressNode(totalUnitCount: 20_001)
        let longLived = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(root.fractionCompleted, 0)
        for _ in 0..<10_000 {
            let a = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            let b = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            a.advance()
            b.advance()
            a.advance()  // finishes while not the last queue entry
            b.advance()
            XCTAssertLessThanOrEqual(root.queuedChildCount, 32)
        }
        longLived.advance()
        XCTAssertEqual(root.completedUnitCount, 20_000)
        XCTAssertEqual(root.fractionCompleted, 20_000.5 / 20_001)
    }

    /// A contribution's entry in the parent's sums never moves (it holds no child's address): a child that
    /// leaves makes a hole, and the next new contributor takes one. Over 16 entries, so that the sums are
    /// kept by differences and the holes are on the free list. The values stay right, and the entries stay
    /// as many as the most children that contributed at once.
    func test_contribution_entries_are_reused_after_children_leave() {
        let root = ProgressNode(totalUnitCount: 1_000)
        var children = (0..<40).map { _ in ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1) }
        for child in children { child.advance() }  // 1 of 4 each
        XCTAssertEqual(root.fractionCompleted, 10 / 1_000)
        var credited = 0
        for round in 0..<5 {
            // Every third child finishes, from the middle out: holes in the entries, not at the end.
            for index in stride(from: 1 + round % 3, to: children.count, by: 3).reversed() {
                children[index].advance(by: 3)
                credited += 1
            }
            children.removeAll { $0.isFinished }
            let partial = Double(children.count) / 4
            XCTAssertEqual(root.fractionCompleted, (Double(credited) + partial) / 1_000, accuracy: 1e-12)
            root.checkInvariants()
            while children.count < 40 {
                let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
                child.advance()
                children.append(child)
            }
            XCTAssertEqual(root.fractionCompleted, (Double(credited) + 10) / 1_000, accuracy: 1e-12)
            root.checkInvariants()
            #if PROGRESSTREE_INTERNAL_CHECKS
            let entries = root.domain.withRepresentativeLock { root.domainAndPart.loadPart()!.checkedState($0) }
                .contributions
            XCTAssertEqual(entries.count, 40, "holes are reused before the entries grow")
            XCTAssertEqual(entries.count(where: { $0 == nil }), 0)
            #endif
        }
        for child in children { child.advance(by: 3) }
        XCTAssertEqual(root.completedUnitCount, Int64(credited + 40))
        XCTAssertEqual(root.fractionCompleted, Double(credited + 40) / 1_000)
        root.checkInvariants()
    }

    /// A read after many updates of the same chain allocates its buffers once and then reuses them; the
    /// values stay right across reads of different depths (the buffers are shared by every read).
    func test_reads_of_different_depths_share_the_refresh_buffers() {
        let root = ProgressNode(totalUnitCount: 1)
        var leaf = root
        var chain: [ProgressNode] = [root]
        for _ in 0..<50 {
            leaf = ProgressNode(totalUnitCount: 1, parent: leaf, pendingUnitCount: 1)
            chain.append(leaf)
        }
        let deep = ProgressNode(totalUnitCount: 100, parent: leaf, pendingUnitCount: 1)
        for step in 1...99 {
            deep.advance()
            if step % 2 == 0 { XCTAssertEqual(chain[25].fractionCompleted, Double(step) / 100, accuracy: 1e-12) }
            XCTAssertEqual(root.fractionCompleted, Double(step) / 100, accuracy: 1e-12)
        }
        deep.advance()
        XCTAssertTrue(root.isFinished)
    }
}

/// `init(totalUnitCount:parent:pendingUnitCount:)` and the implicit initializers attach a node nobody has
/// seen yet without going through `addChild` (no claim under the child's lock, no cycle walk, no walk up
/// through the child). The node must end up exactly as `addChild` would leave it.
final class FreshChildTests: XCTestCase {
    func test_a_fresh_child_is_attached_and_queued_at_its_first_update() {
        let root = ProgressNode(totalUnitCount: 10)
        XCTAssertEqual(root.fractionCompleted, 0)
        let fresh = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 5)
        let added = ProgressNode.discreteProgress(totalUnitCount: 4)
        root.addChild(added, withPendingUnitCount: 5)
        for node in [fresh, added] {
            XCTAssertTrue(node.parent === root)
            XCTAssertNotEqual(node.flags.load(ordering: .relaxed) & NodeFlags.attached, 0)
        }
        // An added child may bring progress: it is queued at once. A fresh one has none until its first update.
        XCTAssertNotEqual(added.flags.load(ordering: .relaxed) & NodeFlags.queued, 0)
        XCTAssertEqual(fresh.flags.load(ordering: .relaxed) & NodeFlags.queued, 0)
        XCTAssertNotEqual(root.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        XCTAssertEqual(root.queuedChildCount, 1)
        XCTAssertEqual(root.children.map(ObjectIdentifier.init), [fresh, added].map(ObjectIdentifier.init))
        fresh.advance()
        XCTAssertNotEqual(fresh.flags.load(ordering: .relaxed) & NodeFlags.queued, 0)
        XCTAssertEqual(root.queuedChildCount, 2)
        added.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, (1.25 + 2.5) / 10)
        fresh.advance(by: 3)
        XCTAssertNil(fresh.parent)
        XCTAssertEqual(root.completedUnitCount, 5)
        XCTAssertEqual(root.fractionCompleted, (5 + 2.5) / 10)
    }

    /// A fresh child of a cancelled or paused parent is cancelled or paused, as with `addChild`.
    func test_a_fresh_child_inherits_cancellation_and_pausing() {
        let cancelled = ProgressNode(totalUnitCount: 1)
        cancelled.cancel()
        XCTAssertTrue(ProgressNode(totalUnitCount: 1, parent: cancelled, pendingUnitCount: 1).isCancelled)
        let paused = ProgressNode(totalUnitCount: 1)
        paused.pause()
        let child = ProgressNode(totalUnitCount: 1, parent: paused, pendingUnitCount: 1)
        XCTAssertTrue(child.isPaused)
        paused.resume()
        XCTAssertFalse(child.isPaused)
    }

    /// A fresh child can itself be a parent at once, and a finished one credits its parent at once.
    func test_fresh_children_compose_and_a_fresh_child_of_total_zero_finishes_on_its_first_unit() {
        let root = ProgressNode(totalUnitCount: 2)
        let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 2)
        let leaf = ProgressNode(totalUnitCount: 0, parent: middle, pendingUnitCount: 1)
        XCTAssertEqual(root.fractionCompleted, 0)
        leaf.advance()  // total 0, completed 1: finished
        XCTAssertTrue(middle.isFinished)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1)
    }

    /// The implicit initializers take the same path when they attach.
    func test_implicit_initializers_attach_fresh_children() {
        let root = ProgressNode(totalUnitCount: 10)
        root.becomeCurrent(withPendingUnitCount: 4)
        let first = ProgressNode(totalUnitCount: 2)
        let second = ProgressNode(totalUnitCount: 2)  // the pending count was claimed: a root
        root.resignCurrent()
        XCTAssertTrue(first.parent === root)
        XCTAssertNil(second.parent)
        let withUserInfo = root.withCurrent(pendingUnitCount: 6) {
            ProgressNode(parent: root, userInfo: [.fileTotalCountKey: 3])
        }
        XCTAssertTrue(withUserInfo.parent === root)
        XCTAssertEqual(withUserInfo.userInfo[.fileTotalCountKey] as? Int, 3)
        first.advance()
        XCTAssertEqual(root.fractionCompleted, 0.2)
        withUserInfo.totalUnitCount = 1
        withUserInfo.completedUnitCount = 1
        XCTAssertEqual(root.completedUnitCount, 6)
        XCTAssertEqual(root.fractionCompleted, 0.8)
    }
}

/// Multi-threaded tests of the dirty queue and the fresh-child path (run under ThreadSanitizer by `.ci/run`).
final class DirtyQueueConcurrencyTests: XCTestCase {
    /// Many threads create fresh children of one parent and finish them at once, while reading.
    func test_concurrent_fresh_children_of_one_parent_all_count() {
        let root = ProgressNode(totalUnitCount: 8_000)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for index in 0..<1_000 {
                let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
                child.advance()
                if index % 7 == 0 { _ = root.fractionCompleted }
                child.advance()
            }
        }
        XCTAssertEqual(root.completedUnitCount, 8_000)
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1)
        XCTAssertTrue(root.children.isEmpty)
    }

    /// Writers on many children of one parent, finishing some (compactions while entries are queued)
    /// while a reader refreshes: every unit counts once.
    func test_updates_finishes_and_reads_of_many_children_at_once() {
        let root = ProgressNode(totalUnitCount: 4 * 200)
        let flags = ReaderFlags()
        let reader = Thread {
            var last = 0.0
            while !flags.done.load(ordering: .relaxed) {
                let fraction = root.fractionCompleted
                if fraction < last - 1e-9 { flags.wentBack.store(true, ordering: .relaxed) }
                last = fraction
            }
            flags.finished.signal()
        }
        reader.start()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let children = (0..<200).map { _ in ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1) }
            for step in 0..<4 {
                for child in step % 2 == 0 ? children : children.reversed() { child.advance() }
            }
        }
        flags.done.store(true, ordering: .relaxed)
        XCTAssertEqual(flags.finished.wait(timeout: .now() + 60), .success)
        XCTAssertFalse(flags.wentBack.load(ordering: .relaxed), "a read saw the root's fraction go back")
        XCTAssertEqual(root.completedUnitCount, 800)
        XCTAssertEqual(root.fractionCompleted, 1)
    }

    /// Children that finish while a read takes them from the queue: whichever comes first, a retired child
    /// is never left `refreshing` (a read that found it retired by the time it cleared `dirty` refreshes no
    /// more of it), and the core's invariants hold once the threads are joined.
    func test_children_retiring_while_a_read_takes_them_from_the_queue_are_not_left_refreshing() {
        for _ in 0..<10 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 4 * 500)
            let children = (0..<4 * 500).map { _ in ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1) }
            let flags = ReaderFlags()
            let reader = Thread {
                while !flags.done.load(ordering: .relaxed) { _ = root.fractionCompleted }
                flags.finished.signal()
            }
            reader.start()
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                // The first unit queues the child (shared), the second finishes it: retired into the queue when
                // the reader holds the lock, maybe while that read takes it from the queue.
                for child in children[thread * 500..<(thread + 1) * 500] {
                    child.advance()
                    child.advance()
                }
            }
            flags.done.store(true, ordering: .relaxed)
            XCTAssertEqual(flags.finished.wait(timeout: .now() + 60), .success)
            let refreshing = children.filter { $0.flags.load(ordering: .relaxed) & NodeFlags.refreshing != 0 }
            XCTAssertEqual(refreshing.count, 0, "finished children left refreshing")
            XCTAssertEqual(root.fractionCompleted, 1)
            for child in children.prefix(50) { assertInvariants(child) }
        }
    }
}

extension DirtyQueueConcurrencyTests {
    /// Two leaves 6 levels below the root, on two threads, each update followed by a read of the root or of
    /// a middle node, while a third thread polls the root: every update counts once (no update lost by a
    /// read that takes a queue while a writer is marking the path) and the final read is exact.
    func test_polling_readers_and_writers_on_a_deep_tree_lose_no_update() {
        let root = ProgressNode(totalUnitCount: 2)
        var left = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        var right = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let middles = [left, right]
        for _ in 0..<5 {
            left = ProgressNode(totalUnitCount: 1, parent: left, pendingUnitCount: 1)
            right = ProgressNode(totalUnitCount: 1, parent: right, pendingUnitCount: 1)
        }
        let leaves = [
            ProgressNode(totalUnitCount: 20_001, parent: left, pendingUnitCount: 1),
            ProgressNode(totalUnitCount: 20_001, parent: right, pendingUnitCount: 1),
        ]
        let flags = ReaderFlags()
        let poller = Thread {
            while !flags.done.load(ordering: .relaxed) { _ = root.fractionCompleted }
            flags.finished.signal()
        }
        poller.start()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for step in 0..<20_000 {
                leaves[index].advance()
                _ = step % 2 == 0 ? root.fractionCompleted : middles[index].fractionCompleted
            }
        }
        flags.done.store(true, ordering: .relaxed)
        XCTAssertEqual(flags.finished.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(root.fractionCompleted, 20_000.0 / 20_001, accuracy: 1e-12)
        XCTAssertEqual(middles[0].fractionCompleted, 20_000.0 / 20_001, accuracy: 1e-12)
        leaves[0].advance()
        leaves[1].advance()
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1)
    }
}

private final class ReaderFlags: Sendable {
    let done = Atomic<Bool>(false)
    let wentBack = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
}
