import XCTest

@testable import ProgressTree

/// The dirty queue of a node holds (slot, id) pairs into its child table, not references to the children
/// (see `ChildTable`). These tests cover what that adds: entries of finished children are skipped or
/// dropped, slots reused after the table empties are not confused with old entries, and compaction of the
/// table keeps the queued children queued.
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
        XCTAssertEqual(root.state.withLock { $0.children.queuedCount }, 0)
        let second = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(second.slotInParent.load(ordering: .relaxed), 0)
        second.advance()
        XCTAssertEqual(root.fractionCompleted, 1.25 / 2)
        first.completedUnitCount = 0  // a finished child no longer moves its parent
        XCTAssertEqual(root.fractionCompleted, 1.25 / 2)
    }

    /// Children that finish while queued, but not as the last entry, leave stale entries; the queue drops
    /// them as it grows, so it stays proportional to the live children even when nobody reads.
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
            XCTAssertLessThanOrEqual(root.state.withLock { $0.children.queuedCount }, 32)
        }
        longLived.advance()
        XCTAssertEqual(root.completedUnitCount, 20_000)
        XCTAssertEqual(root.fractionCompleted, 20_000.5 / 20_001)
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
