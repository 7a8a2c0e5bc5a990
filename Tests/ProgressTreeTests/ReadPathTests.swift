@testable import ProgressTree
import Dispatch
import XCTest
import ProgressTreePlatform

/// How reads synchronize (Docs/Architecture.md, "A read"): a clean read takes no lock, reads of unrelated
/// trees never share one, and the trees' refresh domains follow attachment.
final class ReadPathTests: XCTestCase {
    /// Holds the refresh lock of `node`'s tree on another thread until `release` is signalled; returns once
    /// it is held.
    private func holdDomainLock(of node: ProgressNode, until release: DispatchSemaphore) -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let domain = node.domain
        Thread {
            domain.withRepresentativeLock { _ in
                held.signal()
                release.wait()
            }
            done.signal()
        }.start()
        held.wait()
        return done
    }

    /// Runs `read` on another thread and returns its result, or `nil` if it did not finish within 10 s.
    private func readWithin10Seconds(_ read: @escaping @Sendable () -> Double) -> Double? {
        let result = Lock<Double?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            let value = read()
            result.withLock { $0 = value }
            finished.signal()
        }.start()
        guard finished.wait(timeout: .now() + 10) == .success else { return nil }
        return result.withLock { $0 }
    }

    func test_a_clean_read_returns_the_cached_fraction_without_taking_the_trees_lock() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 2)
        child.completedUnitCount = 5
        XCTAssertEqual(root.fractionCompleted, 0.25)  // refreshes; the tree is clean afterwards
        XCTAssertEqual(root.flags.load(ordering: .relaxed) & NodeFlags.stale, 0)

        let release = DispatchSemaphore(value: 0)
        let done = holdDomainLock(of: root, until: release)
        XCTAssertEqual(readWithin10Seconds { root.fractionCompleted }, 0.25)
        XCTAssertEqual(readWithin10Seconds { child.fractionCompleted }, 0.5)
        release.signal()
        done.wait()
    }

    func test_a_read_of_one_tree_does_not_wait_for_a_read_of_an_unrelated_tree() {
        let busy = ProgressNode.discreteProgress(totalUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 1, parent: busy, pendingUnitCount: 1)
        let other = ProgressNode.discreteProgress(totalUnitCount: 10)
        let leaf = ProgressNode(totalUnitCount: 10, parent: other, pendingUnitCount: 10)
        leaf.completedUnitCount = 3  // `other` is dirty: its read must refresh, under its own tree's lock

        let release = DispatchSemaphore(value: 0)
        let done = holdDomainLock(of: busy, until: release)
        XCTAssertEqual(readWithin10Seconds { other.fractionCompleted }, 0.3)
        release.signal()
        done.wait()
    }

    func test_attaching_a_tree_puts_both_trees_under_one_refresh_lock() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let sibling = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let subtree = ProgressNode.discreteProgress(totalUnitCount: 2)
        let leaf = ProgressNode(totalUnitCount: 2, parent: subtree, pendingUnitCount: 2)
        XCTAssertFalse(parent.domain.representative === subtree.domain.representative)

        parent.addChild(subtree, withPendingUnitCount: 1)
        let representative = parent.domain.representative
        for node in [sibling, subtree, leaf] { XCTAssertTrue(node.domain.representative === representative) }
        leaf.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.25)
    }

    func test_a_chain_built_from_the_leaf_up_keeps_its_domain_chains_short() {
        // Every level is a fresh root that already has a read child: union by rank keeps the forwards short.
        var top = ProgressNode.discreteProgress(totalUnitCount: 1)
        _ = top.fractionCompleted
        var nodes = [top]
        for _ in 1..<1_000 {
            let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
            _ = parent.fractionCompleted
            parent.addChild(top, withPendingUnitCount: 1)
            top = parent
            nodes.append(parent)
        }
        let representative = top.domain.representative
        var longest = 0
        for node in nodes {
            var hops = 0
            var domain = node.domain
            while domain !== representative {
                domain = domain.forwardTarget!
                hops += 1
            }
            longest = max(longest, hops)
        }
        XCTAssertLessThanOrEqual(longest, 10, "union by rank: at most log2(1000) forwards")
    }

    func test_a_parent_finished_by_its_childs_credit_while_paused_leaves_the_pause() async throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode.discreteProgress(totalUnitCount: 5)
        root.addChild(child, withPendingUnitCount: 2)
        let resumed = Lock(0)
        root.resumingHandler = { resumed.withLock { $0 += 1 } }
        root.pause()
        child.advance(by: 5)  // finishes the root through the credit
        XCTAssertTrue(root.isFinished)
        XCTAssertFalse(root.isPaused)
        XCTAssertEqual(resumed.withLock { $0 }, 1)
        try await root.checkpoint()  // returns at once
    }

    func test_a_grandparent_finished_through_two_credits_while_paused_leaves_the_pause() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: 3, parent: middle, pendingUnitCount: 1)
        root.pause()
        XCTAssertTrue(middle.isPaused && leaf.isPaused)
        leaf.advance(by: 3)
        XCTAssertEqual([root.isFinished, middle.isFinished, leaf.isFinished], [true, true, true])
        XCTAssertEqual([root.isPaused, middle.isPaused, leaf.isPaused], [false, false, false])
    }

    func test_a_read_racing_updates_from_another_thread_ends_on_the_final_fraction() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 100)
        let children = (0..<4).map { _ in ProgressNode(totalUnitCount: 10_000, parent: root, pendingUnitCount: 25) }
        let writers = DispatchGroup()
        for child in children {
            DispatchQueue.global().async(group: writers) {
                for _ in 0..<9_999 { child.advance() }
            }
        }
        var last = 0.0
        while writers.wait(timeout: .now()) == .timedOut {
            let fraction = root.fractionCompleted
            XCTAssertGreaterThanOrEqual(fraction, last, "the fraction never goes back")
            last = fraction
        }
        XCTAssertEqual(root.fractionCompleted, 0.9999, accuracy: 1e-12)
        XCTAssertEqual(root.fractionCompleted, root.fractionCompleted)  // clean now: the cached value
        XCTAssertEqual(root.flags.load(ordering: .relaxed) & NodeFlags.stale, 0)
    }

    func test_a_child_outliving_its_released_parent_has_no_parent_and_keeps_counting() {
        var root: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 2)
        let weakRoot = { [weak root] in root }
        let child = ProgressNode(totalUnitCount: 10, parent: root!, pendingUnitCount: 2)
        child.advance(by: 3)
        root = nil
        XCTAssertNil(weakRoot())
        XCTAssertNil(child.parent)
        child.advance(by: 7)  // finishes with no parent to credit
        XCTAssertTrue(child.isFinished)
        XCTAssertEqual(child.fractionCompleted, 1)
    }

    func test_releasing_a_parent_while_its_children_are_updated_from_other_threads_loses_nothing() {
        for _ in 0..<200 {
            var root: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 4)
            let children = (0..<2).map { _ in ProgressNode(totalUnitCount: 1_000, parent: root!, pendingUnitCount: 2) }
            let writers = DispatchGroup()
            for child in children {
                DispatchQueue.global().async(group: writers) {
                    for _ in 0..<1_000 { child.advance() }
                }
            }
            root = nil  // its deinit races with the children's walks up
            writers.wait()
            for child in children {
                XCTAssertEqual(child.completedUnitCount, 1_000)
                XCTAssertNil(child.parent)
            }
        }
    }

    /// Documents the one window in which a read does not see an update that already returned (see the top
    /// of ProgressNode+Propagation.swift): the update stopped at an ancestor that another writer marked and
    /// has not queued one level up yet. Once that writer has queued it, the root shows both updates: nothing
    /// is lost. The writer in flight is played by the test, step by step, as `markChanged` does them.
    func test_an_update_stopping_at_an_ancestor_marked_by_a_writer_in_flight_shows_once_that_writer_returns() {
        let root = ProgressNode(totalUnitCount: 2)
        let middle = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 2)
        let first = ProgressNode(totalUnitCount: 2, parent: middle, pendingUnitCount: 1)
        let second = ProgressNode(totalUnitCount: 2, parent: middle, pendingUnitCount: 1)
        XCTAssertEqual(root.fractionCompleted, 0)
        // The first writer: its count, its own mark, its queueing in `middle` and `middle`'s mark; it stops
        // before it queues `middle` in `root`.
        first.completedStorage.store(1, ordering: .sequentiallyConsistent)
        first.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent)
        first.enqueue(in: UnownedNode(middle))
        middle.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent)

        second.advance()  // returns at once: `middle` is already marked
        XCTAssertEqual(root.fractionCompleted, 0)  // the window: this read does not reach `middle` yet

        // The first writer goes on: `middle` queued in `root`, `root` marked.
        middle.enqueue(in: UnownedNode(root))
        root.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent)
        XCTAssertEqual(root.fractionCompleted, 0.5)  // both halves: (0.5 + 0.5) / 2 of middle, all of root's
        XCTAssertEqual(middle.fractionCompleted, 0.5)
    }

    // MARK: Updates that refresh their path (Docs/Architecture.md, "An update after a read")

    /// An 8-deep chain root → … → leaf, each level standing for all of its parent's units.
    private func chain(leafTotal: Int64) -> (root: ProgressNode, leaf: ProgressNode) {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        var node = root
        for level in 1...8 {
            node = ProgressNode(totalUnitCount: level == 8 ? leafTotal : 1, parent: node, pendingUnitCount: 1)
        }
        return (root, node)
    }

    func test_an_update_after_a_read_leaves_its_path_clean_with_the_new_fraction_cached() {
        let (root, leaf) = chain(leafTotal: 4)
        XCTAssertEqual(root.fractionCompleted, 0)
        leaf.advance()
        // Nothing is left for the next read to do: every node up to the root holds its new fraction.
        XCTAssertEqual(root.flags.load(ordering: .relaxed) & NodeFlags.stale, 0)
        XCTAssertEqual(leaf.flags.load(ordering: .relaxed) & NodeFlags.stale, 0)
        XCTAssertEqual(Double(bitPattern: root.cachedFraction.load(ordering: .relaxed)), 0.25)
        XCTAssertEqual(root.queuedChildCount, 0)
        XCTAssertEqual(root.fractionCompleted, 0.25)
        leaf.advance()
        XCTAssertEqual(Double(bitPattern: root.cachedFraction.load(ordering: .relaxed)), 0.5)
        XCTAssertEqual(root.fractionCompleted, 0.5)
    }

    func test_updates_with_no_read_in_between_only_mark_the_path() {
        let (root, leaf) = chain(leafTotal: 10)
        XCTAssertEqual(root.fractionCompleted, 0)
        leaf.advance()  // after a read: refreshes the path
        leaf.advance()  // no read since: marks the path, so that the updates after it cost one load each
        XCTAssertNotEqual(leaf.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        XCTAssertNotEqual(root.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        leaf.advance(by: 3)
        XCTAssertEqual(Double(bitPattern: root.cachedFraction.load(ordering: .relaxed)), 0.1)  // the first update's
        XCTAssertEqual(root.fractionCompleted, 0.5)
    }

    func test_an_update_while_another_thread_holds_the_trees_lock_marks_its_path_without_waiting() {
        let (root, leaf) = chain(leafTotal: 4)
        XCTAssertEqual(root.fractionCompleted, 0)
        let release = DispatchSemaphore(value: 0)
        let done = holdDomainLock(of: root, until: release)
        let updated = DispatchSemaphore(value: 0)
        Thread {
            leaf.advance()
            updated.signal()
        }.start()
        XCTAssertEqual(updated.wait(timeout: .now() + 10), .success, "the update waited for the tree's lock")
        XCTAssertNotEqual(root.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        release.signal()
        done.wait()
        XCTAssertEqual(root.fractionCompleted, 0.25)
    }

    func test_an_update_reaching_a_parent_marked_by_another_writer_is_seen_with_that_writers_update() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let first = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 2)
        let second = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 2)
        XCTAssertEqual(root.fractionCompleted, 0)
        // `first` marks the root (and queues itself) because the lock is held; nobody reads the root after.
        let release = DispatchSemaphore(value: 0)
        let done = holdDomainLock(of: root, until: release)
        first.advance(by: 5)
        release.signal()
        done.wait()
        XCTAssertEqual(root.queuedChildCount, 1)
        XCTAssertEqual(second.fractionCompleted, 0)  // a read of the tree: the next update refreshes its path
        second.advance(by: 2)  // records itself in the root's sums and leaves the marked root to the read
        XCTAssertNotEqual(root.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        XCTAssertEqual(root.fractionCompleted, (2 * 0.5 + 2 * 0.2) / 4)
    }

    func test_observers_of_a_path_refreshed_by_an_update_get_the_new_value() {
        let (root, leaf) = chain(leafTotal: 4)
        XCTAssertEqual(root.fractionCompleted, 0)
        let values = Lock<[Double]>([])
        let delivered = DispatchSemaphore(value: 0)
        let observation = root.observe(\.fractionCompleted, on: DispatchQueue(label: "observer")) { _, change in
            values.withLock { $0.append(change.newValue) }
            delivered.signal()
        }
        leaf.advance()
        XCTAssertEqual(delivered.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(values.withLock { $0.last }, 0.25)
        observation.invalidate()
    }

    func test_a_read_on_another_thread_leaves_the_next_update_marking_its_path() {
        let (root, leaf) = chain(leafTotal: 4)
        XCTAssertEqual(readWithin10Seconds { root.fractionCompleted }, 0)
        leaf.advance()  // the reader is another thread: it, not this one, does the refresh
        XCTAssertNotEqual(root.flags.load(ordering: .relaxed) & NodeFlags.dirty, 0)
        XCTAssertEqual(readWithin10Seconds { root.fractionCompleted }, 0.25)
    }

    func test_writers_on_sibling_chains_and_a_reader_end_on_the_exact_fraction() {
        for _ in 0..<20 {
            let root = ProgressNode.discreteProgress(totalUnitCount: 2)
            let middles = (0..<2).map { _ in ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1) }
            let leaves = middles.map { ProgressNode(totalUnitCount: 4_000, parent: $0, pendingUnitCount: 1) }
            let writers = DispatchGroup()
            for leaf in leaves {
                DispatchQueue.global().async(group: writers) {
                    for step in 0..<3_999 {
                        leaf.advance()
                        if step % 7 == 0 { _ = leaf.fractionCompleted }  // keeps the update-path refresh busy
                    }
                }
            }
            var last = 0.0
            while writers.wait(timeout: .now()) == .timedOut {
                let fraction = root.fractionCompleted
                XCTAssertGreaterThanOrEqual(fraction, last, "the fraction never goes back")
                last = fraction
            }
            XCTAssertEqual(root.fractionCompleted, 3_999.0 / 4_000.0)
            XCTAssertEqual(middles.map(\.fractionCompleted), [3_999.0 / 4_000.0, 3_999.0 / 4_000.0])
        }
    }

    // MARK: Credits and walks racing with reads and merges

    func test_a_read_while_two_credits_of_one_parent_are_in_progress_waits_for_both() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let first = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 1)
        let second = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 1)
        first.advance(by: 2)
        second.advance(by: 2)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        // A read on another thread holds the tree's lock, so both credits below take the queue path; a walk
        // registered here stands for an update preempted mid-walk, which both credits wait for.
        let release = DispatchSemaphore(value: 0)
        let done = holdDomainLock(of: parent, until: release)
        first.advance()
        second.advance()
        XCTAssertEqual(parent.queuedChildCount, 2)
        let sums = parent.domainAndPart.loadPart()!
        let base = sums.creditSequence.load(ordering: .sequentiallyConsistent)
        let walk = parent.domain.enterWalk()
        let finished = DispatchGroup()
        for child in [first, second] {
            DispatchQueue.global().async(group: finished) { child.advance() }  // finishes: a credit begins
        }
        while sums.creditSequence.load(ordering: .sequentiallyConsistent) != base + 2 { sched_yield() }
        release.signal()
        done.wait()
        // Both credits are in progress: their children are retired into the queue, their units not yet in
        // the count. A read now must not take the shares out without the credits: it waits for them.
        let read = Lock<Double?>(nil)
        let reader = DispatchSemaphore(value: 0)
        Thread {
            let value = parent.fractionCompleted
            read.withLock { $0 = value }
            reader.signal()
        }.start()
        XCTAssertEqual(reader.wait(timeout: .now() + 0.05), .timedOut, "the read did not wait for the credits")
        walk.exit()
        finished.wait()
        XCTAssertEqual(reader.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(read.withLock { $0 }, 1)
        XCTAssertEqual(parent.fractionCompleted, 1)
    }

    func test_a_node_going_away_waits_for_walks_registered_before_its_tree_was_merged() {
        let other = ProgressNode.discreteProgress(totalUnitCount: 1)
        let otherChild = ProgressNode.discreteProgress(totalUnitCount: 1)
        _ = other.domain
        _ = otherChild.domain
        other.addChild(otherChild, withPendingUnitCount: 1)  // `other`'s domain now outranks a fresh one
        var root: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root!, pendingUnitCount: 1)
        let weakRoot = { [weak root] in root }
        let childDomain = child.domain  // a fresh child takes its parent's when it first needs one
        // An update of `child` walking up, preempted after it read its parent's address (the root).
        let walk = childDomain.enterWalk()
        let merged = DispatchSemaphore(value: 0)
        Thread {
            // The root's domain forwards to `other`'s; the merge then waits for the walk too.
            child.addChild(other, withPendingUnitCount: 1)
            merged.signal()
        }.start()
        while !childDomain.isForwarded { sched_yield() }
        // The last reference to the root goes on another thread: its deinit must wait for the walk.
        let box = Lock<ProgressNode?>(root)
        root = nil
        let dropped = DispatchSemaphore(value: 0)
        Thread {
            box.withLock { $0 = nil }
            dropped.signal()
        }.start()
        // (Its weak references are already nil: its deinit has begun. It must not end during the walk.)
        XCTAssertEqual(dropped.wait(timeout: .now() + 0.05), .timedOut, "the root went away during a walk")
        walk.exit()
        XCTAssertEqual(dropped.wait(timeout: .now() + 10), .success)
        XCTAssertNil(weakRoot())
        XCTAssertEqual(merged.wait(timeout: .now() + 10), .success)
    }
}
