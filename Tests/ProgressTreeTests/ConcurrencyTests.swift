import Dispatch
import ProgressTree
import Synchronization
import TestSupport
import XCTest

/// Updates and reads from many threads and tasks at once. `.ci/run` runs them, with the rest of the suite,
/// again under ThreadSanitizer (`--sanitize=thread`); `--filter Concurrency` runs just the threaded classes.
///
/// No sleeps: every test joins its threads (`concurrentPerform` returns when all iterations are done,
/// `DispatchGroup.wait`, task groups) before checking exact final values.
final class CoreConcurrencyTests: XCTestCase {
    private let threads = 8

    // MARK: advance(by:)

    func test_N_threads_times_M_advances_end_at_exactly_N_times_M() {
        let perThread = 50_000
        let node = ProgressNode.discreteProgress(totalUnitCount: Int64(threads * perThread))
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread { node.advance(by: 1) }
        }
        assertInvariants(node)
        XCTAssertEqual(node.completedUnitCount, Int64(threads * perThread))
        XCTAssertTrue(node.isFinished)
        XCTAssertEqual(node.fractionCompleted, 1.0)
        assertInvariants(node)
    }

    /// Adds are one fetch-add; the updater whose add wrapped past `Int64.max` saturates the count, however
    /// many other adds landed on the wrapped count meanwhile, and the parent is credited once.
    func test_concurrent_advances_past_int64_max_saturate_and_credit_the_parent_once() {
        for round in 0..<200 {
            let parent = ProgressNode(totalUnitCount: 4)
            let child = ProgressNode(totalUnitCount: .max, parent: parent, pendingUnitCount: 2)
            child.completedUnitCount = .max - 1_000
            DispatchQueue.concurrentPerform(iterations: threads) { index in
                for _ in 0..<100 { child.advance(by: Int64(1 + index)) }
            }
            XCTAssertEqual(child.completedUnitCount, .max, "round \(round)")
            XCTAssertTrue(child.isFinished, "round \(round)")
            XCTAssertEqual(parent.completedUnitCount, 2, "round \(round): credited once")
            XCTAssertEqual(parent.fractionCompleted, 0.5, "round \(round)")
            assertInvariants(parent)
        }
    }

    func test_N_threads_times_M_advances_on_an_attached_child_with_a_concurrent_reader() {
        let perThread = 20_000
        let parent = ProgressNode(totalUnitCount: 2)
        // One more unit than the threads add, so the child stays attached and unfinished to the end.
        let child = ProgressNode(totalUnitCount: Int64(threads * perThread) + 1, parent: parent, pendingUnitCount: 1)
        let done = Flag()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            while !done.isSet { _ = parent.fractionCompleted }
        }
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread { child.advance() }
        }
        done.set()
        group.wait()
        assertInvariants(parent)
        XCTAssertEqual(child.completedUnitCount, Int64(threads * perThread))
        XCTAssertFalse(child.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 0)
        let expected = Double(threads * perThread) / Double(threads * perThread + 1) / 2
        XCTAssertEqual(parent.fractionCompleted, expected)  // (0 + 1 × c/t) / 2: the same two roundings
        child.advance()
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        assertInvariants(parent)
    }

    func test_concurrent_advances_of_mixed_sizes_sum_exactly() {
        let node = ProgressNode.discreteProgress(totalUnitCount: .max)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for step in 0..<10_000 { node.advance(by: Int64(thread + 1) * Int64(step % 3)) }
        }
        // Σ over threads (t + 1) × Σ over steps (step % 3) = 36 × (3,333 × 1 + 3,333 × 2 + 0…) = 36 × 9,999.
        XCTAssertEqual(node.completedUnitCount, 36 * 9_999)
        assertInvariants(node)
    }

    // MARK: Children finishing concurrently

    func test_concurrent_children_finishing_leave_the_parent_at_exactly_1() {
        let count = 1_000
        let parent = ProgressNode(totalUnitCount: Int64(count))
        let children = (0..<count).map { _ in ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1) }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            for _ in 0..<10 { children[index].advance() }
        }
        assertInvariants(parent)
        XCTAssertEqual(parent.completedUnitCount, Int64(count))
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 1.0)
    }

    /// Every thread advances every child, so several threads race to finish (and overshoot) each child:
    /// each child must be credited exactly once.
    func test_threads_racing_to_finish_the_same_children_credit_each_child_once() {
        let count = 200
        let parent = ProgressNode(totalUnitCount: Int64(count))
        let exact = (0..<count / 2).map { _ in ProgressNode(totalUnitCount: 8, parent: parent, pendingUnitCount: 1) }
        let overshooting = (0..<count / 2).map { _ in
            ProgressNode(totalUnitCount: 3, parent: parent, pendingUnitCount: 1)
        }
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for child in exact { child.advance() }
            for child in overshooting { child.advance() }
        }
        assertInvariants(parent)
        for child in exact { XCTAssertEqual(child.completedUnitCount, 8) }
        for child in overshooting { XCTAssertEqual(child.completedUnitCount, 8) }
        XCTAssertEqual(parent.completedUnitCount, Int64(count), "each child credited exactly once")
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 1.0)
    }

    /// Chains of depth 20 (every node one unit, standing for its parent's one unit) under one root, each
    /// finished from its leaf on its own thread: 64 cascades of 20 credits meet at the root's lock.
    func test_concurrent_cascades_through_deep_chains_finish_the_root_exactly() {
        let chains = 64
        let depth = 20
        let root = ProgressNode(totalUnitCount: Int64(chains))
        var leaves: [ProgressNode] = []
        for _ in 0..<chains {
            var node = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            for level in 1..<depth {
                node = ProgressNode(totalUnitCount: level == depth - 1 ? 2 : 1, parent: node, pendingUnitCount: 1)
            }
            leaves.append(node)
        }
        let allLeaves = leaves
        DispatchQueue.concurrentPerform(iterations: chains) { index in allLeaves[index].advance() }
        assertInvariants(root)
        XCTAssertEqual(root.fractionCompleted, 0.5)  // every level passes the leaf's 1/2 up unchanged
        XCTAssertEqual(root.completedUnitCount, 0)
        DispatchQueue.concurrentPerform(iterations: chains) { index in allLeaves[index].advance() }
        assertInvariants(root)
        XCTAssertEqual(root.completedUnitCount, Int64(chains))
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 1.0)
    }

    // MARK: Readers during writers

    /// Two readers read the root while four writers advance leaves. The workload only moves forward and
    /// every fraction in this tree is a multiple of 1/1024 (8 × 8 × 16), exact in a `Double`, so every value
    /// a reader sees must be such a multiple, and each reader's values must never decrease.
    func test_readers_see_monotonic_exact_values_while_writers_update() {
        let root = ProgressNode(totalUnitCount: 8)
        var leaves: [ProgressNode] = []
        for _ in 0..<8 {
            let group = ProgressNode(totalUnitCount: 8, parent: root, pendingUnitCount: 1)
            for _ in 0..<8 { leaves.append(ProgressNode(totalUnitCount: 16, parent: group, pendingUnitCount: 1)) }
        }
        let allLeaves = leaves
        let done = Flag()
        let wentBack = Counter()
        let notExact = Counter()
        let finishedReaders = Counter()
        let readers = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: readers) {
                var last = 0.0
                while !done.isSet {
                    let value = root.fractionCompleted
                    if value < last { wentBack.add() }
                    if value < 0 || value > 1 || (value * 1024).rounded() != value * 1024 { notExact.add() }
                    last = value
                }
                finishedReaders.add()
            }
        }
        let writers = 4
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for _ in 0..<16 {
                for index in stride(from: writer, to: allLeaves.count, by: writers) { allLeaves[index].advance() }
            }
        }
        done.set()
        readers.wait()
        assertInvariants(root)
        XCTAssertEqual(wentBack.count, 0, "reads that went back")
        XCTAssertEqual(notExact.count, 0, "reads that were not a multiple of 1/1024 within 0...1")
        XCTAssertEqual(finishedReaders.count, 2)
        XCTAssertEqual(root.fractionCompleted, 1.0)
        XCTAssertEqual(root.completedUnitCount, 8)
        XCTAssertTrue(root.isFinished)
    }

    // MARK: Structure changes

    func test_concurrent_addChild_on_one_parent() {
        let count = 1_000
        let parent = ProgressNode(totalUnitCount: Int64(count))
        let children = (0..<count).map { _ in ProgressNode(totalUnitCount: 2) }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            parent.addChild(children[index], withPendingUnitCount: 1)
            children[index].advance()
        }
        assertInvariants(parent)
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertEqual(parent.fractionCompleted, 0.5)  // 1,000 × 0.5 / 1,000: sums of halves are exact
        DispatchQueue.concurrentPerform(iterations: count) { index in children[index].advance() }
        assertInvariants(parent)
        XCTAssertEqual(parent.completedUnitCount, Int64(count))
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertTrue(parent.isFinished)
    }

    /// Adding children that are already partly or wholly done, from many threads, while a reader reads.
    func test_concurrent_addChild_of_finished_and_partial_children_with_a_reader() {
        let count = 1_000
        let parent = ProgressNode(totalUnitCount: Int64(count))
        let done = Flag()
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) {
            while !done.isSet { _ = parent.fractionCompleted }
        }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let child = ProgressNode(totalUnitCount: 4)
            child.completedUnitCount = index.isMultiple(of: 2) ? 4 : 2
            parent.addChild(child, withPendingUnitCount: 1)
        }
        done.set()
        reader.wait()
        assertInvariants(parent)
        XCTAssertEqual(parent.completedUnitCount, Int64(count / 2), "the finished half credited at once")
        XCTAssertEqual(parent.fractionCompleted, 0.75)  // (500 + 500 × 0.5) / 1,000
    }

    // MARK: Implicit composition from many threads and tasks

    func test_thread_local_scopes_on_many_threads_do_not_interfere() {
        let count = 256
        let parents = (0..<count).map { _ in ProgressNode.discreteProgress(totalUnitCount: 4) }
        let wrongCurrent = Counter()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let parent = parents[index]
            parent.becomeCurrent(withPendingUnitCount: 2)
            if ProgressNode.current() !== parent { wrongCurrent.add() }
            let child = index.isMultiple(of: 2) ? ProgressNode(totalUnitCount: 2) : nil
            parent.resignCurrent()
            parent.becomeCurrent(withPendingUnitCount: 1)  // never claimed: credited at resignCurrent
            parent.resignCurrent()
            if ProgressNode.current() != nil { wrongCurrent.add() }
            child?.advance()
        }
        XCTAssertEqual(wrongCurrent.count, 0, "a thread saw another thread's current node")
        for parent in parents { assertInvariants(parent) }
        for (index, parent) in parents.enumerated() {
            if index.isMultiple(of: 2) {
                XCTAssertEqual(parent.completedUnitCount, 1, "parent \(index)")
                XCTAssertEqual(parent.fractionCompleted, 0.5, "parent \(index)")  // (1 + 2 × 0.5) / 4
            } else {
                XCTAssertEqual(parent.completedUnitCount, 3, "parent \(index)")  // 2 + 1, both unclaimed
            }
        }
    }

    func test_many_rounds_of_tasks_racing_for_one_binding_exactly_one_wins_each_time() async {
        let rounds = 20
        let tasksPerRound = 32
        for round in 0..<rounds {
            let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
            let nodes = await parent.withCurrent(pendingUnitCount: 10) { () async -> [ProgressNode] in
                await withTaskGroup(of: ProgressNode.self) { group in
                    for _ in 0..<tasksPerRound { group.addTask { ProgressNode(totalUnitCount: 1) } }
                    var nodes: [ProgressNode] = []
                    for await node in group { nodes.append(node) }
                    return nodes
                }
            }
            XCTAssertEqual(parent.completedUnitCount, 0, "round \(round)")
            assertInvariants(parent)
            await withTaskGroup(of: Void.self) { group in
                for node in nodes { group.addTask { node.advance() } }
            }
            XCTAssertEqual(parent.completedUnitCount, 10, "round \(round): exactly one of \(tasksPerRound) attached")
            assertInvariants(parent)
        }
    }
}
