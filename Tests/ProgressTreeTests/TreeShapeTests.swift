import ProgressTree
import XCTest

/// Deep chains, wide nodes, and what a parent keeps alive.
final class TreeShapeTests: XCTestCase {
    // MARK: Deep chains

    /// A chain of 50 nodes whose weights alternate between 1 of 2 and 3 of 4. Every product of weights is
    /// exact in a `Double` (3^24 needs 39 bits, the powers of two only move the exponent), so the root
    /// must report exactly the product.
    func test_chain_of_depth_50_shows_leaf_progress_at_the_root_with_the_exact_product_of_weights() {
        let depth = 50
        func total(_ level: Int) -> Int64 { level.isMultiple(of: 2) ? 2 : 4 }
        func pendingBelow(_ level: Int) -> Int64 { level.isMultiple(of: 2) ? 1 : 3 }

        var nodes = [ProgressNode(totalUnitCount: total(0))]
        for level in 1..<(depth - 1) {
            nodes.append(
                ProgressNode(
                    totalUnitCount: total(level), parent: nodes[level - 1], pendingUnitCount: pendingBelow(level - 1)))
        }
        let leaf = ProgressNode(totalUnitCount: 10, parent: nodes[depth - 2], pendingUnitCount: pendingBelow(depth - 2))
        nodes.append(leaf)
        XCTAssertEqual(nodes.count, depth)
        XCTAssertEqual(nodes[0].fractionCompleted, 0)

        leaf.completedUnitCount = 5
        var expected = 0.5
        var expectedAtLevel = [Double](repeating: 0, count: depth)
        expectedAtLevel[depth - 1] = expected
        for level in (0..<(depth - 1)).reversed() {
            expected = expected * Double(pendingBelow(level)) / Double(total(level))
            expectedAtLevel[level] = expected
        }
        // 0.5 × (1/2)^25 × (3/4)^24 = 3^24 / 2^74.
        XCTAssertEqual(expected, 282_429_536_481.0 / 0x1p74)
        XCTAssertEqual(nodes[0].fractionCompleted, 282_429_536_481.0 / 0x1p74)
        for level in 0..<depth {
            XCTAssertEqual(nodes[level].fractionCompleted, expectedAtLevel[level], "level \(level)")
        }
        XCTAssertEqual(nodes[0].completedUnitCount, 0)

        leaf.completedUnitCount = 10  // leaf finished: its parent is credited 1 of 2, so the root doubles
        XCTAssertEqual(nodes[depth - 2].completedUnitCount, 1)
        XCTAssertEqual(nodes[0].fractionCompleted, 282_429_536_481.0 / 0x1p73)

        // Do every node's own part except the leaf's parent: a credit must not finish a node that still has
        // its own work left, so nothing above the leaf's parent finishes yet.
        for level in 0..<(depth - 2) {
            nodes[level].advance(by: total(level) - pendingBelow(level))
        }
        XCTAssertFalse(nodes[0].isFinished)
        nodes[depth - 2].advance()  // the last unfinished node: finishing it finishes every ancestor
        for level in 0..<depth {
            XCTAssertTrue(nodes[level].isFinished, "level \(level)")
            XCTAssertEqual(nodes[level].fractionCompleted, 1.0, "level \(level)")
        }
        XCTAssertEqual(nodes[0].completedUnitCount, 2)
    }

    /// A chain of 10,000 nodes of one unit each, finished by updates of the leaf, with reads in between or
    /// without any (every level changed and never read): no recursion deep enough to overflow a stack, and
    /// the root is finished.
    func test_chain_of_depth_10000_is_finished_from_the_leaf_without_stack_overflow() {
        for readsInBetween in [true, false] {
            let depth = 10_000
            // Built from the leaf up, so each `addChild` adopts a root node (its cycle check is O(1)).
            let leaf = ProgressNode(totalUnitCount: 2)
            var top = leaf
            for _ in 1..<depth {
                let parent = ProgressNode(totalUnitCount: 1)
                parent.addChild(top, withPendingUnitCount: 1)
                top = parent
            }
            let root = top
            if readsInBetween { XCTAssertEqual(root.fractionCompleted, 0) }

            leaf.completedUnitCount = 1  // 1/2 at every level: (0 + 1 × 0.5) / 1
            if readsInBetween {
                XCTAssertEqual(root.fractionCompleted, 0.5)
                XCTAssertEqual(root.completedUnitCount, 0)
            }

            leaf.advance()
            XCTAssertTrue(root.isFinished, "reads in between: \(readsInBetween)")
            XCTAssertEqual(root.completedUnitCount, 1, "reads in between: \(readsInBetween)")
            XCTAssertEqual(root.fractionCompleted, 1.0, "reads in between: \(readsInBetween)")
        }
    }

    // MARK: Wide nodes

    func test_wide_node_of_10000_children() {
        let count = 10_000
        let parent = ProgressNode(totalUnitCount: Int64(count))
        let children = (0..<count).map { _ in ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 1) }
        XCTAssertEqual(parent.fractionCompleted, 0)

        children[5_000].completedUnitCount = 1  // one child changed: 0.25 of 10,000
        XCTAssertEqual(parent.fractionCompleted, 0.000025)

        children[0].completedUnitCount = 2
        XCTAssertEqual(parent.fractionCompleted, 0.000075)  // 0.75 / 10,000

