import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// Cancellation, pausing and resuming across threads and tasks: handlers re-entering the tree from other
/// threads, races between transitions, handler replacement and attachment, `checkpoint()`, and the
/// node ↔ `Task` bridge. Runs under ThreadSanitizer in `.ci/run`, like the whole suite.
///
/// No test sleeps: a test waits for a condition it can observe (a counter, the number of suspended
/// `checkpoint()` calls), polling with `Task.yield()`, and a timeout only turns a deadlock into a failure.
final class ControlConcurrencyTests: XCTestCase {
    // MARK: Handlers re-entering the tree from another thread

    /// A cancellation handler that, on another thread, cancels a sibling, reads the root's fraction and
    /// pauses a child, and waits for that thread: had the library held a lock while calling the handler,
    /// the other thread would block on it for ever.
    func test_cancellation_handler_reentering_the_tree_on_another_thread_finishes() {
        let root = ProgressNode(totalUnitCount: 100)
        let a = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 40)
        let b = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 40)
        let c = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 20)
        let aChild = ProgressNode(totalUnitCount: 10, parent: a, pendingUnitCount: 10)
        let cChild = ProgressNode(totalUnitCount: 10, parent: c, pendingUnitCount: 10)
        aChild.completedUnitCount = 5  // a at 0.5 → root at 0.2
        let log = ControlCallLog()
        let helper = DispatchQueue(label: "reentering helper")
        a.cancellationHandler = { [log] in
            let done = DispatchSemaphore(value: 0)
            helper.async {
                b.cancel()
                log.record("fraction \(root.fractionCompleted)")
                cChild.pause()
                a.cancellationHandler = log.handler("replaced")  // a is cancelled and called: runs at once
                done.signal()
            }
            done.wait()
            log.record("a handler done")
        }
        aChild.cancellationHandler = log.handler("aChild")
        b.cancellationHandler = log.handler("b")
        cChild.pausingHandler = log.handler("cChild paused")

        let finished = expectation(description: "cancel() returned")
        DispatchQueue.global().async {
            a.cancel()
            finished.fulfill()
        }
        wait(for: [finished], timeout: 30)

        XCTAssertEqual(log.all, ["b", "fraction 0.2", "cChild paused", "replaced", "a handler done", "aChild"])
        XCTAssertEqual([root, a, b, c, aChild, cChild].map(\.isCancelled), [false, true, true, false, true, false])
        XCTAssertEqual([root, c, cChild].map(\.isPaused), [false, false, true])
    }

    /// Pausing and resuming handlers that re-enter the tree on another thread, the same way.
    func test_pausing_and_resuming_handlers_reentering_the_tree_on_another_thread_finish() {
        let root = ProgressNode(totalUnitCount: 100)
        let a = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 50)
        let b = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 50)
        let aChild = ProgressNode(totalUnitCount: 10, parent: a, pendingUnitCount: 10)
        let bChild = ProgressNode(totalUnitCount: 10, parent: b, pendingUnitCount: 10)
        bChild.completedUnitCount = 5  // b at 0.5 → root at 0.25
        let log = ControlCallLog()
        let helper = DispatchQueue(label: "reentering helper")
        @Sendable func onOtherThread(_ work: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            helper.async {
                work()
                done.signal()
            }
            done.wait()
        }
        a.pausingHandler = { [log] in
            onOtherThread {
                log.record("fraction \(root.fractionCompleted)")
                bChild.pause()
                b.cancel()
            }
            log.record("a paused")
        }
        a.resumingHandler = { [log] in
            onOtherThread {
                aChild.pause()  // a child of the node being resumed, after its turn came
                log.record("fraction \(root.fractionCompleted)")
            }
            log.record("a resumed")
        }
        aChild.pausingHandler = log.handler("aChild paused")
        aChild.resumingHandler = log.handler("aChild resumed")
        bChild.pausingHandler = log.handler("bChild paused")
        b.cancellationHandler = log.handler("b cancelled")

        let finished = expectation(description: "pause() and resume() returned")
        DispatchQueue.global().async {
            a.pause()
            a.resume()
            finished.fulfill()
        }
        wait(for: [finished], timeout: 30)

        XCTAssertEqual(
            log.all,
            [
                "fraction 0.25", "bChild paused", "b cancelled", "a paused", "aChild paused",
                "aChild paused", "fraction 0.25", "a resumed", "aChild resumed",
            ])
        // The resume marked a and aChild before any handler ran, so a's resuming handler paused an aChild
        // already resumed (a new transition, its handler called at once); the resume's own call for aChild
        // comes after, in tree order.
        XCTAssertEqual([root, a, b, aChild, bChild].map(\.isPaused), [false, false, false, true, true])
        XCTAssertEqual([root, a, b, aChild, bChild].map(\.isCancelled), [false, false, true, false, true])
    }

    /// Handlers run synchronously on the thread that called `cancel()`, `pause()` or `resume()`.
    func test_handlers_run_on_the_calling_thread_before_the_call_returns() {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let threads = ControlBox<[String: ObjectIdentifier]>([:])
        func record(_ name: String) -> @Sendable () -> Void {
            { threads.update { $0[name] = ObjectIdentifier(Thread.current) } }
        }
        child.pausingHandler = record("paused")
        child.resumingHandler = record("resumed")
        child.cancellationHandler = record("cancelled")
        let seen = ControlBox<[[String: ObjectIdentifier]]>([])
        let callerThread = ControlBox<ObjectIdentifier?>(nil)

        let finished = expectation(description: "transitions returned")
        DispatchQueue.global().async {
            callerThread.value = ObjectIdentifier(Thread.current)
            root.pause()
            seen.update { $0.append(threads.value) }
            root.resume()
            seen.update { $0.append(threads.value) }
            root.cancel()
            seen.update { $0.append(threads.value) }
            finished.fulfill()
        }
        wait(for: [finished], timeout: 30)

        let caller = try! XCTUnwrap(callerThread.value)
        XCTAssertNotEqual(caller, ObjectIdentifier(Thread.current))
        XCTAssertEqual(
            seen.value,
            [
                ["paused": caller], ["paused": caller, "resumed": caller],
                ["paused": caller, "resumed": caller, "cancelled": caller],
            ])
    }

    // MARK: Races between transitions

    func test_concurrent_cancels_run_every_handler_exactly_once() {
        let root = ProgressNode(totalUnitCount: 100)
        let children = (0..<100).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        let grandchildren = children.flatMap { child in
            (0..<10).map { _ in ProgressNode(totalUnitCount: 1, parent: child, pendingUnitCount: 1) }
        }
        let all = [root] + children + grandchildren
        let counters = all.map { _ in CallCounter() }
        for (node, counter) in zip(all, counters) { node.cancellationHandler = counter.increment }

        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            // Each worker cancels the nodes in a different order, ending with the root.
            for index in stride(from: all.count - 1 - worker, through: 0, by: -8) { all[index].cancel() }
            root.cancel()
        }

        XCTAssertEqual(all.filter(\.isCancelled).count, all.count)
        XCTAssertEqual(counters.map(\.value), Array(repeating: 1, count: all.count))
    }

    /// Pause and resume of one root from several threads: each node's transitions alternate, each calls its
    /// handler once, so once everything is resumed every node saw as many resumes as pauses.
    func test_concurrent_pause_and_resume_call_handlers_once_per_transition() {
        let root = ProgressNode(totalUnitCount: 100)
        let children = (0..<50).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        let all = [root] + children
        let paused = all.map { _ in CallCounter() }
        let resumed = all.map { _ in CallCounter() }
        for index in all.indices {
            all[index].pausingHandler = paused[index].increment
            all[index].resumingHandler = resumed[index].increment
        }

        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<200 {
                if worker == 3 {
                    children[round % children.count].pause()  // children paused on their own as well
                } else {
                    root.pause()
                    root.resume()
                }
            }
        }
        root.resume()

        XCTAssertEqual(all.filter(\.isPaused).count, 0)
        XCTAssertEqual(paused.map(\.value), resumed.map(\.value))
        XCTAssertGreaterThanOrEqual(paused[0].value, 1)
        XCTAssertEqual(all.filter(\.isCancelled).count, 0)
    }

    /// A child attached while its new parent is cancelled, or paused, on another thread ends up cancelled,
    /// or paused, its handler called once, whichever comes first.
    func test_child_attached_while_the_parent_is_cancelled_or_paused_takes_that_state_once() {
        typealias Handler = ReferenceWritableKeyPath<ProgressNode, (@Sendable () -> Void)?>
        let transitions: [(String, Handler, @Sendable (ProgressNode) -> Void, (ProgressNode) -> Bool)] = [
            ("cancel", \.cancellationHandler, { $0.cancel() }, \.isCancelled),
            ("pause", \.pausingHandler, { $0.pause() }, \.isPaused),
        ]
        for (name, handler, transition, isInThatState) in transitions {
            for _ in 0..<500 {
                let root = ProgressNode(totalUnitCount: 10)
                let child = ProgressNode.discreteProgress(totalUnitCount: 10)
                let counter = CallCounter()
                child[keyPath: handler] = counter.increment
                DispatchQueue.concurrentPerform(iterations: 2) { worker in
                    if worker == 0 { transition(root) } else { root.addChild(child, withPendingUnitCount: 5) }
                }
                XCTAssertTrue(isInThatState(child), name)
                XCTAssertEqual(counter.value, 1, name)
            }
        }
    }

    /// A child attached to a paused parent while that parent is resumed on another thread must not stay
    /// paused under a running parent.
    func test_child_attached_while_the_parent_is_resumed_ends_up_running() {
        var stuck = 0
        for _ in 0..<2_000 {
            let root = ProgressNode(totalUnitCount: 10)
            root.pause()
            let child = ProgressNode.discreteProgress(totalUnitCount: 10)
            let paused = CallCounter()
            let resumed = CallCounter()
            child.pausingHandler = paused.increment
            child.resumingHandler = resumed.increment
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                if worker == 0 { root.resume() } else { root.addChild(child, withPendingUnitCount: 5) }
            }
            XCTAssertFalse(root.isPaused)
            if child.isPaused { stuck += 1 }
            XCTAssertEqual(paused.value, resumed.value, "each pause of the child is matched by a resume")
        }
        XCTAssertEqual(stuck, 0, "children left paused under a running parent")
    }

    // MARK: Handlers replaced or cleared from another thread during a transition

    func test_cancellation_handlers_replaced_from_another_thread_during_cancel_run_once_each() {
        let root = ProgressNode(totalUnitCount: 1_000)
        let children = (0..<1_000).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        let old = children.map { _ in CallCounter() }
        let new = children.map { _ in CallCounter() }
        for (child, counter) in zip(children, old) { child.cancellationHandler = counter.increment }

        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            if worker == 0 {
                root.cancel()
            } else {
                for index in children.indices { children[index].cancellationHandler = new[index].increment }
            }
        }

        // The new handler runs exactly once: either the cancellation reached the child after it was set
        // (and called it), or it was set on a child already cancelled and called (and ran at once). The old
        // one ran only in the second case.
        XCTAssertEqual(new.map(\.value), Array(repeating: 1, count: children.count))
        XCTAssertEqual(old.filter { $0.value > 1 }.count, 0)
        XCTAssertEqual(children.filter(\.isCancelled).count, children.count)
    }

    func test_cancellation_handlers_cleared_from_another_thread_during_cancel_run_at_most_once() {
        let root = ProgressNode(totalUnitCount: 1_000)
        let children = (0..<1_000).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        let counters = children.map { _ in CallCounter() }
        for (child, counter) in zip(children, counters) { child.cancellationHandler = counter.increment }

        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            if worker == 0 {
                root.cancel()
            } else {
                for child in children.reversed() { child.cancellationHandler = nil }
            }
        }

        XCTAssertEqual(counters.filter { $0.value > 1 }.count, 0)
        XCTAssertEqual(children.filter { $0.cancellationHandler != nil }.count, 0)
        root.cancel()
        XCTAssertEqual(counters.filter { $0.value > 1 }.count, 0)
    }

    /// Pausing handlers replaced from another thread while the root is paused and resumed repeatedly: each
    /// pause of a child calls one handler once (its deliveries), plus at most one call per replacement made
    /// while the child was paused (a handler set on a paused node runs at once).
    func test_pausing_handlers_replaced_from_another_thread_during_pauses() {
        let root = ProgressNode(totalUnitCount: 100)
        let children = (0..<20).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        let calls = children.map { _ in CallCounter() }
        for (child, counter) in zip(children, calls) { child.pausingHandler = counter.increment }
        let rounds = 200
        let replacementsPerChild = 100

        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            if worker == 0 {
                for _ in 0..<rounds {
                    root.pause()
                    root.resume()
                }
            } else {
                for _ in 0..<replacementsPerChild {
                    for (child, counter) in zip(children, calls) {
                        child.pausingHandler = counter.increment
                        child.pausingHandler = nil
                        child.pausingHandler = counter.increment
                    }
                }
            }
        }

        XCTAssertEqual(children.filter(\.isPaused).count, 0)
        for counter in calls {
            XCTAssertLessThanOrEqual(counter.value, rounds + 2 * replacementsPerChild)
        }
    }

    // MARK: checkpoint()

    func test_checkpoint_returns_at_once_while_running() async throws {
        let node = ProgressNode(totalUnitCount: 1_000)
        for _ in 0..<1_000 {
            try await node.checkpoint()
            node.advance()
        }
        XCTAssertTrue(node.isFinished)
        XCTAssertEqual(node.pauseWaiterCount, 0)
    }

    func test_checkpoint_throws_at_once_when_the_node_or_an_ancestor_is_cancelled() async {
        let root = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.cancel()
        await assertThrowsCancellation { try await child.checkpoint() }
        await assertThrowsCancellation { try await root.checkpoint() }
        child.pause()  // cancelled: no effect, still throws rather than suspending
        await assertThrowsCancellation { try await child.checkpoint() }
        XCTAssertEqual(child.pauseWaiterCount, 0)
    }

    func test_checkpoint_throws_when_the_calling_task_is_cancelled_and_leaves_the_node_alone() async {
        let node = ProgressNode(totalUnitCount: 10)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await node.checkpoint()
        }
        let result = await task.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertFalse(node.isCancelled, "a task's cancellation reaches a node only through a link")
    }

    func test_checkpoint_suspends_while_paused_and_returns_on_resume() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        root.pause()
        let returned = Atomic<Bool>(false)
        let task = Task {
            try await node.checkpoint()
            returned.store(true, ordering: .sequentiallyConsistent)
        }
        // wait until the task is suspended in checkpoint(): its waiter is registered on the node
        try await waitUntil { node.pauseWaiterCount == 1 }
        XCTAssertFalse(returned.load(ordering: .sequentiallyConsistent), "suspended while paused")
        XCTAssertEqual(root.pauseWaiterCount, 0, "the waiter sits on the node that called checkpoint()")

        root.resume()

        try await task.value
        XCTAssertTrue(returned.load(ordering: .sequentiallyConsistent))
        XCTAssertEqual(node.pauseWaiterCount, 0)
        XCTAssertFalse(node.isCancelled)
    }

    func test_checkpoint_suspended_while_paused_throws_when_the_node_is_cancelled() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        node.pause()
        let task = Task { try await node.checkpoint() }
        try await waitUntil { node.pauseWaiterCount == 1 }

        root.cancel()

        let result = await task.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual(node.pauseWaiterCount, 0)
        XCTAssertFalse(task.isCancelled, "cancelling the node does not cancel an unlinked task")
    }

    func test_checkpoint_suspended_while_paused_throws_when_its_task_is_cancelled() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        node.pause()
        let task = Task { try await node.checkpoint() }
        try await waitUntil { node.pauseWaiterCount == 1 }

        task.cancel()

        let result = await task.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual(node.pauseWaiterCount, 0, "the waiter is removed")
        XCTAssertFalse(node.isCancelled)
        XCTAssertTrue(node.isPaused, "the node stays paused")
        node.resume()  // nothing left to resume: must not touch the finished task's continuation
        XCTAssertFalse(node.isPaused)
    }

    func test_one_resume_continues_every_suspended_checkpoint() async throws {
        let root = ProgressNode(totalUnitCount: 100)
        let nodes = (0..<100).map { _ in ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1) }
        root.pause()
        let tasks = nodes.map { node in
            Task {
                try await node.checkpoint()
                node.advance()
            }
        }
        try await waitUntil { nodes.allSatisfy { $0.pauseWaiterCount == 1 } }
        XCTAssertEqual(root.completedUnitCount, 0)

        root.resume()

        for task in tasks { try await task.value }
        XCTAssertEqual(root.completedUnitCount, 100)
        XCTAssertTrue(root.isFinished)
    }

    /// Workers loop through `checkpoint()` while another thread pauses and resumes their root many times;
    /// then the root is cancelled: every worker stops with `CancellationError`, no waiter is left behind.
    func test_checkpoint_loops_under_concurrent_pause_resume_then_cancel() async throws {
        let root = ProgressNode(totalUnitCount: 20)
        let nodes = (0..<20).map { _ in ProgressNode(totalUnitCount: .max, parent: root, pendingUnitCount: 1) }
        let started = CallCounter()
        let workers = nodes.map { node in
            Task {
                started.increment()
                while true {
                    try await node.checkpoint()
                    node.advance()
                    await Task.yield()
                }
            }
        }
        try await waitUntil { started.value == nodes.count }
        let toggled = expectation(description: "pause/resume rounds done")
        DispatchQueue.global().async {
            for _ in 0..<300 {
                root.pause()
                root.resume()
            }
            root.pause()
            toggled.fulfill()
        }
        await fulfillment(of: [toggled], timeout: 60)
        try await waitUntil { nodes.allSatisfy { $0.pauseWaiterCount == 1 } }
        let completedWhilePaused = nodes.map(\.completedUnitCount)

        root.cancel()

        for worker in workers {
            let result = await worker.result
            XCTAssertTrue(result.isCancellationError)
        }
        XCTAssertEqual(nodes.map(\.completedUnitCount), completedWhilePaused, "no work after the pause")
        XCTAssertEqual(nodes.map(\.pauseWaiterCount), Array(repeating: 0, count: nodes.count))
    }

    /// Suspended checkpoints whose tasks are cancelled while the node is resumed: each continuation is
    /// resumed exactly once (a second resume would trap), with one outcome or the other.
    func test_task_cancel_racing_with_resume_resumes_each_checkpoint_once() async throws {
        for _ in 0..<20 {
            let node = ProgressNode(totalUnitCount: 10)
            node.pause()
            let tasks = (0..<20).map { _ in Task { try await node.checkpoint() } }
            try await waitUntil { node.pauseWaiterCount == tasks.count }
            let done = expectation(description: "race done")
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 2) { worker in
                    if worker == 0 { node.resume() } else { for task in tasks { task.cancel() } }
                }
                done.fulfill()
            }
            await fulfillment(of: [done], timeout: 30)
            for task in tasks {
                let result = await task.result
                if case .failure(let error) = result { XCTAssertTrue(error is CancellationError) }
            }
            XCTAssertEqual(node.pauseWaiterCount, 0)
        }
    }

    // MARK: withCancellationLink

    func test_withCancellationLink_returns_the_value_and_unlinks() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let value = try await node.withCancellationLink { 42 }
        XCTAssertEqual(value, 42)
        XCTAssertEqual(node.linkedTaskCount, 0)
        XCTAssertFalse(node.isCancelled)
        node.cancel()
        XCTAssertFalse(Task.isCancelled, "a finished link does not reach the caller")
    }

    func test_withCancellationLink_rethrows_the_operation_error_without_cancelling() async {
        struct Failure: Error, Equatable {}
        let node = ProgressNode(totalUnitCount: 10)
        do {
            _ = try await node.withCancellationLink { () async throws -> Int in throw Failure() }
            XCTFail("expected a throw")
        } catch {
            XCTAssertEqual(error as? Failure, Failure())
        }
        XCTAssertFalse(node.isCancelled)
        XCTAssertEqual(node.linkedTaskCount, 0)
    }

    func test_cancelling_the_node_cancels_the_operation() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let started = CallCounter()
        let caller = Task {
            try await node.withCancellationLink {
                started.increment()
                if await yieldUntilCancelled() { throw CancellationError() }
            }
        }
        try await waitUntil { started.value == 1 }

        root.cancel()

        let result = await caller.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertFalse(caller.isCancelled, "the link cancels the operation's task, not its caller")
    }

    func test_operation_linked_to_a_cancelled_node_starts_cancelled() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        node.cancel()
        let sawCancellation = try await node.withCancellationLink { Task.isCancelled }
        XCTAssertTrue(sawCancellation)
        XCTAssertFalse(Task.isCancelled)
    }

    func test_cancelling_the_calling_task_cancels_the_node_and_its_subtree_not_its_parent() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let below = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 10)
        let started = CallCounter()
        let caller = Task {
            try await node.withCancellationLink {
                started.increment()
                while true {
                    try await node.checkpoint()
                    await Task.yield()
                }
            }
        }
        try await waitUntil { started.value == 1 }

        caller.cancel()

        let result = await caller.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual([root, node, below].map(\.isCancelled), [false, true, true])
    }

    func test_calling_task_cancelled_before_the_link_cancels_the_node() async {
        let node = ProgressNode(totalUnitCount: 10)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await node.withCancellationLink { Task.isCancelled }
        }
        let result = await caller.result
        XCTAssertTrue(node.isCancelled)
        // The operation may finish before the link cancels its task; either way it ran to an end.
        if case .failure(let error) = result { XCTAssertTrue(error is CancellationError) }
    }

    func test_withCancellationLink_keeps_task_local_values() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let seen = try await ControlTaskLocals.$label.withValue("outer") {
            try await node.withCancellationLink { ControlTaskLocals.label }
        }
        XCTAssertEqual(seen, "outer")
    }

    // MARK: task(priority:operation:)

    func test_task_returns_the_value_and_unlinks_when_done() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let task = node.task { 7 }
        let value = try await task.value
        XCTAssertEqual(value, 7)
        XCTAssertFalse(node.isCancelled)
        try await waitUntil { node.linkedTaskCount == 0 }
    }

    func test_cancelling_the_node_cancels_its_task() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let started = CallCounter()
        let task = node.task {
            started.increment()
            return await yieldUntilCancelled() ? "stopped" : "timed out"
        }
        try await waitUntil { started.value == 1 }

        root.cancel()

        XCTAssertTrue(task.isCancelled, "cancelled within cancel()")
        let value = try await task.value
        XCTAssertEqual(value, "stopped")
    }

    func test_cancelling_the_task_cancels_the_node_and_its_subtree() async throws {
        let root = ProgressNode(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
        let below = ProgressNode(totalUnitCount: 10, parent: node, pendingUnitCount: 10)
        let started = CallCounter()
        let task = node.task {
            started.increment()
            if await yieldUntilCancelled() { throw CancellationError() }
        }
        try await waitUntil { started.value == 1 }

        task.cancel()

        XCTAssertTrue(node.isCancelled, "cancelled within task.cancel(): the task's handler is installed")
        let result = await task.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual([root, node, below].map(\.isCancelled), [false, true, true])
    }

    func test_task_on_a_cancelled_node_starts_cancelled() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        node.cancel()
        let task = node.task { Task.isCancelled }
        XCTAssertTrue(task.isCancelled, "cancelled before task(priority:operation:) returns")
        let sawCancellation = try await task.value
        XCTAssertTrue(sawCancellation)
    }

    func test_task_keeps_task_local_values_and_priority() async throws {
        let node = ProgressNode(totalUnitCount: 10)
        let seen = ControlBox<(label: String, priority: TaskPriority)?>(nil)
        let task = ControlTaskLocals.$label.withValue("bound") {
            node.task(priority: .low) { seen.value = (ControlTaskLocals.label, Task.currentPriority) }
        }
        // Read before awaiting the task, which would raise its priority to ours.
        try await waitUntil { seen.value != nil }
        try await task.value
        XCTAssertEqual(seen.value?.label, "bound")
        XCTAssertEqual(seen.value?.priority, .low)
    }

    // MARK: A task group of 100 linked tasks

    func test_one_root_cancel_cancels_100_linked_tasks_in_a_task_group() async throws {
        let root = ProgressNode(totalUnitCount: 100)
        let nodes = (0..<100).map { _ in ProgressNode(totalUnitCount: .max, parent: root, pendingUnitCount: 1) }
        let started = CallCounter()
        let stopped = CallCounter()
        let work = Task { try await runLinkedLoops(nodes, started: started, stopped: stopped) }
        try await waitUntil { started.value == nodes.count }
        XCTAssertEqual(nodes.filter(\.isCancelled).count, 0)

        root.cancel()

        XCTAssertEqual(nodes.filter(\.isCancelled).count, 100, "all cancelled when cancel() returns")
        let result = await work.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual(stopped.value, 100, "every loop saw its task cancelled")
        XCTAssertFalse(work.isCancelled, "node cancellation does not flow up into the awaiting task")
    }

    func test_cancelling_the_task_group_parent_cancels_all_100_nodes_not_the_root() async throws {
        let root = ProgressNode(totalUnitCount: 100)
        let nodes = (0..<100).map { _ in ProgressNode(totalUnitCount: .max, parent: root, pendingUnitCount: 1) }
        let started = CallCounter()
        let stopped = CallCounter()
        let work = Task { try await runLinkedLoops(nodes, started: started, stopped: stopped) }
        try await waitUntil { started.value == nodes.count }

        work.cancel()

        let result = await work.result
        XCTAssertTrue(result.isCancellationError)
        XCTAssertEqual(nodes.filter(\.isCancelled).count, 100)
        XCTAssertEqual(stopped.value, 100)
        XCTAssertFalse(root.isCancelled, "cancellation never flows up")
    }

    // MARK: Helpers

    private func assertThrowsCancellation(
        file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            XCTFail("expected CancellationError", file: file, line: line)
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)", file: file, line: line)
        }
    }
}

