import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import XCTest

// Tests written for the review of the core model against SEMANTICS.md (each one failed before its fix).

/// An object that cancels its node when it goes away: a common way to tie work to its owner's lifetime.
/// Captured by one of the node's own handlers, it forms a cycle (node → handler → object → node) that
/// replacing or clearing the handler breaks, so its `deinit` runs inside the setter.
private final class CancelsNodeOnDeinit: Sendable {
    let node: ProgressNode
    init(_ node: ProgressNode) { self.node = node }
    deinit { node.cancel() }
}

final class ReviewFindingsTests: XCTestCase {
    // MARK: User code (a deinit) run under a node's lock

    /// Replacing or clearing a handler released the old closure inside the node's lock, so the `deinit`
    /// of whatever it held last ran under that lock: here `cancel()` on the same node, which took the lock
    /// again ("Fatal error: Recursive call to lock Mutex"; a deadlock with any other lock).
    func test_clearing_a_cancellation_handler_releases_what_it_captured_outside_the_nodes_lock() {
        let node = ProgressNode(totalUnitCount: 1)
        do {
            let owner = CancelsNodeOnDeinit(node)
            node.cancellationHandler = { _ = owner }
        }
        node.cancellationHandler = nil  // drops the last reference to `owner`, whose deinit cancels `node`
        XCTAssertTrue(node.isCancelled)
    }

    func test_replacing_pausing_and_resuming_handlers_releases_the_old_ones_outside_the_nodes_lock() {
        let node = ProgressNode(totalUnitCount: 1)
        do {
            let owner = CancelsNodeOnDeinit(node)
            node.pausingHandler = { _ = owner }
        }
        node.pausingHandler = {}
        XCTAssertTrue(node.isCancelled)

        let other = ProgressNode(totalUnitCount: 1)
        do {
            let owner = CancelsNodeOnDeinit(other)
            other.resumingHandler = { _ = owner }
        }
        other.resumingHandler = nil
        XCTAssertTrue(other.isCancelled)
    }

    // MARK: Preconditions (checked in a child process)

    /// A finished child was detached from its parent; adding it again stopped with "the child already has a
    /// parent", which is not what happened (it has none any more).
    func test_adding_a_finished_and_detached_child_again_names_the_problem() throws {
        try expectPrecondition("readdFinishedChild", "the child was already added to a parent, finished and was detached")
    }

    /// Coverage: the other preconditions SEMANTICS.md asks for, each stopping with a message that names it.
    func test_adding_an_attached_child_to_a_second_parent_names_the_problem() throws {
        try expectPrecondition("addChildTwice", "the child already has a parent")
    }

    func test_adding_an_ancestor_as_a_child_names_the_cycle() throws {
        try expectPrecondition("ancestorAsChild", "the child is an ancestor of this node; adding it would make a cycle")
    }

    func test_init_parent_with_a_parent_that_is_not_current_names_the_problem() throws {
        try expectPrecondition("initParentNotCurrent", "the parent must be the current node")
    }

    func test_adding_a_node_as_its_own_child_names_the_problem() throws {
        try expectPrecondition("selfAsChild", "a node cannot be its own child")
    }

    func test_a_negative_pending_unit_count_names_the_problem() throws {
        try expectPrecondition("negativePending", "the pending unit count must not be negative (got -1)")
    }

    /// The initializer that attaches at once (without `addChild`) checks the same.
    func test_a_negative_pending_unit_count_in_the_attaching_initializer_names_the_problem() throws {
        try expectPrecondition("negativePendingInit", "the pending unit count must not be negative (got -1)")
    }

    func test_resignCurrent_of_a_node_that_is_not_current_names_the_problem() throws {
        try expectPrecondition("resignNotCurrent", "resignCurrent(): this node is not the current node of this thread")
    }