        children[9_999].completedUnitCount = 4  // finished: credited, no longer counted as a share
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.000175)  // (1 + 0.75) / 10,000

        for child in children[..<5_000] { child.completedUnitCount = 4 }
        XCTAssertEqual(parent.completedUnitCount, 5_001)
        XCTAssertEqual(parent.fractionCompleted, 0.500125)  // (5,001 + 0.25) / 10,000

        for child in children[5_000...] where !child.isFinished { child.completedUnitCount = 2 }
        XCTAssertEqual(parent.fractionCompleted, 0.75005)  // (5,001 + 4,999 × 0.5) / 10,000

        for child in children { child.completedUnitCount = 4 }
        XCTAssertEqual(parent.completedUnitCount, 10_000)
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertTrue(parent.isFinished)
    }

    // MARK: What a parent keeps alive

    func test_a_finished_child_is_released_by_its_parent() {
        let parent = ProgressNode(totalUnitCount: 2)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 3, parent: parent, pendingUnitCount: 1)
            weakChild = child
            child.advance()
            child.advance(by: 2)
            XCTAssertTrue(child.isFinished)
        }
        // No read of the parent in between: finishing alone must let the child go.
        XCTAssertNil(weakChild, "a finished child must not be retained by its parent")
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_a_finished_child_is_released_after_the_parent_was_read() {
        let parent = ProgressNode(totalUnitCount: 2)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 1)
            weakChild = child
            child.completedUnitCount = 2
            XCTAssertEqual(parent.fractionCompleted, 0.25)
            child.completedUnitCount = 4
        }
        XCTAssertNil(weakChild)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_an_unfinished_child_is_retained_by_its_parent() {
        let parent = ProgressNode(totalUnitCount: 2)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 1)
            weakChild = child
        }
        XCTAssertNotNil(weakChild, "the parent must keep an attached, unfinished child alive")
        weakChild?.completedUnitCount = 2
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        weakChild?.completedUnitCount = 4
        XCTAssertNil(weakChild)
        XCTAssertEqual(parent.completedUnitCount, 1)
    }

    func test_a_finished_subtree_is_released() {
        let root = ProgressNode(totalUnitCount: 1)
        weak var weakChild: ProgressNode?
        weak var weakGrandchild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            let grandchild = ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 2)
            weakChild = child
            weakGrandchild = grandchild
        }
        XCTAssertNotNil(weakChild)
        XCTAssertNotNil(weakGrandchild)
        weakGrandchild?.advance()  // finishes the grandchild, whose credit finishes the child
        XCTAssertNil(weakGrandchild)
        XCTAssertNil(weakChild)
        XCTAssertTrue(root.isFinished)
    }

    func test_a_child_does_not_keep_its_parent_alive() {
        weak var weakParent: ProgressNode?
        let child: ProgressNode
        do {
            let parent = ProgressNode(totalUnitCount: 2)
            weakParent = parent
            child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
        }
        XCTAssertNil(weakParent)
        child.advance()
        child.advance()  // finishing with a parent gone is harmless
        XCTAssertTrue(child.isFinished)
        XCTAssertEqual(child.fractionCompleted, 1.0)
    }

    /// 200,000 children created, attached, finished and dropped under one parent: the parent keeps none of
    /// them (checked with weak references on a sample, including the last ones) and counts every credit.
    func test_memory_stays_flat_over_200000_finished_children() {
        let count = 200_000
        let parent = ProgressNode(totalUnitCount: Int64(count))
        final class WeakBox { weak var node: ProgressNode? }
        var sample: [WeakBox] = []
        for index in 0..<count {
            let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
            child.advance()
            child.advance()
            if index % 10_000 == 0 || index >= count - 20 {
                let box = WeakBox()
                box.node = child
                sample.append(box)
            }
        }
        XCTAssertEqual(sample.count, 40)
        let retained = sample.filter { $0.node != nil }.count
        XCTAssertEqual(retained, 0, "finished children still alive")
        XCTAssertEqual(parent.completedUnitCount, Int64(count))
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertTrue(parent.isFinished)
    }

    /// The same with reads in between and several children alive at once.
    func test_memory_stays_flat_with_interleaved_reads_and_overlapping_children() {
        let rounds = 20_000
        let parent = ProgressNode(totalUnitCount: Int64(rounds) * 4)
        final class WeakBox { weak var node: ProgressNode? }
        var sample: [WeakBox] = []
        var live: [ProgressNode] = []
        for round in 0..<rounds {
            for _ in 0..<4 { live.append(ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)) }
            for node in live { node.advance() }  // the 4 new ones go to 1/2, the 4 older ones finish
            if round.isMultiple(of: 1_000) {
                // The 4 older children finished (4 credits per earlier round), the 4 new are at 1/2.
                XCTAssertEqual(parent.fractionCompleted, (Double(round) * 4 + 2) / Double(rounds * 4))
                let box = WeakBox()
                box.node = live[0]
                sample.append(box)
            }
            live.removeFirst(live.count - 4)
        }
        for node in live { node.advance() }
        live.removeAll()
        XCTAssertEqual(sample.filter { $0.node != nil }.count, 0)
        XCTAssertEqual(parent.completedUnitCount, Int64(rounds) * 4)
        XCTAssertTrue(parent.isFinished)
    }
}