/// Runs, in a task group, one loop per node, each in a task linked to its node by `withCancellationLink`
/// and doing units of work until that task is cancelled.
func runLinkedLoops(_ nodes: [ProgressNode], started: CallCounter, stopped: CallCounter) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for node in nodes {
            group.addTask {
                try await node.withCancellationLink {
                    started.increment()
                    let deadline = ContinuousClock.now + .seconds(120)
                    do {
                        while ContinuousClock.now < deadline {
                            try Task.checkCancellation()
                            node.advance()
                            await Task.yield()
                        }
                    } catch {
                        stopped.increment()
                        throw error
                    }
                }
            }
        }
        try await group.waitForAll()
    }
}

/// Yields until the current task is cancelled; returns whether it was (`false` after a minute, so that
/// a broken link fails the test instead of hanging it).
@discardableResult
func yieldUntilCancelled() async -> Bool {
    let deadline = ContinuousClock.now + .seconds(60)
    while !Task.isCancelled && ContinuousClock.now < deadline { await Task.yield() }
    return Task.isCancelled
}

/// A value shared between threads and tasks in a test.
final class ControlBox<Value: Sendable>: Sendable {
    private let storage: Lock<Value>
    init(_ value: Value) { storage = Lock(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}

enum ControlTaskLocals {
    @TaskLocal static var label = "none"
}

extension ProgressNode {
    /// Tasks suspended in this node's `checkpoint()` (white-box, for deterministic tests).
    var pauseWaiterCount: Int { state.withLock { $0.control.pauseWaiters.count } }
    /// Tasks currently linked to this node.
    var linkedTaskCount: Int { state.withLock { $0.control.linkedTaskCancellations.count } }
}

extension Result {
    var isCancellationError: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}

// MARK: - The guide's snippet (Docs/Cancellation.md, "A runnable example")
//
// The code between the markers must stay identical to the guide's snippet (without its `import` line):
// `test_guide_snippet_matches_the_guide` compares them.

// BEGIN guide snippet
/// Copies `files`, one unit each: waits while `progress` is paused, stops once it is cancelled.
func copyFiles(_ files: [String], progress: ProgressNode) async throws {
    for file in files {
        try await progress.checkpoint()
        try await copyFile(file)
        progress.advance()
    }
}

/// Stands for real, cancellation-aware work.
func copyFile(_ file: String) async throws {
    try Task.checkCancellation()
    await Task.yield()
}

func importAlbum() async throws -> (fraction: Double, videosStopped: Bool) {
    let album = ProgressNode(totalUnitCount: 10)
    let photos = ProgressNode(totalUnitCount: 3, parent: album, pendingUnitCount: 6)
    let videos = ProgressNode(totalUnitCount: 2, parent: album, pendingUnitCount: 4)
    album.cancellationHandler = { print("album cancelled") }  // once, on the thread calling cancel()

    // Structured: the photos are copied in a task linked to `photos` both ways.
    try await photos.withCancellationLink {
        try await copyFiles(["a.jpg", "b.jpg", "c.jpg"], progress: photos)
    }

    // Unstructured: a task linked to `videos`, which starts paused: it waits at its first checkpoint.
    videos.pause()
    let videoImport = videos.task { try await copyFiles(["d.mov", "e.mov"], progress: videos) }

    album.cancel()  // flows down to `videos`: the waiting checkpoint throws, `videoImport` is cancelled
    let videosStopped: Bool
    do {
        try await videoImport.value
        videosStopped = false
    } catch {
        videosStopped = error is CancellationError
    }
    return (album.fractionCompleted, videosStopped)  // (0.6, true): cancelled at 60%, the work done is kept
}
// END guide snippet

final class ControlConcurrencyGuideTests: XCTestCase {
    func test_guide_snippet_imports_then_cancels_at_60_percent() async throws {
        for _ in 0..<20 {
            let (fraction, videosStopped) = try await importAlbum()
            XCTAssertEqual(fraction, 0.6)
            XCTAssertTrue(videosStopped)
        }
    }

    func test_guide_snippet_matches_the_guide() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Docs/Cancellation.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)

        let marker = "<!-- snippet: cancellation-guide -->\n```swift\n"
        let afterMarker = try XCTUnwrap(guide.components(separatedBy: marker).dropFirst().first)
        let guideCode = try XCTUnwrap(afterMarker.components(separatedBy: "\n```").first)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("import ") || $0.isEmpty }
        let testCode = try XCTUnwrap(
            source.components(separatedBy: "// BEGIN guide snippet\n").dropFirst().first?
                .components(separatedBy: "\n// END guide snippet").first
        )
        .split(separator: "\n", omittingEmptySubsequences: false)

        XCTAssertEqual(Array(guideCode), Array(testCode))
    }
}
