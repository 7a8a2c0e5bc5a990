import ProgressTree
import XCTest

private struct Failure: Error, Equatable {}

/// Implicit composition, thread-local (`becomeCurrent`/`resignCurrent`/`performAsCurrent`) and task-local
/// (`withCurrent`): the first node created takes the whole pending count; no node credits it at scope end.
final class ImplicitCompositionTests: XCTestCase {
    override func tearDown() {
        // A test that leaves a node current would corrupt the tests after it on this thread.
        XCTAssertNil(ProgressNode.current(), "a test left a node current on this thread")
        super.tearDown()
    }

    // MARK: Thread-local

    func test_first_node_created_in_becomeCurrent_takes_the_whole_pending_count() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 4)
        let first = ProgressNode(totalUnitCount: 2)
        let second = ProgressNode(totalUnitCount: 2)
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 0, "the share was claimed: nothing credited at resignCurrent")

        first.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.2)  // 4 × 0.5 / 10

        second.completedUnitCount = 2  // not attached: does not move the parent
        XCTAssertEqual(parent.fractionCompleted, 0.2)
        XCTAssertEqual(parent.completedUnitCount, 0)

        first.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 4)
        XCTAssertEqual(parent.fractionCompleted, 0.4)
    }

    func test_resignCurrent_without_a_child_credits_the_pending_count() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 3)
        XCTAssertEqual(parent.completedUnitCount, 0)
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 3)
        XCTAssertEqual(parent.fractionCompleted, 0.3)
    }

    func test_current_inside_and_outside() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        XCTAssertNil(ProgressNode.current())
        parent.becomeCurrent(withPendingUnitCount: 1)
        XCTAssertTrue(ProgressNode.current() === parent)
        parent.resignCurrent()
        XCTAssertNil(ProgressNode.current())

        parent.performAsCurrent(withPendingUnitCount: 1) {
            XCTAssertTrue(ProgressNode.current() === parent)
        }
        XCTAssertNil(ProgressNode.current())

        parent.withCurrent(pendingUnitCount: 1) {
            XCTAssertTrue(ProgressNode.current() === parent)
        }
        XCTAssertNil(ProgressNode.current())
        XCTAssertEqual(parent.completedUnitCount, 3, "three scopes without a child: three credits of 1")
    }

    func test_nested_scopes_on_one_thread_stack() {
        let outer = ProgressNode.discreteProgress(totalUnitCount: 8)
        outer.becomeCurrent(withPendingUnitCount: 4)
        let inner = ProgressNode(totalUnitCount: 4)  // attaches to outer for 4 of 8
        inner.becomeCurrent(withPendingUnitCount: 2)
        XCTAssertTrue(ProgressNode.current() === inner)
        let leaf = ProgressNode(totalUnitCount: 2)  // attaches to inner for 2 of 4
        inner.resignCurrent()
        XCTAssertTrue(ProgressNode.current() === outer, "resigning the inner scope uncovers the outer one")
        let stray = ProgressNode(totalUnitCount: 1)  // outer's share is taken: not attached
        outer.resignCurrent()
        XCTAssertNil(ProgressNode.current())

        leaf.completedUnitCount = 1
        XCTAssertEqual(inner.fractionCompleted, 0.25)
        XCTAssertEqual(outer.fractionCompleted, 0.125)
        stray.advance()
        XCTAssertEqual(outer.fractionCompleted, 0.125)
        XCTAssertEqual(outer.completedUnitCount, 0)

        leaf.advance()
        XCTAssertEqual(inner.completedUnitCount, 2)
        XCTAssertEqual(outer.fractionCompleted, 0.25)
    }

    func test_nested_scopes_of_one_node_each_credit_their_own_share() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 2)
        parent.becomeCurrent(withPendingUnitCount: 3)
        let child = ProgressNode(totalUnitCount: 1)  // claims the innermost share, 3
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertTrue(ProgressNode.current() === parent)
        parent.resignCurrent()  // the outer share of 2 was never claimed
        XCTAssertEqual(parent.completedUnitCount, 2)
        child.advance()
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_an_inner_scope_without_a_child_credits_it_and_the_outer_scope_stays_claimable() {
        let outer = ProgressNode.discreteProgress(totalUnitCount: 10)
        let other = ProgressNode.discreteProgress(totalUnitCount: 10)
        outer.becomeCurrent(withPendingUnitCount: 5)
        other.becomeCurrent(withPendingUnitCount: 3)
        other.resignCurrent()
        XCTAssertEqual(other.completedUnitCount, 3)
        let child = ProgressNode(totalUnitCount: 2)  // outer is innermost again: attaches for 5
        outer.resignCurrent()
        XCTAssertEqual(outer.completedUnitCount, 0)
        child.advance()
        XCTAssertEqual(outer.fractionCompleted, 0.25)
        XCTAssertEqual(other.completedUnitCount, 3)
    }

    func test_performAsCurrent_attaches_the_first_node_and_returns_the_result() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = parent.performAsCurrent(withPendingUnitCount: 5) { ProgressNode(totalUnitCount: 4) }
        XCTAssertNil(ProgressNode.current())
        child.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.125)  // 5 × 0.25 / 10
        XCTAssertEqual(parent.completedUnitCount, 0)
    }

    func test_performAsCurrent_resigns_when_the_closure_throws() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        XCTAssertThrowsError(
            try parent.performAsCurrent(withPendingUnitCount: 4) { () throws(Failure) -> Void in throw Failure() }
        ) { XCTAssertEqual($0 as? Failure, Failure()) }
        XCTAssertNil(ProgressNode.current(), "the scope must be resigned when the closure throws")
        XCTAssertEqual(parent.completedUnitCount, 4, "no child was created: the share is credited")

        // A child created before the throw keeps the share.
        var created: ProgressNode?
        XCTAssertThrowsError(
            try parent.performAsCurrent(withPendingUnitCount: 6) { () throws(Failure) -> Void in
                created = ProgressNode(totalUnitCount: 2)
                throw Failure()
            })
        XCTAssertNil(ProgressNode.current())
        XCTAssertEqual(parent.completedUnitCount, 4)
        created?.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.7)  // (4 + 6 × 0.5) / 10
    }

    func test_init_parent_inside_becomeCurrent_attaches_with_the_pending_count() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 5)
        let child = ProgressNode(parent: parent, userInfo: nil)
        XCTAssertEqual(child.totalUnitCount, 0)
        XCTAssertEqual(child.completedUnitCount, 0)
        let second = ProgressNode(totalUnitCount: 1)  // the share is taken
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 0)

        child.totalUnitCount = 4
        child.completedUnitCount = 2
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        second.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        child.completedUnitCount = 4
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_init_parent_inside_withCurrent_attaches_with_the_pending_count() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = parent.withCurrent(pendingUnitCount: 5) { ProgressNode(parent: parent) }
        XCTAssertEqual(parent.completedUnitCount, 0)
        child.totalUnitCount = 2
        child.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.25)
    }

    func test_init_parent_nil_never_attaches() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 5)
        let loose = ProgressNode(parent: nil, userInfo: nil)
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 5, "unclaimed share credited: the nil-parent node did not take it")
        loose.totalUnitCount = 2
        loose.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_discreteProgress_never_attaches_even_when_a_node_is_current() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 5)
        let discrete = ProgressNode.discreteProgress(totalUnitCount: 10)
        discrete.completedUnitCount = 5
        XCTAssertEqual(parent.fractionCompleted, 0, "an attached node at 50% would show 0.25 here")
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        discrete.completedUnitCount = 10
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_explicit_init_with_parent_ignores_the_current_node() {
        let current = ProgressNode.discreteProgress(totalUnitCount: 10)
        let explicitParent = ProgressNode.discreteProgress(totalUnitCount: 10)
        current.becomeCurrent(withPendingUnitCount: 5)
        let child = ProgressNode(totalUnitCount: 2, parent: explicitParent, pendingUnitCount: 4)
        current.resignCurrent()
        XCTAssertEqual(current.completedUnitCount, 5, "the explicit child did not claim the current share")
        child.advance()
        XCTAssertEqual(explicitParent.fractionCompleted, 0.2)
        XCTAssertEqual(current.fractionCompleted, 0.5)
    }

    func test_a_node_created_on_another_thread_does_not_see_this_threads_current_node() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 5)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            XCTAssertNil(ProgressNode.current())
            let node = ProgressNode(totalUnitCount: 2)
            node.advance()
            done.signal()
        }
        thread.start()
        done.wait()
        XCTAssertEqual(parent.fractionCompleted, 0, "the other thread's node must not attach here")
        parent.resignCurrent()
        XCTAssertEqual(parent.completedUnitCount, 5)
    }

    // MARK: Task-local, synchronous overload

    func test_withCurrent_sync_first_node_attaches_and_later_ones_do_not() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let (first, second) = parent.withCurrent(pendingUnitCount: 4) {
            (ProgressNode(totalUnitCount: 2), ProgressNode(totalUnitCount: 2))
        }
        XCTAssertEqual(parent.completedUnitCount, 0)
        second.completedUnitCount = 2
        XCTAssertEqual(parent.fractionCompleted, 0)
        first.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.2)
        first.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 4)
    }

    func test_withCurrent_sync_without_a_node_credits_the_pending_count() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let value = parent.withCurrent(pendingUnitCount: 3) {
            XCTAssertEqual(parent.completedUnitCount, 0, "credited at the end of the scope, not before")
            return 42
        }
        XCTAssertEqual(value, 42)
        XCTAssertEqual(parent.completedUnitCount, 3)
    }

    func test_withCurrent_sync_throwing_credits_the_pending_count_and_rethrows() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        XCTAssertThrowsError(
            try parent.withCurrent(pendingUnitCount: 3) { () throws(Failure) -> Void in throw Failure() }
        ) { XCTAssertEqual($0 as? Failure, Failure()) }
        XCTAssertEqual(parent.completedUnitCount, 3)
        XCTAssertNil(ProgressNode.current())
    }

    func test_withCurrent_sync_nested_in_becomeCurrent_and_back() {
        let threadParent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let taskParent = ProgressNode.discreteProgress(totalUnitCount: 10)
        threadParent.becomeCurrent(withPendingUnitCount: 2)
        let viaTask = taskParent.withCurrent(pendingUnitCount: 4) { ProgressNode(totalUnitCount: 2) }
        let viaThread = ProgressNode(totalUnitCount: 2)
        threadParent.resignCurrent()

        // And the other way round: a becomeCurrent inside withCurrent is the innermost.
        let inner = taskParent.withCurrent(pendingUnitCount: 6) {
            threadParent.becomeCurrent(withPendingUnitCount: 8)
            defer { threadParent.resignCurrent() }
            return ProgressNode(totalUnitCount: 2)
        }
        XCTAssertEqual(taskParent.completedUnitCount, 6, "its scope was not the innermost: nothing claimed it")

        viaTask.advance()
        viaThread.advance()
        inner.advance()
        XCTAssertEqual(taskParent.fractionCompleted, 0.8)  // (6 + 4 × 0.5) / 10
        XCTAssertEqual(threadParent.fractionCompleted, 0.5)  // (2 × 0.5 + 8 × 0.5) / 10
    }

    // MARK: Task-local, asynchronous overload

    func test_withCurrent_async_first_node_attaches_across_suspension_points() async {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let (first, second) = await parent.withCurrent(pendingUnitCount: 4) {
            () async -> (ProgressNode, ProgressNode) in
            await Task.yield()
            XCTAssertTrue(ProgressNode.current() === parent)
            let first = ProgressNode(totalUnitCount: 2)
            await Task.yield()
            return (first, ProgressNode(totalUnitCount: 2))
        }
        XCTAssertNil(ProgressNode.current())
        XCTAssertEqual(parent.completedUnitCount, 0)
        second.advance(by: 2)
        first.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.2)
    }

    func test_withCurrent_async_without_a_node_credits_at_the_end() async {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        await parent.withCurrent(pendingUnitCount: 7) { () async -> Void in
            await Task.yield()
            XCTAssertEqual(parent.completedUnitCount, 0)
        }
        XCTAssertEqual(parent.completedUnitCount, 7)
    }

    func test_withCurrent_async_throwing_credits_at_the_end() async {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        do {
            try await parent.withCurrent(pendingUnitCount: 7) { () async throws -> Void in
                await Task.yield()
                throw Failure()
            }
            XCTFail("withCurrent must rethrow")
        } catch {
            XCTAssertEqual(error as? Failure, Failure())
        }
        XCTAssertEqual(parent.completedUnitCount, 7)
    }

    func test_withCurrent_async_binding_is_inherited_by_async_let() async {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = await parent.withCurrent(pendingUnitCount: 6) { () async -> ProgressNode in
            async let made: ProgressNode = {
                XCTAssertTrue(ProgressNode.current() === parent)
                return ProgressNode(totalUnitCount: 4)
            }()
            return await made
        }
        XCTAssertEqual(parent.completedUnitCount, 0, "the child task's node claimed the share")
        child.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.15)  // 6 × 0.25 / 10
    }

    func test_withCurrent_async_binding_is_inherited_by_a_task_group() async {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = await parent.withCurrent(pendingUnitCount: 5) { () async -> ProgressNode? in
            await withTaskGroup(of: ProgressNode.self) { group in
                group.addTask { ProgressNode(totalUnitCount: 2) }
                return await group.next()
            }
        }
        XCTAssertEqual(parent.completedUnitCount, 0)
        child?.advance()
        XCTAssertEqual(parent.fractionCompleted, 0.25)
    }

    /// Many child tasks create a node under one binding at once: exactly one of them attaches.
    func test_concurrent_tasks_racing_for_one_binding_exactly_one_wins() async {
        let taskCount = 64
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        let nodes = await parent.withCurrent(pendingUnitCount: 100) { () async -> [ProgressNode] in
            await withTaskGroup(of: ProgressNode.self) { group in
                for _ in 0..<taskCount { group.addTask { ProgressNode(totalUnitCount: 2) } }
                var nodes: [ProgressNode] = []
                for await node in group { nodes.append(node) }
                return nodes
            }
        }
        XCTAssertEqual(nodes.count, taskCount)
        XCTAssertEqual(parent.completedUnitCount, 0, "one node claimed the share, so the scope credited nothing")
        for node in nodes { node.advance() }
        // Exactly one attached node at 1/2 gives 0.5; two or more would give 1.0 (clamped), none 1.0 too.
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        for node in nodes { node.advance() }
        XCTAssertEqual(parent.completedUnitCount, 100, "exactly one share of 100 credited")
        XCTAssertTrue(parent.isFinished)
    }

    // MARK: Nesting and late nodes

    func test_nested_becomeCurrent_of_two_nodes_inner_takes_the_child_outer_is_credited() {
        let outer = ProgressNode(totalUnitCount: 10)
        let inner = ProgressNode(totalUnitCount: 10)
        outer.becomeCurrent(withPendingUnitCount: 4)
        inner.becomeCurrent(withPendingUnitCount: 6)
        XCTAssertTrue(ProgressNode.current() === inner)
        let child = ProgressNode(totalUnitCount: 2)
        inner.resignCurrent()
        XCTAssertTrue(ProgressNode.current() === outer)
        outer.resignCurrent()
        XCTAssertNil(ProgressNode.current())
        XCTAssertEqual(outer.completedUnitCount, 4, "no node attached to outer: credited at resign")
        child.advance()
        XCTAssertEqual(inner.fractionCompleted, 0.3)
        XCTAssertEqual(outer.fractionCompleted, 0.4)
    }

    func test_performAsCurrent_with_pending_zero_attaches_a_child_worth_nothing() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = parent.performAsCurrent(withPendingUnitCount: 0) { ProgressNode(totalUnitCount: 2) }
        XCTAssertEqual(parent.children.count, 1)
        child.advance()
        XCTAssertEqual(parent.fractionCompleted, 0)
        child.advance()
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertTrue(parent.children.isEmpty)
    }

    func test_a_task_started_in_withCurrent_creating_its_node_after_the_scope_ended_does_not_attach() async {
        let parent = ProgressNode(totalUnitCount: 10)
        let gate = AsyncGate()
        let task = parent.withCurrent(pendingUnitCount: 5) {
            Task {
                await gate.wait(); return ProgressNode(totalUnitCount: 1)
            }
        }
        XCTAssertEqual(parent.completedUnitCount, 5, "nothing attached by the end of the scope: credited")
        await gate.open()
        let late = await task.value
        XCTAssertTrue(parent.children.isEmpty)
        late.advance()
        XCTAssertEqual(parent.completedUnitCount, 5)
    }
}