    /// The single-threaded scenarios run in a child process (skipped in an ordinary run).
    func test_scenario_run_in_a_child_process() throws {
        switch try scenarioOfThisChildProcess() {
        case "readdFinishedChild":
            let first = ProgressNode(totalUnitCount: 1)
            let second = ProgressNode(totalUnitCount: 1)
            let child = ProgressNode(totalUnitCount: 1, parent: first, pendingUnitCount: 1)
            child.advance()  // finished: credited and detached from `first`
            second.addChild(child, withPendingUnitCount: 1)
        case "addChildTwice":
            let child = ProgressNode(totalUnitCount: 1, parent: ProgressNode(totalUnitCount: 1), pendingUnitCount: 1)
            ProgressNode(totalUnitCount: 1).addChild(child, withPendingUnitCount: 1)
        case "ancestorAsChild":
            let root = ProgressNode(totalUnitCount: 1)
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 1)
            leaf.addChild(root, withPendingUnitCount: 1)
        case "initParentNotCurrent":
            _ = ProgressNode(parent: ProgressNode(totalUnitCount: 1))
        case "selfAsChild":
            let node = ProgressNode(totalUnitCount: 1)
            node.addChild(node, withPendingUnitCount: 1)
        case "negativePending":
            ProgressNode(totalUnitCount: 1).addChild(ProgressNode(totalUnitCount: 1), withPendingUnitCount: -1)
        case "negativePendingInit":
            _ = ProgressNode(totalUnitCount: 1, parent: ProgressNode(totalUnitCount: 1), pendingUnitCount: -1)
        case "resignNotCurrent":
            let outer = ProgressNode(totalUnitCount: 2)
            let inner = ProgressNode(totalUnitCount: 2)
            outer.becomeCurrent(withPendingUnitCount: 1)
            inner.becomeCurrent(withPendingUnitCount: 1)
            outer.resignCurrent()  // not the innermost
        case let scenario:
            XCTFail("unknown scenario \(scenario)")
        }
        print("NO PRECONDITION")
    }

    private func expectPrecondition(
        _ scenario: String, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let result = try runInChildProcess("ReviewFindingsTests/test_scenario_run_in_a_child_process", scenario: scenario)
        XCTAssertNotEqual(result.status, 0, "the child process went on", file: file, line: line)
        XCTAssertTrue(
            result.output.contains(message), "got: " + preconditionLines(result.output), file: file, line: line)
    }

    // MARK: Coverage of clauses that had no test

    /// SEMANTICS.md, "Not in Foundation": a readable `description` that prints the subtree (portion,
    /// fraction, counts, state). The example of the doc comment of `description`.
    func test_description_prints_the_subtree_with_portion_fraction_counts_and_state() {
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        let filter = ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 1)
        download.completedUnitCount = 1_000_000
        filter.pause()
        XCTAssertEqual(
            photo.description,
            """
            ProgressNode: 45.00% (0 of 10)
              portion 9: 50.00% (1000000 of 2000000)
              portion 1: 0.00% (0 of 1), paused
            """)
        download.completedUnitCount = 2_000_000  // finished: detached, so no longer part of the tree
        photo.cancel()
        XCTAssertEqual(
            photo.description,
            """
            ProgressNode: 90.00% (9 of 10), cancelled
              portion 1: 0.00% (0 of 1), paused, cancelled
            """)
        XCTAssertEqual(photo.debugDescription, photo.description)
        XCTAssertEqual(ProgressNode(totalUnitCount: -1).description, "ProgressNode: 0.00% (0 of -1), indeterminate")
    }

    /// SEMANTICS.md, "Not in Foundation": the `ProgressReporting` protocol, used to attach an operation's
    /// node to a caller's tree.
    func test_progress_reporting_lets_a_caller_attach_an_operations_node() {
        struct Operation: ProgressTree.ProgressReporting {  // qualified: Foundation has one too
            let progress = ProgressNode(totalUnitCount: 4)
        }
        let operation = Operation()
        let reporter: any ProgressTree.ProgressReporting = operation
        let root = ProgressNode(totalUnitCount: 2)
        root.addChild(reporter.progress, withPendingUnitCount: 2)
        operation.progress.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertTrue(reporter.progress === operation.progress)
    }

    // MARK: Releasing deep trees

    /// Releasing the root of an unfinished chain released each level from inside the `deinit` of the level
    /// above: one nest of stack frames per level. In a debug build a 512 KB stack (the size of secondary
    /// threads and Dispatch workers on Apple platforms) overflowed at about 2,000 levels, and 8 MB (Linux's
    /// default) at about 30,000, although the library reads, finishes, cancels and describes 10,000-deep
    /// chains without recursion.
    func test_releasing_an_unfinished_chain_of_depth_10000_on_a_512_KB_stack() {
        let depth = 10_000
        let released = DispatchSemaphore(value: 0)
        let leafWasReleased = Atomic<Bool>(false)
        let thread = Thread {
            weak var weakLeaf: ProgressNode?
            do {
                let leaf = ProgressNode(totalUnitCount: 2)
                weakLeaf = leaf
                var top = leaf
                for _ in 1..<depth {
                    let parent = ProgressNode(totalUnitCount: 1)
                    parent.addChild(top, withPendingUnitCount: 1)
                    top = parent
                }
                leaf.advance()  // half done at every level, nothing finished: the whole chain stays attached
                _ = top.fractionCompleted
            }  // the root, and with it the chain, is released here
            leafWasReleased.store(weakLeaf == nil, ordering: .relaxed)
            released.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        XCTAssertEqual(released.wait(timeout: .now() + 120), .success)
        XCTAssertTrue(leafWasReleased.load(ordering: .relaxed), "every level of the chain must be released")
    }

    /// The same for a wide and deep tree released on the test's own thread: every node goes away.
    func test_releasing_a_wide_and_deep_tree_releases_every_node() {
        var weakLeaves: [WeakNode] = []
        do {
            let root = ProgressNode(totalUnitCount: 10)
            var level = [root]
            for _ in 0..<6 {
                var next: [ProgressNode] = []
                for node in level {
                    for _ in 0..<4 { next.append(ProgressNode(totalUnitCount: 2, parent: node, pendingUnitCount: 1)) }
                }
                level = next
            }
            weakLeaves = level.map { WeakNode(node: $0) }
            level[0].advance()
            XCTAssertGreaterThan(root.fractionCompleted, 0)
        }
        XCTAssertEqual(weakLeaves.count, 4_096)
        XCTAssertTrue(weakLeaves.allSatisfy { $0.node == nil })
    }
}

