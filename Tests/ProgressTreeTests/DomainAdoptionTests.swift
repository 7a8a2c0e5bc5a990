import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import XCTest

/// Review of the lazy domain of fresh children (`adoptDomain`): which domain each node ends with, and that
/// reads, walks and finishes agree on it in the cases the review looked at.
final class DomainAdoptionTests: XCTestCase {
    private struct Failure: Error {}

    private func representative(_ node: ProgressNode) -> RefreshDomain { node.domain.representative }

    // MARK: Which domain

    /// A fresh child takes nothing at creation; a read while attached gives it its parent's domain.
    func test_fresh_child_read_while_attached_takes_parents_domain() {
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 2)
        XCTAssertNil(child.domainAndPart.loadDomain())
        XCTAssertNotNil(root.domainAndPart.loadDomain(), "a parent has its domain before its first fresh child")
        XCTAssertEqual(child.fractionCompleted, 0)
        child.advance()
        XCTAssertTrue(child.domain === root.domain)
        XCTAssertEqual(root.fractionCompleted, 0.25)
        XCTAssertEqual(child.fractionCompleted, 0.25)
    }

    /// A fresh child of a fresh child: the middle node takes the root's domain when its own child is
    /// pushed, and the grandchild takes the same one.
    func test_fresh_child_of_fresh_child_shares_root_domain() {
        let root = ProgressNode(totalUnitCount: 1)
        let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        XCTAssertNil(middle.domainAndPart.loadDomain())
        let leaf = ProgressNode(totalUnitCount: 4, parent: middle, pendingUnitCount: 1)
        XCTAssertTrue(middle.domainAndPart.loadDomain() === root.domainAndPart.loadDomain())
        leaf.advance(by: 2)
        XCTAssertTrue(representative(leaf) === representative(root))
        XCTAssertEqual(root.fractionCompleted, 0.5)
        leaf.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, 1)
        XCTAssertTrue(root.isFinished)
    }

    /// A fresh child whose parent went away before it took a domain takes a new one, and reads right.
    func test_fresh_child_orphaned_before_adopting_takes_a_new_domain() {
        var root: ProgressNode? = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 4, parent: root!, pendingUnitCount: 2)
        let weakRoot = { [weak root] in root }
        root = nil
        XCTAssertNil(weakRoot())
        XCTAssertEqual(child.parentAddress.load(ordering: .relaxed), 0)
        XCTAssertNil(child.domainAndPart.loadDomain())
        child.advance()
        XCTAssertEqual(child.fractionCompleted, 0.25)
        XCTAssertNotNil(child.domainAndPart.loadDomain())
        child.advance(by: 3)
        XCTAssertEqual(child.fractionCompleted, 1)
    }

    /// `addChild` into an attached fresh child with no domain: the fresh child takes its parent's domain
    /// (not the added node's), and the added node's tree joins it.
    func test_addChild_into_attached_fresh_child_joins_the_tree() {
        let root = ProgressNode(totalUnitCount: 2)
        let fresh = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 2)
        let added = ProgressNode(totalUnitCount: 4)
        added.advance()
        XCTAssertEqual(added.fractionCompleted, 0.25)  // has its own domain
        XCTAssertNil(fresh.domainAndPart.loadDomain())
        fresh.addChild(added, withPendingUnitCount: 2)
        XCTAssertTrue(fresh.domainAndPart.loadDomain() === root.domainAndPart.loadDomain())
        XCTAssertTrue(representative(added) === representative(root))
        XCTAssertEqual(root.fractionCompleted, 0.25)
        added.advance(by: 3)
        XCTAssertEqual(root.fractionCompleted, 1)
    }

    /// `addChild` into a fresh child that finished unread (no domain, no parent): it takes the added
    /// node's domain; the old root is not joined.
    func test_addChild_into_finished_fresh_child_without_domain_takes_the_childs() {
        let root = ProgressNode(totalUnitCount: 1)
        let fresh = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        fresh.advance()  // finishes through the fast path: never shared, never adopted
        XCTAssertNil(fresh.domainAndPart.loadDomain())
        XCTAssertTrue(root.isFinished)
        let added = ProgressNode(totalUnitCount: 2)
        XCTAssertEqual(added.fractionCompleted, 0)
        fresh.addChild(added, withPendingUnitCount: 1)
        XCTAssertTrue(fresh.domainAndPart.loadDomain() === added.domainAndPart.loadDomain())
        XCTAssertFalse(representative(fresh) === representative(root))
        added.advance()
        XCTAssertEqual(fresh.fractionCompleted, 1)  // finished count 1 of 1
    }

    /// A failed fresh child that never took a domain: the parent keeps its share at failure (0) and the
    /// child reads under a domain of its own afterwards.
    func test_fresh_child_failing_unread_then_read() {
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 2)
        let grandchild = ProgressNode(totalUnitCount: 2, parent: child, pendingUnitCount: 4)
        XCTAssertTrue(child.domainAndPart.loadDomain() === root.domainAndPart.loadDomain())
        grandchild.advance()
        XCTAssertEqual(root.fractionCompleted, 0.5)
        child.fail(Failure())
        XCTAssertTrue(child.isFailed)
        XCTAssertEqual(root.fractionCompleted, 0.5, "the share at failure stays")
        XCTAssertEqual(root.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(child.fractionCompleted, 0.5)
    }

    // MARK: No recursive lock

    /// Handlers and observers that read `parent`, `domain` and fractions of the same fresh child, which
    /// has no domain yet when they run: none runs under the child's lock.
    func test_handlers_reading_the_node_do_not_reenter_its_lock() {
        let root = ProgressNode(totalUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        let seen = Mutex<[Double]>([])
        child.cancellationHandler = { [weak child] in
            guard let child else { return }
            _ = child.parent
            seen.withLock { $0.append(child.fractionCompleted) }
        }
        XCTAssertNil(child.domainAndPart.loadDomain())
        child.cancel()
        XCTAssertEqual(seen.withLock { $0 }, [0])
        let paused = ProgressNode(totalUnitCount: 1)
        paused.pause()
        let middle = ProgressNode(totalUnitCount: 1, parent: paused, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 1)  // inherits through `parent`
        XCTAssertTrue(leaf.isPaused)
        XCTAssertTrue(leaf.parent === middle)
        XCTAssertTrue(middle.parent === paused)
    }

    // MARK: Concurrency

    /// A fresh child read on one thread while it updates and finishes on another and its parent is let go
    /// on a third: every read is within [0, 1], the child ends at 1, the parent (while held) counts it once.
    func test_fresh_child_read_while_finishing_and_parent_released() {
        for _ in 0..<300 {
            var root: ProgressNode? = ProgressNode(totalUnitCount: 2)
            let keep = root!
            let child = ProgressNode(totalUnitCount: 4, parent: keep, pendingUnitCount: 2)
            let start = DispatchGroup()
            let group = DispatchGroup()
            let bad = Atomic<Int>(0)
            start.enter()
            DispatchQueue.global().async(group: group) {
                start.wait()
                for _ in 0..<4 { child.advance() }
            }
            DispatchQueue.global().async(group: group) {
                start.wait()
                for _ in 0..<20 {
                    let fraction = child.fractionCompleted
                    if !(0...1).contains(fraction) { bad.add(1, ordering: .relaxed) }
                    let rootFraction = keep.fractionCompleted
                    if !(0...1).contains(rootFraction) { bad.add(1, ordering: .relaxed) }
                }
            }
            start.leave()
            group.wait()
            root = nil
            XCTAssertEqual(bad.load(ordering: .relaxed), 0)
            XCTAssertEqual(child.fractionCompleted, 1)
            XCTAssertEqual(keep.completedUnitCount, 2)
            XCTAssertEqual(keep.fractionCompleted, 1)
            if let domain = child.domainAndPart.loadDomain() {
                XCTAssertTrue(
                    domain.representative === keep.domain.representative,
                    "a child that took a domain while attached took its parent's")
            }
        }
    }

    /// A fresh child whose parent is released on another thread while the child updates and is read: no
    /// crash, the child reads 1 at the end.
    func test_fresh_child_updating_while_parent_goes_away() {
        final class Box: @unchecked Sendable { var node: ProgressNode? }
        for _ in 0..<300 {
            let box = Box()
            box.node = ProgressNode(totalUnitCount: 2)
            let middle = ProgressNode(totalUnitCount: 2, parent: box.node!, pendingUnitCount: 1)
            let child = ProgressNode(totalUnitCount: 4, parent: middle, pendingUnitCount: 2)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { box.node = nil }
            DispatchQueue.global().async(group: group) {
                for _ in 0..<4 {
                    child.advance()
                    _ = child.fractionCompleted
                    _ = middle.fractionCompleted
                }
            }
            group.wait()
            XCTAssertEqual(child.fractionCompleted, 1)
            XCTAssertEqual(middle.fractionCompleted, 1)  // the child's 2 pending units finish it
        }
    }

    /// `fail` of a fresh child racing with reads of it and of its parent: the parent ends with the failed
    /// count and a fraction equal to the share kept.
    func test_fresh_child_fail_racing_with_reads() {
        for _ in 0..<300 {
            let root = ProgressNode(totalUnitCount: 2)
            let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 2)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { child.fail(Failure()) }
            DispatchQueue.global().async(group: group) {
                for _ in 0..<10 { _ = child.fractionCompleted; _ = root.fractionCompleted }
            }
            group.wait()
            XCTAssertTrue(child.isFailed)
            XCTAssertEqual(root.descendantOutcomes.failedCount, 1)
            XCTAssertEqual(root.fractionCompleted, 0)
            XCTAssertEqual(child.fractionCompleted, 0)
        }
    }

    /// `addChild` into a fresh child racing with that fresh child finishing into its parent: the added node
    /// ends in one domain with whichever tree it joined, and reads agree.
    func test_addChild_into_fresh_child_racing_with_its_finish() {
        for _ in 0..<300 {
            let root = ProgressNode(totalUnitCount: 1)
            let fresh = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let added = ProgressNode(totalUnitCount: 2)
            added.advance()
            _ = added.fractionCompleted
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { fresh.addChild(added, withPendingUnitCount: 0) }
            DispatchQueue.global().async(group: group) { fresh.completedUnitCount = 1 }
            group.wait()
            XCTAssertTrue(representative(added) === representative(fresh))
            XCTAssertEqual(root.fractionCompleted, 1)
            XCTAssertEqual(fresh.fractionCompleted, 1)
            XCTAssertEqual(added.fractionCompleted, 0.5)
        }
    }

    /// Random concurrent work on a tree of fresh children (creation under fresh children, partial updates,
    /// reads, finishes, failures, `addChild` of read roots into fresh children, parents let go): at rest,
    /// every node that is still linked (`parentAddress` set) and has a domain is in its parent's domain, and
    /// every node reads within [0, 1] and agrees with a second read.
    func test_random_concurrent_work_keeps_linked_nodes_in_their_parents_domain() {
        final class Nodes: @unchecked Sendable {
            let lock = NSLock()
            var all: [ProgressNode] = []
            var strong: [ProgressNode?] = []
            func add(_ node: ProgressNode) { lock.lock(); all.append(node); strong.append(node); lock.unlock() }
            func pick(_ seed: inout UInt64) -> ProgressNode? {
                lock.lock(); defer { lock.unlock() }
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                guard !all.isEmpty else { return nil }
                return all[Int((seed >> 33) % UInt64(all.count))]
            }
            func drop(_ seed: inout UInt64) {
                lock.lock(); defer { lock.unlock() }
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                guard !strong.isEmpty else { return }
                strong[Int((seed >> 33) % UInt64(strong.count))] = nil
            }
        }
        for round in 0..<40 {
            let nodes = Nodes()
            let root = ProgressNode(totalUnitCount: 100)
            nodes.add(root)
            let group = DispatchGroup()
            for thread in 0..<3 {
                DispatchQueue.global().async(group: group) {
                    var seed = UInt64(round * 7 + thread + 1)
                    for _ in 0..<300 {
                        guard let node = nodes.pick(&seed) else { continue }
                        switch (seed >> 20) % 8 {
                        case 0, 1:
                            nodes.add(ProgressNode(totalUnitCount: 4, parent: node, pendingUnitCount: 1))
                        case 2: node.advance()
                        case 3: _ = node.fractionCompleted
                        case 4:
                            let added = ProgressNode(totalUnitCount: 4)
                            if (seed >> 40) & 1 == 0 { _ = added.fractionCompleted }
                            node.addChild(added, withPendingUnitCount: 1)
                            nodes.add(added)
                        case 5: if (seed >> 40) % 4 == 0 { node.fail(Failure()) }
                        case 6: nodes.drop(&seed)
                        default: _ = node.parent?.fractionCompleted
                        }
                    }
                }
            }
            group.wait()
            nodes.lock.lock()
            let all = nodes.all
            nodes.lock.unlock()
            for node in all {
                let fraction = node.fractionCompleted
                XCTAssert((0...1).contains(fraction))
                XCTAssertEqual(node.fractionCompleted, fraction)
                guard let parent = node.parent, let domain = node.domainAndPart.loadDomain() else { continue }
                XCTAssertTrue(
                    domain.representative === parent.domain.representative,
                    "a linked node with a domain is in its parent's")
            }
        }
    }

    /// Observing a fresh child with no domain gives it its parent's (registration passes the tree's lock),
    /// and its last value (finished, after the parent is let go) is delivered; the handler reads `parent`
    /// and the fraction of the node it observes without re-entering its lock.
    func test_observed_fresh_child_takes_parents_domain_and_delivers_its_finish() {
        var root: ProgressNode? = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 4, parent: root!, pendingUnitCount: 2)
        XCTAssertNil(child.domainAndPart.loadDomain())
        let values = Mutex<[Double]>([])
        let finished = DispatchSemaphore(value: 0)
        let observation = child.observe(\.fractionCompleted) { node, change in
            _ = node.parent
            values.withLock { $0.append(change.newValue) }
            if change.newValue == 1 { finished.signal() }
        }
        XCTAssertTrue(child.domainAndPart.loadDomain() === root!.domainAndPart.loadDomain())
        child.advance()
        root = nil
        child.advance(by: 3)
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(values.withLock { $0.last }, 1)
        XCTAssertEqual(child.fractionCompleted, 1)
        withExtendedLifetime(observation) {}
    }
}
