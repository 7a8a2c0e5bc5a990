import Dispatch
import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// A gate that async work waits at until the test opens it; waiting ignores task cancellation.
private final class ActivityGate: Sendable {
    private let state = Lock<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

private struct LoadFailed: Error, Equatable {}

/// Everything here runs work on other threads or tasks, hence "Concurrency": `.ci/run` also runs it under
/// ThreadSanitizer.
final class ActivityLoaderConcurrencyTests: XCTestCase {
    // MARK: async

    func test_async_activity_is_indeterminate_while_running_and_finished_when_it_returns() async throws {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = ActivityGate()
        let proceed = ActivityGate()
        let call = Task {
            try await node.performActivity {
                started.open(); await proceed.wait(); return 42
            }
        }
        await started.wait()
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertEqual(node.totalUnitCount, -1)
        XCTAssertEqual(node.completedUnitCount, 0)
        XCTAssertFalse(node.isFinished)
        XCTAssertFalse(node.isCancelled)
        proceed.open()
        let value = try await call.value
        XCTAssertEqual(value, 42)
        XCTAssertTrue(node.isFinished)
        XCTAssertFalse(node.isIndeterminate)
        XCTAssertEqual(node.fractionCompleted, 1)
    }

    func test_async_error_ends_the_activity_failed_with_that_error_and_is_rethrown() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        do {
            _ = try await node.performActivity { () async throws -> Int in throw LoadFailed() }
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error as? LoadFailed, LoadFailed())
        }
        XCTAssertTrue(node.isFailed)
        XCTAssertEqual(node.failure as? LoadFailed, LoadFailed())
        XCTAssertFalse(node.isFinished)
        XCTAssertFalse(node.isCancelled)
        XCTAssertEqual(node.fractionCompleted, 0)
    }

    func test_cancelling_the_node_cancels_the_async_work_and_throws() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = ActivityGate()
        let call = Task {
            try await node.performActivity { () async throws -> Int in
                started.open()
                try await Task.sleep(for: .seconds(60))  // ends early only by cancellation
                return 1
            }
        }
        await started.wait()
        node.cancel()
        let result = await call.result
        XCTAssertTrue(result.error is CancellationError, "\(result)")
        XCTAssertTrue(node.isCancelled)
        XCTAssertFalse(node.isFinished)
    }

    func test_cancelling_the_calling_task_cancels_the_node_and_throws() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = ActivityGate()
        let call = Task {
            try await node.performActivity { () async throws -> Int in
                started.open()
                try await Task.sleep(for: .seconds(60))
                return 1
            }
        }
        await started.wait()
        call.cancel()
        let result = await call.result
        XCTAssertTrue(result.error is CancellationError, "\(result)")
        XCTAssertTrue(node.isCancelled)
    }

    func test_async_result_is_discarded_when_the_node_was_cancelled_meanwhile() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = ActivityGate()
        let proceed = ActivityGate()
        let call = Task {
            try await node.performActivity {
                started.open(); await proceed.wait(); return 7
            }
        }
        await started.wait()
        node.cancel()
        proceed.open()
        let result = await call.result
        XCTAssertTrue(result.error is CancellationError, "\(result)")
        XCTAssertTrue(node.isCancelled)
        XCTAssertFalse(node.isFinished)
    }

    func test_async_work_does_not_run_when_the_node_is_already_cancelled() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        node.cancel()
        let ran = Atomic<Bool>(false)
        do {
            _ = try await node.performActivity {
                ran.store(true, ordering: .relaxed); return 1
            }
            XCTFail("expected CancellationError")
        } catch {
            XCTAssertTrue(error is CancellationError)
        }
        XCTAssertFalse(ran.load(ordering: .relaxed))
    }

    func test_an_attached_activity_credits_its_parent_when_it_finishes() async throws {
        let screen = ProgressNode.discreteProgress(totalUnitCount: 10)
        let loading = ProgressNode(totalUnitCount: 0, parent: screen, pendingUnitCount: 4)
        let rows = try await loading.performActivity { ["a", "b"] }
        XCTAssertEqual(rows, ["a", "b"])
        XCTAssertEqual(screen.completedUnitCount, 4)
        XCTAssertEqual(screen.fractionCompleted, 0.4)
    }

    // MARK: Closure on a queue

    private let workKey = DispatchSpecificKey<String>()

    private func queues() -> (work: DispatchQueue, completion: DispatchQueue) {
        let work = DispatchQueue(label: "activity.work")
        let completion = DispatchQueue(label: "activity.completion")
        work.setSpecific(key: workKey, value: "work")
        completion.setSpecific(key: workKey, value: "completion")
        return (work, completion)
    }

    func test_closure_activity_runs_on_the_work_queue_and_delivers_on_the_completion_queue_finished() {
        let (workQueue, completionQueue) = queues()
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let seen = Lock<[String]>([])
        let delivered = expectation(description: "completion")
        let key = workKey
        node.performActivity(on: workQueue, deliveringOn: completionQueue) { () throws -> [Int] in
            seen.withLock { $0.append("work on \(DispatchQueue.getSpecific(key: key) ?? "?")") }
            started.signal()
            proceed.wait()
            return [1, 2, 3]
        } completion: { result in
            seen.withLock {
                $0.append("completion on \(DispatchQueue.getSpecific(key: key) ?? "?"), finished \(node.isFinished)")
            }
            XCTAssertEqual(try? result.get(), [1, 2, 3])
            delivered.fulfill()
        }
        XCTAssertTrue(node.isIndeterminate, "active as soon as the call returns")
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertFalse(node.isFinished)
        proceed.signal()
        wait(for: [delivered], timeout: 10)
        XCTAssertEqual(seen.withLock { $0 }, ["work on work", "completion on completion, finished true"])
        XCTAssertTrue(node.isFinished)
    }

    func test_closure_error_ends_the_activity_failed_and_is_passed_on() {
        let (workQueue, completionQueue) = queues()
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let delivered = expectation(description: "completion")
        node.performActivity(on: workQueue, deliveringOn: completionQueue) { () throws -> Int in
            throw LoadFailed()
        } completion: { result in
            XCTAssertEqual(result.error as? LoadFailed, LoadFailed())
            XCTAssertTrue(node.isFailed)
            XCTAssertFalse(node.isFinished)
            delivered.fulfill()
        }
        wait(for: [delivered], timeout: 10)
        XCTAssertFalse(node.isCancelled)
    }

    func test_closure_result_is_discarded_when_the_node_is_cancelled_during_the_work() {
        let (workQueue, completionQueue) = queues()
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let delivered = expectation(description: "completion")
        node.performActivity(on: workQueue, deliveringOn: completionQueue) { () throws -> Int in
            started.signal()
            proceed.wait()
            return 7
        } completion: { result in
            XCTAssertTrue(result.error is CancellationError, "\(result)")
            XCTAssertTrue(node.isCancelled)
            XCTAssertFalse(node.isFinished)
            delivered.fulfill()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        node.cancel()
        proceed.signal()
        wait(for: [delivered], timeout: 10)
    }

    func test_closure_work_that_stops_on_cancellation_cancels_the_activity() {
        let (workQueue, completionQueue) = queues()
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let delivered = expectation(description: "completion")
        node.performActivity(on: workQueue, deliveringOn: completionQueue) { () throws -> Int in
            started.signal()
            proceed.wait()
            try node.checkCancellation()
            return 7
        } completion: { result in
            XCTAssertTrue(result.error is CancellationError, "\(result)")
            delivered.fulfill()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        node.cancel()
        proceed.signal()
        wait(for: [delivered], timeout: 10)
        XCTAssertTrue(node.isCancelled)
        XCTAssertFalse(node.isFinished)
    }

    func test_closure_work_does_not_run_when_cancelled_before_it_starts() {
        let (workQueue, completionQueue) = queues()
        let node = ProgressNode.discreteProgress(totalUnitCount: 0)
        let ran = Atomic<Bool>(false)
        let delivered = expectation(description: "completion")
        workQueue.suspend()
        node.performActivity(on: workQueue, deliveringOn: completionQueue) { () throws -> Int in
            ran.store(true, ordering: .relaxed)
            return 1
        } completion: { result in
            XCTAssertTrue(result.error is CancellationError, "\(result)")
            delivered.fulfill()
        }
        node.cancel()
        workQueue.resume()
        wait(for: [delivered], timeout: 10)
        XCTAssertFalse(ran.load(ordering: .relaxed))
        XCTAssertTrue(node.isCancelled)
    }

    // MARK: The guide's snippets (Docs/Presentation.md)

    func test_guide_activity_async() async throws {
        struct Service: Sendable { func fetchRows() async throws -> [String] { ["Ada", "Grace"] } }
        let service = Service()

        // BEGIN snippet: presentation-activity-async
        let loading = ProgressNode.discreteProgress(totalUnitCount: 0)  // the view shows a spinner while
        // `loading` is indeterminate and neither finished nor cancelled
        let rows = try await loading.performActivity {
            try await service.fetchRows()
        }
        // here: loading.isFinished == true
        // END snippet: presentation-activity-async

        XCTAssertEqual(rows, ["Ada", "Grace"])
        XCTAssertTrue(loading.isFinished)
    }

    func test_guide_activity_closure() {
        struct Database: Sendable { func fetchRows() throws -> [String] { ["Ada", "Grace"] } }
        let database = Database()
        let mainQueue = DispatchQueue(label: "ui")  // stands for DispatchQueue.main
        let shown = Lock<[String]>([])
        let delivered = expectation(description: "delivered")
        @Sendable func show(_ rows: [String]) { shown.withLock { $0 = rows }; delivered.fulfill() }
        @Sendable func show(_ error: any Error) { XCTFail("\(error)"); delivered.fulfill() }

        // BEGIN snippet: presentation-activity-closure
        let loading = ProgressNode.discreteProgress(totalUnitCount: 0)
        loading.performActivity(on: .global(qos: .userInitiated), deliveringOn: mainQueue) {
            try database.fetchRows()
        } completion: { result in
            switch result {  // on mainQueue; loading is finished (or cancelled, or failed) by now
            case .success(let rows): show(rows)
            case .failure(let error): show(error)
            }
        }
        // END snippet: presentation-activity-closure

        wait(for: [delivered], timeout: 10)
        XCTAssertEqual(shown.withLock { $0 }, ["Ada", "Grace"])
        XCTAssertTrue(loading.isFinished)
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