/// Reports, from its `deinit`, the fraction of a node: user code that reads the tree while going away.
private final class ReadsFractionOnDeinit: Sendable {
    let node: ProgressNode
    init(_ node: ProgressNode) { self.node = node }
    deinit { _ = node.fractionCompleted }
}

/// Multi-threaded tests of the review (run again under ThreadSanitizer by `.ci/run`).
final class ReviewFindingsConcurrencyTests: XCTestCase {
    // MARK: User code (a deinit) run under the domain lock

    /// A child that finishes while a read of its tree runs is retired into its parent's dirty queue, which
    /// holds a reference to it until a read drains it. That read may hold the last reference: it must drop
    /// it after the domain lock, since the child's `deinit` (and that of everything it held: handlers, user
    /// info) is user code, which may read the tree again ("Recursive call to lock Mutex" otherwise).
    ///
    /// Deterministic: a helper thread holds the tree's domain lock (as a running read does) while the child
    /// finishes, so the finish retires it into the queue; the test drops its own references, lets the lock
    /// go, and reads.
    func test_a_finished_child_released_last_by_a_read_is_deinitialized_outside_the_domain_lock() {
        let root = ProgressNode(totalUnitCount: 10)
        let sibling = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        let lockHeld = DispatchSemaphore(value: 0)
        let releaseLock = DispatchSemaphore(value: 0)
        let lockReleased = DispatchSemaphore(value: 0)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 5)
            weakChild = child
            let reporter = ReadsFractionOnDeinit(root)
            child.cancellationHandler = { _ = reporter }  // the child is the reporter's last owner
            XCTAssertEqual(root.fractionCompleted, 0)
            child.advance()
            sibling.advance()
            let domain = root.domain
            Thread.detachNewThread {
                domain.withRepresentativeLock { _ in
                    lockHeld.signal()
                    releaseLock.wait()
                }
                lockReleased.signal()
            }
            lockHeld.wait()
            child.completedUnitCount = 2  // credited at once; the child waits in the root's queue
            XCTAssertEqual(root.completedUnitCount, 5)
            XCTAssertEqual(root.queuedChildCount, 2)
        }
        XCTAssertNotNil(weakChild, "the root's queue holds the finished child until a read drains it")
        releaseLock.signal()
        lockReleased.wait()
        // The root's 5 units of the finished child, and a quarter of the sibling's 1.
        XCTAssertEqual(root.fractionCompleted, 0.525, accuracy: 1e-12)
        XCTAssertNil(weakChild, "the read let the child go, after the domain lock")
    }

    // MARK: What a read sees while another update is in flight

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
        first.enqueue(in: .passUnretained(middle))
        middle.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent)

        second.advance()  // returns at once: `middle` is already marked
        XCTAssertEqual(root.fractionCompleted, 0)  // the window: this read does not reach `middle` yet

        // The first writer goes on: `middle` queued in `root`, `root` marked.
        middle.enqueue(in: .passUnretained(root))
        root.flags.bitwiseOr(NodeFlags.dirty, ordering: .sequentiallyConsistent)
        XCTAssertEqual(root.fractionCompleted, 0.5)  // both halves: (0.5 + 0.5) / 2 of middle, all of root's
        XCTAssertEqual(middle.fractionCompleted, 0.5)
    }
}

// MARK: Running a scenario in a child process (to check a precondition's message)

private let scenarioVariable = "PROGRESSTREE_REVIEW_SCENARIO"

/// The scenario this process was started for, or a skip when it is an ordinary test run.
private func scenarioOfThisChildProcess() throws -> String {
    guard let scenario = ProcessInfo.processInfo.environment[scenarioVariable] else {
        throw XCTSkip("runs only in the child process of another test")
    }
    return scenario
}

/// Runs the test `test` (`"Class/method"` of this module) with `scenario` in a new process of this test
/// binary, and returns how it ended and what it printed (stdout and stderr together).
private func runInChildProcess(_ test: String, scenario: String) throws -> (status: Int32, output: String) {
    #if os(Linux)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["ProgressTreeTests.\(test)"]
    var environment = ProcessInfo.processInfo.environment
    environment[scenarioVariable] = scenario
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    #else
    throw XCTSkip("the child-process harness finds the test binary as on Linux only")
    #endif
}

/// The lines of a child process's output that name a precondition of the library.
private func preconditionLines(_ output: String) -> String {
    output.split(separator: "\n").filter { $0.contains("Fatal error") || $0.contains("CYCLE") }
        .joined(separator: " | ")
}
