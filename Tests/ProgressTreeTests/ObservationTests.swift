import Dispatch
import Foundation
import Synchronization
import TestSupport
import XCTest

@testable import ProgressTree
import ProgressTreePlatform

// Single-thread semantics of `observe(_:on:options:minimumInterval:changeHandler:)` and `snapshots`: one
// thread makes the changes, the observer's queue runs the handlers. A slow observer is simulated by
// suspending its queue, or by a handler that blocks until the test lets it go; deliveries are awaited
// with expectations (the timeouts only detect hangs).
//
// Some tests must prove that a delivery did *not* happen. They drain the observer's serial queue: a block
// submitted to it runs after every delivery already scheduled for it, because an observation's own queue
// is enqueued on its target queue at the moment it gets work, and a serial queue runs its items in order.

/// How long a test waits before calling something a hang. Deliveries normally arrive within microseconds.
let observationHangTimeout: TimeInterval = 30

/// One delivery, as the handler received it.
struct Delivery<Value: Equatable & Sendable>: Equatable, Sendable, CustomStringConvertible {
    var old: Value?
    var new: Value

    init(_ old: Value?, _ new: Value) {
        self.old = old
        self.new = new
    }

    init(_ change: ProgressNode.Change<Value>) {
        self.init(change.oldValue, change.newValue)
    }

    var description: String { "\(old.map { "\($0)" } ?? "nil") → \(new)" }
}

/// Records the deliveries of one observation, and fulfils expectations when a given value arrives.
final class DeliveryLog<Value: Equatable & Sendable>: Sendable {
    private struct Waiter {
        let value: Value
        let expectation: XCTestExpectation
    }

    private struct State {
        var deliveries: [Delivery<Value>] = []
        var waiters: [Waiter] = []
    }

    private let state = Lock(State())

    var deliveries: [Delivery<Value>] { state.withLock { $0.deliveries } }
    var count: Int { state.withLock { $0.deliveries.count } }
    var last: Delivery<Value>? { state.withLock { $0.deliveries.last } }

    func record(_ change: ProgressNode.Change<Value>) {
        record(Delivery(change))
    }

    /// Records a value that is not a change (such as a printed line).
    func append(_ value: Value) {
        record(Delivery(nil, value))
    }

    private func record(_ delivery: Delivery<Value>) {
        let fulfilled = state.withLock { state -> [XCTestExpectation] in
            state.deliveries.append(delivery)
            let matching = state.waiters.filter { $0.value == delivery.new }.map(\.expectation)
            state.waiters.removeAll { $0.value == delivery.new }
            return matching
        }
        for expectation in fulfilled { expectation.fulfill() }
    }

    /// An expectation fulfilled by the first delivery of `value`, already recorded or still to come.
    func expectation(delivering value: Value) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: "delivery of \(value)")
        let delivered = state.withLock { state -> Bool in
            if state.deliveries.contains(where: { $0.new == value }) { return true }
            state.waiters.append(Waiter(value: value, expectation: expectation))
            return false
        }
        if delivered { expectation.fulfill() }
        return expectation
    }
}

extension XCTestCase {
    /// Waits for a delivery of `value` to `log`.
    func waitForDelivery<Value>(
        of value: Value, to log: DeliveryLog<Value>, file: StaticString = #filePath, line: UInt = #line
    ) {
        let result = XCTWaiter().wait(for: [log.expectation(delivering: value)], timeout: observationHangTimeout)
        XCTAssertEqual(result, .completed, "no delivery of \(value); got \(log.deliveries)", file: file, line: line)
    }

    /// Waits until every block submitted to the serial `queue` so far has run, including the deliveries
    /// already scheduled on it (see the note at the top of this file).
    func drain(_ queue: DispatchQueue, file: StaticString = #filePath, line: UInt = #line) {
        let drained = XCTestExpectation(description: "queue drained")
        queue.async { drained.fulfill() }
        let result = XCTWaiter().wait(for: [drained], timeout: observationHangTimeout)
        XCTAssertEqual(result, .completed, "the queue did not drain", file: file, line: line)
    }
}

extension XCTestCase {
    /// Runs `changes` while `queue` is suspended, so that no delivery reads a state halfway through them.
    func whileSuspended(_ queue: DispatchQueue, _ changes: () -> Void) {
        queue.suspend()
        changes()
        queue.resume()
    }

    /// Checks that each delivery's old value is the previous delivery's new value (the first one's is
    /// `first`): deliveries came in order and none was lost between two handler calls.
    func assertChained<Value>(
        _ deliveries: [Delivery<Value>], from first: Value?, file: StaticString = #filePath, line: UInt = #line
    ) {
        var previous = first
        for delivery in deliveries {
            XCTAssertEqual(delivery.old, previous, "out of order in \(deliveries)", file: file, line: line)
            XCTAssertNotEqual(
                delivery.old, delivery.new, "an equal value delivered: \(delivery)", file: file, line: line)
            previous = delivery.new
        }
    }

}

/// Polls `condition`, yielding between polls, until it holds; `false` after the hang timeout.
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(observationHangTimeout)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        await Task.yield()
    }
    return true
}

/// Runs `body` in a child task; if it has not finished within the hang timeout, fails and cancels it
/// (which ends any `for await` loop over `snapshots` in it). Only a hang detector: a passing body never
/// waits for the timer.
func withHangDetection(
    file: StaticString = #filePath, line: UInt = #line, _ body: @escaping @Sendable () async -> Void
) async {
    let finished = await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await body()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(observationHangTimeout))
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
    if !finished { XCTFail("hang: not finished after \(observationHangTimeout) s", file: file, line: line) }
}

extension ProgressNode {
    /// The number of observations registered on this node (`snapshots` iterations included).
    var observerCount: Int { state.withLock { $0.observers.receivers.count } }
}

/// Reads of `fractionCompletedCountingReads`, by node.
private let fractionReads = Lock<[ObjectIdentifier: Int]>([:])

extension ProgressNode {
    /// `fractionCompleted`, counting its reads: an observation reads its value once per delivery that
    /// runs (and once at registration without `.initial`), so this counts the deliveries that ran,
    /// including those that found an equal value and called no handler.
    fileprivate var fractionCompletedCountingReads: Double {
        fractionReads.withLock { $0[ObjectIdentifier(self), default: 0] += 1 }
        return fractionCompleted
    }

    fileprivate var fractionReadCount: Int {
        get { fractionReads.withLock { $0[ObjectIdentifier(self)] ?? 0 } }
        set { fractionReads.withLock { $0[ObjectIdentifier(self)] = newValue } }
    }
}

/// A one-shot gate a handler can block on until the test opens it (a semaphore with a hang timeout).
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func open() { semaphore.signal() }

    /// Blocks until `open()`; `false` if that did not happen within the hang timeout.
    @discardableResult
    func wait() -> Bool {
        semaphore.wait(timeout: .now() + observationHangTimeout) == .success
    }
}

final class ObservationTests: XCTestCase {
    // MARK: Where and how handlers run

    func test_handler_runs_on_the_given_queue_with_the_observed_node() {
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let wrongContext = Atomic<Int>(0)
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { observed, change in
            dispatchPrecondition(condition: .onQueue(queue))
            if DispatchQueue.getSpecific(key: key) != "observer" { wrongContext.add(1, ordering: .relaxed) }
            if observed !== node { wrongContext.add(1, ordering: .relaxed) }
            log.record(change)
        }
        waitForDelivery(of: 0, to: log)
        node.advance(by: 4)
        waitForDelivery(of: 4, to: log)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0), Delivery(0, 4)])
        XCTAssertEqual(wrongContext.load(ordering: .relaxed), 0)
    }

    func test_deliveries_arrive_in_order_each_old_value_being_the_previous_new_value() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 100)
        let log = DeliveryLog<Int64>()
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            log.record(change)
        }
        waitForDelivery(of: 0, to: log)
        for value: Int64 in [3, 1, 4, 15, 9, 26] {
            node.completedUnitCount = value
            waitForDelivery(of: value, to: log)
        }
        token.invalidate()

        XCTAssertEqual(
            log.deliveries,
            [
                Delivery(nil, 0), Delivery(0, 3), Delivery(3, 1), Delivery(1, 4), Delivery(4, 15), Delivery(15, 9),
                Delivery(9, 26),
            ])
    }

    /// A handler that blocks with a delivery already scheduled behind it: on a concurrent queue that
    /// scheduled delivery could start at once on another thread if handlers were not serialized.
    func test_handlers_of_one_observation_never_overlap_on_a_concurrent_queue() {
        let queue = DispatchQueue(label: "observer", attributes: .concurrent)
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let running = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let firstEntered = Gate()
        let releaseFirst = Gate()
        let secondStarted = XCTestExpectation(description: "second handler started while the first ran")
        secondStarted.isInverted = true
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            dispatchPrecondition(condition: .onQueue(queue))
            if running.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                overlaps.add(1, ordering: .relaxed)
                secondStarted.fulfill()
            }
            log.record(change)
            if change.oldValue == nil {
                firstEntered.open()
                releaseFirst.wait()
            }
            running.subtract(1, ordering: .sequentiallyConsistent)
        }
        XCTAssertTrue(firstEntered.wait())
        node.advance(by: 5)  // schedules the next delivery while the first handler runs
        // Proving that something does not happen takes a window: a second handler allowed to overlap
        // would start within microseconds on the concurrent queue.
        wait(for: [secondStarted], timeout: 0.2)
        releaseFirst.open()
        waitForDelivery(of: 5, to: log)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0), Delivery(0, 5)])
        XCTAssertEqual(overlaps.load(ordering: .relaxed), 0)
    }

    // MARK: Coalescing

    func test_a_million_updates_against_a_suspended_queue_make_one_delivery_of_the_newest_value() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let leaf = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1_000_000)
        let log = DeliveryLog<Double>()
        queue.suspend()
        let token = root.observe(\.fractionCompleted, on: queue) { _, change in log.record(change) }
        for _ in 0..<1_000_000 { leaf.advance() }
        XCTAssertEqual(log.count, 0, "the suspended queue ran a handler")
        queue.resume()
        waitForDelivery(of: 1, to: log)
        drain(queue)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(0, 1)])
    }

    func test_a_million_updates_with_initial_against_a_suspended_queue_make_one_initial_delivery() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 2_000_000)
        let log = DeliveryLog<Int64>()
        queue.suspend()
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            log.record(change)
        }
        for _ in 0..<1_000_000 { node.advance() }
        queue.resume()
        waitForDelivery(of: 1_000_000, to: log)
        drain(queue)
        token.invalidate()

        // The initial delivery runs late and carries the newest value, still with `oldValue == nil`.
        XCTAssertEqual(log.deliveries, [Delivery(nil, 1_000_000)])
    }

    /// Reading the tree after each update makes each update a new change to signal (the read brings the
    /// tree up to date); still only one delivery is pending at a time.
    func test_a_million_updates_each_followed_by_a_read_against_a_suspended_queue_make_one_delivery() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let leaf = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1_000_000)
        let log = DeliveryLog<Double>()
        root.fractionReadCount = 0
        queue.suspend()
        let token = root.observe(\.fractionCompletedCountingReads, on: queue) { _, change in log.record(change) }
        var sum = 0.0
        for _ in 0..<1_000_000 {
            leaf.advance()
            sum += root.fractionCompleted
        }
        queue.resume()
        waitForDelivery(of: 1, to: log)
        drain(queue)
        token.invalidate()

        XCTAssertGreaterThan(sum, 0)
        XCTAssertEqual(log.deliveries, [Delivery(0, 1)])
        // One read at registration, one by the single delivery: no other delivery even ran.
        XCTAssertEqual(root.fractionReadCount, 2)
    }

    /// A slow handler (blocked while a million updates happen, each followed by a read) gets exactly one
    /// more delivery, carrying the newest value: at most one delivery is pending per observation.
    func test_a_blocked_handler_gets_exactly_one_more_delivery_after_a_million_updates() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let log = DeliveryLog<Double>()
        let entered = Gate()
        let release = Gate()
        node.fractionReadCount = 0
        let token = node.observe(\.fractionCompletedCountingReads, on: queue, options: .initial) { _, change in
            log.record(change)
            if change.oldValue == nil {
                entered.open()
                release.wait()
            }
        }
        XCTAssertTrue(entered.wait())
        for _ in 0..<1_000_000 {
            node.advance()
            _ = node.fractionCompleted
        }
        release.open()
        waitForDelivery(of: 1, to: log)
        drain(queue)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0), Delivery(0, 1)])
        XCTAssertEqual(node.fractionReadCount, 2, "a delivery ran that was not needed")
    }

    // MARK: Equal values

    func test_changes_that_leave_the_value_equal_are_not_delivered() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = 5
        let log = DeliveryLog<Double>()
        let token = node.observe(\.fractionCompleted, on: queue) { _, change in log.record(change) }
        drain(queue)  // the delivery `observe` schedules has run: none can read between two parts below
        // Each step changes the node and its delivery runs (the queue is drained), but finds the same
        // fraction: 5/10 = 10/20 = 20/40 = 0.5. (The queue is suspended during each two-part change, so
        // that no delivery reads the value in between.)
        whileSuspended(queue) {
            node.totalUnitCount = 20
            node.completedUnitCount = 10
        }
        drain(queue)
        whileSuspended(queue) {
            node.totalUnitCount = 40
            node.completedUnitCount = 20
        }
        drain(queue)
        XCTAssertEqual(log.deliveries, [])
        node.completedUnitCount = 30
        waitForDelivery(of: 0.75, to: log)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(0.5, 0.75)])
    }

    func test_an_equal_value_is_skipped_between_two_different_ones() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let log = DeliveryLog<Double>()
        let token = node.observe(\.fractionCompleted, on: queue, options: .initial) { _, change in
            log.record(change)
        }
        waitForDelivery(of: 0, to: log)
        node.completedUnitCount = 1
        waitForDelivery(of: 0.25, to: log)
        node.totalUnitCount = 8  // 1/8: a new value
        waitForDelivery(of: 0.125, to: log)
        node.completedUnitCount = 2  // 2/8 = 0.25: differs from the last delivered value, so delivered
        waitForDelivery(of: 0.25, to: log)
        whileSuspended(queue) {
            node.totalUnitCount = 16
            node.completedUnitCount = 4  // 4/16 = 0.25 again: skipped
        }
        drain(queue)
        node.advance(by: 12)
        waitForDelivery(of: 1, to: log)
        token.invalidate()

        XCTAssertEqual(
            log.deliveries,
            [Delivery(nil, 0), Delivery(0, 0.25), Delivery(0.25, 0.125), Delivery(0.125, 0.25), Delivery(0.25, 1)])
    }

    // MARK: The final value

    func test_the_finished_value_is_delivered_after_a_burst_from_another_thread() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 100_000)
        let log = DeliveryLog<Int64>()
        let finished = DeliveryLog<Bool>()
        let counts = node.observe(\.completedUnitCount, on: queue) { _, change in log.record(change) }
        let flags = node.observe(\.isFinished, on: queue) { _, change in finished.record(change) }
        DispatchQueue.global().async { for _ in 0..<100_000 { node.advance() } }
        waitForDelivery(of: 100_000, to: log)
        waitForDelivery(of: true, to: finished)
        drain(queue)
        counts.invalidate()
        flags.invalidate()

        XCTAssertEqual(log.last?.new, 100_000)
        XCTAssertEqual(log.deliveries.filter { $0.new == 100_000 }.count, 1)
        assertChained(log.deliveries, from: 0)
        XCTAssertEqual(finished.deliveries, [Delivery(false, true)])
    }

    func test_cancellation_is_delivered_to_an_observer_of_is_cancelled() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        let rootLog = DeliveryLog<Bool>()
        let childLog = DeliveryLog<Bool>()
        let rootToken = root.observe(\.isCancelled, on: queue) { _, change in rootLog.record(change) }
        let childToken = child.observe(\.isCancelled, on: queue) { _, change in childLog.record(change) }
        root.cancel()
        waitForDelivery(of: true, to: rootLog)
        waitForDelivery(of: true, to: childLog)
        rootToken.invalidate()
        childToken.invalidate()

        XCTAssertEqual(rootLog.deliveries, [Delivery(false, true)])
        XCTAssertEqual(childLog.deliveries, [Delivery(false, true)])
    }

    func test_cancellation_after_a_burst_against_a_suspended_queue_is_the_one_delivery() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let log = DeliveryLog<ProgressNode.Snapshot>()
        queue.suspend()
        let token = node.observe(\.snapshot, on: queue) { _, change in log.record(change) }
        for _ in 0..<500_000 { node.advance() }
        node.cancel()
        queue.resume()
        let cancelledAtHalf = ProgressNode.Snapshot(
            totalUnitCount: 1_000_000, completedUnitCount: 500_000, fractionCompleted: 0.5, isIndeterminate: false,
            isFinished: false, isCancelled: true, isPaused: false)
        waitForDelivery(of: cancelledAtHalf, to: log)
        drain(queue)
        token.invalidate()

        XCTAssertEqual(log.deliveries.map(\.new), [cancelledAtHalf])
        XCTAssertEqual(log.deliveries.first?.old?.completedUnitCount, 0)
        XCTAssertEqual(log.deliveries.first?.old?.isCancelled, false)
    }

    // MARK: Invalidation

    func test_no_delivery_starts_after_invalidate_even_one_already_scheduled() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        queue.suspend()
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            log.record(change)
        }
        node.advance()  // a delivery is scheduled on the suspended queue
        token.invalidate()
        XCTAssertEqual(node.observerCount, 0)
        node.advance()
        queue.resume()
        drain(queue)
        node.advance()
        drain(queue)

        XCTAssertEqual(log.deliveries, [])
    }

    func test_releasing_the_token_invalidates_the_observation() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        var token: ProgressObservation? = node.observe(\.completedUnitCount, on: queue, options: .initial) {
            _, change in log.record(change)
        }
        waitForDelivery(of: 0, to: log)
        XCTAssertEqual(node.observerCount, 1)
        XCTAssertNotNil(token)
        queue.suspend()
        node.advance()  // scheduled on the suspended queue, then the token goes away
        token = nil
        XCTAssertEqual(node.observerCount, 0)
        queue.resume()
        drain(queue)
        node.advance()
        drain(queue)

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0)])
    }

    func test_invalidate_from_outside_waits_for_a_running_handler() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let handlerEntered = Gate()
        let releaseHandler = Gate()
        let events = Lock<[String]>([])
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, _ in
            handlerEntered.open()
            releaseHandler.wait()
            events.withLock { $0.append("handler returned") }
        }
        XCTAssertTrue(handlerEntered.wait())
        let invalidated = XCTestExpectation(description: "invalidate returned")
        let invalidatedEarly = XCTestExpectation(description: "invalidate returned while the handler ran")
        invalidatedEarly.isInverted = true
        DispatchQueue.global().async {
            token.invalidate()
            events.withLock { $0.append("invalidate returned") }
            invalidatedEarly.fulfill()
            invalidated.fulfill()
        }
        // A window for a wrong `invalidate()` to return while the handler still runs.
        wait(for: [invalidatedEarly], timeout: 0.2)
        releaseHandler.open()
        wait(for: [invalidated], timeout: observationHangTimeout)

        XCTAssertEqual(events.withLock { $0 }, ["handler returned", "invalidate returned"])
    }

    func test_invalidating_from_inside_the_handler_ends_the_observation_without_deadlock() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let token = Lock<ProgressObservation?>(nil)
        let invalidated = XCTestExpectation(description: "invalidated inside the handler")
        queue.suspend()  // the first delivery must find the token stored
        let observation = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            log.record(change)
            token.withLock { $0 }?.invalidate()
            token.withLock { $0 }?.invalidate()  // twice is fine
            invalidated.fulfill()
        }
        token.withLock { $0 = observation }
        queue.resume()
        wait(for: [invalidated], timeout: observationHangTimeout)
        XCTAssertEqual(node.observerCount, 0)
        node.advance()
        drain(queue)

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0)])
    }

    func test_releasing_the_last_token_reference_inside_its_own_handler_does_not_deadlock() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let token = Lock<ProgressObservation?>(nil)
        let released = XCTestExpectation(description: "token released inside the handler")
        queue.suspend()
        token.withLock {
            $0 = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
                log.record(change)
                let last = token.withLock { $0.take() }
                XCTAssertNotNil(last)
                _ = consume last  // the token's deinit runs here, inside its own handler
                released.fulfill()
            }
        }
        queue.resume()
        wait(for: [released], timeout: observationHangTimeout)
        XCTAssertEqual(node.observerCount, 0)
        node.advance()
        drain(queue)

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0)])
    }

    func test_invalidate_is_idempotent_and_leaves_other_observations_running() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let first = DeliveryLog<Int64>()
        let second = DeliveryLog<Int64>()
        let firstToken = node.observe(\.completedUnitCount, on: queue) { _, change in first.record(change) }
        let secondToken = node.observe(\.completedUnitCount, on: queue) { _, change in second.record(change) }
        XCTAssertEqual(node.observerCount, 2)
        firstToken.invalidate()
        firstToken.invalidate()
        XCTAssertEqual(node.observerCount, 1)
        node.advance(by: 2)
        waitForDelivery(of: 2, to: second)
        drain(queue)
        secondToken.invalidate()

        XCTAssertEqual(first.deliveries, [])
        XCTAssertEqual(second.deliveries, [Delivery(0, 2)])
    }

    // MARK: Options

    func test_initial_delivers_the_current_value_with_a_nil_old_value() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = 3
        let log = DeliveryLog<Int64>()
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
            log.record(change)
        }
        waitForDelivery(of: 3, to: log)
        node.completedUnitCount = 7
        waitForDelivery(of: 7, to: log)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(nil, 3), Delivery(3, 7)])
    }

    func test_without_initial_nothing_is_delivered_until_a_change_whose_old_value_is_the_registration_value() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = 3
        let log = DeliveryLog<Int64>()
        let token = node.observe(\.completedUnitCount, on: queue) { _, change in log.record(change) }
        drain(queue)
        XCTAssertEqual(log.deliveries, [])
        node.completedUnitCount = 7
        waitForDelivery(of: 7, to: log)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(3, 7)])
    }

    // MARK: Throttling

    func test_minimum_interval_bounds_the_deliveries_and_still_delivers_the_last_value() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 300_000)
        let log = DeliveryLog<Int64>()
        let interval = Duration.milliseconds(10)
        let clock = ContinuousClock()
        let start = clock.now
        let token = node.observe(\.completedUnitCount, on: queue, options: .initial, minimumInterval: interval) {
            _, change in log.record(change)
        }
        // Updates spread over many intervals: each waits a moment for the observer's queue to be idle.
        for step in 1...300 {
            for _ in 0..<1_000 { node.advance() }
            if step % 10 == 0 { drain(queue) }
        }
        waitForDelivery(of: 300_000, to: log)
        let elapsed = clock.now - start
        drain(queue)
        token.invalidate()

        // Deliveries at least `interval` apart: at most one per interval, plus the first.
        let bound = Int(elapsed / interval) + 1
        XCTAssertLessThanOrEqual(log.count, bound, "\(log.count) deliveries in \(elapsed)")
        XCTAssertEqual(log.last?.new, 300_000)
        XCTAssertEqual(log.deliveries.filter { $0.new == 300_000 }.count, 1)
        assertChained(log.deliveries, from: nil)
    }

    /// A burst made by the first handler itself, microseconds after that delivery: its changes fall
    /// inside the interval, and the last of them is delivered once the interval has passed.
    func test_minimum_interval_delivers_the_last_value_of_a_burst_inside_the_interval() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let token = node.observe(
            \.completedUnitCount, on: queue, options: .initial, minimumInterval: .milliseconds(20)
        ) { observed, change in
            log.record(change)
            if change.oldValue == nil {
                for value: Int64 in 1...7 { observed.completedUnitCount = value }
            }
        }
        waitForDelivery(of: 7, to: log)
        drain(queue)
        token.invalidate()

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0), Delivery(0, 7)])
    }

    // MARK: Values derived from descendants

    func test_root_fraction_and_is_finished_follow_a_grandchild() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 10)
        let grandchild = ProgressNode(totalUnitCount: 8, parent: child, pendingUnitCount: 4)
        let fractions = DeliveryLog<Double>()
        let finished = DeliveryLog<Bool>()
        let fractionToken = root.observe(\.fractionCompleted, on: queue) { _, change in fractions.record(change) }
        let finishedToken = root.observe(\.isFinished, on: queue) { _, change in finished.record(change) }

        grandchild.completedUnitCount = 2  // 2/8 → child 1/4 → root 2.5/10
        waitForDelivery(of: 0.25, to: fractions)
        grandchild.completedUnitCount = 6  // 6/8 → child 3/4 → root 7.5/10
        waitForDelivery(of: 0.75, to: fractions)
        drain(queue)
        XCTAssertEqual(finished.deliveries, [], "isFinished did not change")
        grandchild.completedUnitCount = 8  // finishes the grandchild, which finishes the child and the root
        waitForDelivery(of: 1, to: fractions)
        waitForDelivery(of: true, to: finished)
        drain(queue)
        fractionToken.invalidate()
        finishedToken.invalidate()

        XCTAssertEqual(fractions.deliveries, [Delivery(0, 0.25), Delivery(0.25, 0.75), Delivery(0.75, 1)])
        XCTAssertEqual(finished.deliveries, [Delivery(false, true)])
        XCTAssertEqual(root.completedUnitCount, 10)
    }

    func test_completed_unit_count_follows_a_child_finishing_and_being_credited() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        let child = ProgressNode(totalUnitCount: 5, parent: root, pendingUnitCount: 2)
        let counts = DeliveryLog<Int64>()
        let token = root.observe(\.completedUnitCount, on: queue) { _, change in counts.record(change) }
        child.advance(by: 4)  // partial progress shows in the fraction, not in the count
        drain(queue)
        XCTAssertEqual(counts.deliveries, [])
        child.advance()  // finished: its pending count of 2 is credited to the root
        waitForDelivery(of: 2, to: counts)
        root.advance()
        waitForDelivery(of: 3, to: counts)
        token.invalidate()

        XCTAssertEqual(counts.deliveries, [Delivery(0, 2), Delivery(2, 3)])
    }

    func test_a_child_added_to_an_observed_node_is_followed() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let fractions = DeliveryLog<Double>()
        let token = root.observe(\.fractionCompleted, on: queue) { _, change in fractions.record(change) }
        let child = ProgressNode.discreteProgress(totalUnitCount: 4)
        child.completedUnitCount = 2
        root.addChild(child, withPendingUnitCount: 1)  // half of half
        waitForDelivery(of: 0.25, to: fractions)
        child.advance(by: 2)
        waitForDelivery(of: 0.5, to: fractions)
        token.invalidate()

        XCTAssertEqual(fractions.deliveries, [Delivery(0, 0.25), Delivery(0.25, 0.5)])
    }

    // MARK: Handlers that call back into the library

    func test_a_handler_may_observe_another_node_add_children_and_cancel() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let other = ProgressNode.discreteProgress(totalUnitCount: 10)
        let snapshots = DeliveryLog<ProgressNode.Snapshot>()
        let otherLog = DeliveryLog<Int64>()
        let nested = Lock<[ProgressObservation]>([])
        let token = node.observe(\.snapshot, on: queue, options: .initial) { observed, change in
            snapshots.record(change)
            guard change.oldValue == nil else { return }
            // Inside the first delivery: observe another node (on the same queue and on another),
            // observe this node again, add a child, read the tree, then cancel.
            let onSameQueue = other.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
                otherLog.record(change)
            }
            let again = observed.observe(\.isCancelled, on: DispatchQueue(label: "other")) { _, _ in }
            nested.withLock { $0 += [onSameQueue, again] }
            let child = ProgressNode(totalUnitCount: 2, parent: observed, pendingUnitCount: 2)
            child.advance()
            XCTAssertEqual(observed.fractionCompleted, 0.25)
            observed.cancel()
            XCTAssertTrue(child.isCancelled)
        }
        let cancelled = ProgressNode.Snapshot(
            totalUnitCount: 4, completedUnitCount: 0, fractionCompleted: 0.25, isIndeterminate: false,
            isFinished: false, isCancelled: true, isPaused: false,
            descendantOutcomes: ProgressNode.DescendantOutcomes(cancelledCount: 1))  // the child
        waitForDelivery(of: cancelled, to: snapshots)
        waitForDelivery(of: 0, to: otherLog)
        other.advance(by: 3)
        waitForDelivery(of: 3, to: otherLog)
        token.invalidate()
        for observation in nested.withLock({ $0 }) { observation.invalidate() }

        XCTAssertEqual(snapshots.deliveries.count, 2, "\(snapshots.deliveries)")
        XCTAssertEqual(snapshots.deliveries.first?.new.fractionCompleted, 0)
        XCTAssertEqual(otherLog.deliveries, [Delivery(nil, 0), Delivery(0, 3)])
        XCTAssertEqual(node.observerCount, 0)
    }

    /// Two handlers running at once on two queues, each invalidating the other: neither waits for the
    /// other (invalidating from inside a handler does not wait), so they cannot deadlock.
    func test_two_handlers_invalidating_each_other_do_not_deadlock() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let tokens = Lock<[String: ProgressObservation]>([:])
        let entered = (a: Gate(), b: Gate())
        let done = (a: XCTestExpectation(description: "a returned"), b: XCTestExpectation(description: "b returned"))
        let runs = Atomic<Int>(0)
        let queues = (a: DispatchQueue(label: "a"), b: DispatchQueue(label: "b"))
        queues.a.suspend()
        queues.b.suspend()
        let a = node.observe(\.completedUnitCount, on: queues.a, options: .initial) { _, _ in
            runs.add(1, ordering: .relaxed)
            entered.a.open()
            entered.b.wait()  // both handlers are running now
            tokens.withLock { $0["b"] }?.invalidate()
            done.a.fulfill()
        }
        let b = node.observe(\.completedUnitCount, on: queues.b, options: .initial) { _, _ in
            runs.add(1, ordering: .relaxed)
            entered.b.open()
            entered.a.wait()
            tokens.withLock { $0["a"] }?.invalidate()
            done.b.fulfill()
        }
        tokens.withLock { $0 = ["a": a, "b": b] }
        queues.a.resume()
        queues.b.resume()
        wait(for: [done.a, done.b], timeout: observationHangTimeout)
        node.advance()
        drain(queues.a)
        drain(queues.b)

        XCTAssertEqual(runs.load(ordering: .relaxed), 2)
        XCTAssertEqual(node.observerCount, 0)
    }

    // MARK: Snapshots

    func test_snapshot_reads_every_field() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 2)
        root.advance()
        child.advance()
        root.pause()

        XCTAssertEqual(
            root.snapshot,
            ProgressNode.Snapshot(
                totalUnitCount: 4, completedUnitCount: 1, fractionCompleted: 0.5, isIndeterminate: false,
                isFinished: false, isCancelled: false, isPaused: true))
        XCTAssertFalse(root.snapshot.isFinal)
        XCTAssertTrue(ProgressNode.discreteProgress(totalUnitCount: 0).snapshot.isIndeterminate)
        root.cancel()
        XCTAssertTrue(root.snapshot.isFinal)
    }

    func test_snapshots_yield_the_current_snapshot_first_and_end_after_the_finished_one() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 4)
            node.completedUnitCount = 1
            var iterator = node.snapshots.makeAsyncIterator()
            let first = await iterator.next()
            XCTAssertEqual(
                first,
                ProgressNode.Snapshot(
                    totalUnitCount: 4, completedUnitCount: 1, fractionCompleted: 0.25, isIndeterminate: false,
                    isFinished: false, isCancelled: false, isPaused: false))
            node.advance()
            let second = await iterator.next()
            XCTAssertEqual(second?.completedUnitCount, 2)
            XCTAssertEqual(second?.fractionCompleted, 0.5)
            node.advance(by: 2)
            let last = await iterator.next()
            XCTAssertEqual(last?.completedUnitCount, 4)
            XCTAssertEqual(last?.isFinished, true)
            let end = await iterator.next()
            XCTAssertNil(end)
            XCTAssertEqual(node.observerCount, 0)
        }
    }

    func test_snapshots_end_after_the_cancelled_snapshot() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 4)
            var iterator = node.snapshots.makeAsyncIterator()
            _ = await iterator.next()
            node.advance()
            node.cancel()
            var seen: [ProgressNode.Snapshot] = []
            while let snapshot = await iterator.next() { seen.append(snapshot) }

            XCTAssertEqual(seen.last?.isCancelled, true)
            XCTAssertEqual(seen.last?.completedUnitCount, 1)
            XCTAssertEqual(seen.filter(\.isCancelled).count, 1)
            XCTAssertLessThanOrEqual(seen.count, 2)
            XCTAssertEqual(node.observerCount, 0)
        }
    }

    func test_snapshots_of_a_finished_node_yield_one_snapshot() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 2)
            node.advance(by: 2)
            var seen: [ProgressNode.Snapshot] = []
            for await snapshot in node.snapshots { seen.append(snapshot) }

            XCTAssertEqual(seen.map(\.completedUnitCount), [2])
            XCTAssertEqual(seen.map(\.isFinished), [true])
        }
    }

    /// A consumer that does not ask while a million updates happen then sees no backlog: at most the
    /// buffered snapshot, one being delivered and one pending (see the comment inside).
    func test_snapshots_coalesce_for_a_slow_consumer() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
            var iterator = node.snapshots.makeAsyncIterator()
            let first = await iterator.next()
            XCTAssertEqual(first?.completedUnitCount, 0)
            for _ in 0..<1_000_000 { node.advance() }  // the consumer is busy: nobody awaits `next()`
            var seen: [ProgressNode.Snapshot] = []
            while let snapshot = await iterator.next() { seen.append(snapshot) }

            // Once the updates are done there is at most: the newest snapshot buffered, a delivery that read
            // an older value before the last update, and the pending delivery that reads the final one.
            XCTAssertLessThanOrEqual(seen.count, 3, "\(seen.map(\.completedUnitCount))")
            XCTAssertEqual(seen.last?.completedUnitCount, 1_000_000)
            XCTAssertEqual(seen.last?.isFinished, true)
            XCTAssertEqual(seen.map(\.completedUnitCount), seen.map(\.completedUnitCount).sorted())
            XCTAssertFalse(zip(seen, seen.dropFirst()).contains { $0 == $1 }, "a snapshot delivered twice")
        }
    }

    func test_snapshots_stop_observing_when_the_consuming_task_is_cancelled() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 10)
            let received = Atomic<Int>(0)
            let consumer = Task {
                for await _ in node.snapshots { received.add(1, ordering: .relaxed) }
            }
            let observing = await eventually { node.observerCount == 1 && received.load(ordering: .relaxed) == 1 }
            XCTAssertTrue(observing)
            consumer.cancel()
            await consumer.value
            let stopped = await eventually { node.observerCount == 0 }
            XCTAssertTrue(stopped, "the cancelled iteration still observes")
            node.advance()

            XCTAssertEqual(received.load(ordering: .relaxed), 1)
            XCTAssertEqual(node.observerCount, 0)
        }
    }

    func test_breaking_out_of_a_snapshots_loop_stops_observing() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 10)
            node.advance(by: 3)
            var first: ProgressNode.Snapshot?
            for await snapshot in node.snapshots {
                first = snapshot
                break
            }
            let stopped = await eventually { node.observerCount == 0 }
            XCTAssertTrue(stopped, "the abandoned iteration still observes")

            XCTAssertEqual(first?.completedUnitCount, 3)
            XCTAssertEqual(node.observerCount, 0)
        }
    }

    /// The sequence may be the node's only owner: iterating keeps the node alive (observations hold their
    /// node weakly), so the first snapshot still comes and the loop ends when the node finishes.
    func test_iterating_snapshots_keeps_the_node_alive() async {
        await withHangDetection {
            typealias Made = (iterator: ProgressNode.Snapshots.AsyncIterator, node: @Sendable () -> ProgressNode?)
            let (madeIterator, weakNode) = { () -> Made in
                let node = ProgressNode.discreteProgress(totalUnitCount: 2)
                return (node.snapshots.makeAsyncIterator(), { [weak node] in node })
            }()
            var iterator = madeIterator
            guard let node = weakNode() else {
                return XCTFail("the node went away while its snapshots were iterated")
            }
            let first = await iterator.next()
            XCTAssertEqual(first?.totalUnitCount, 2)
            node.advance(by: 2)
            var last = first
            while let snapshot = await iterator.next() { last = snapshot }
            XCTAssertEqual(last?.isFinished, true)
        }
    }

    func test_each_snapshots_iteration_observes_on_its_own() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 2)
            let sequence = node.snapshots
            var one = sequence.makeAsyncIterator()
            var two = sequence.makeAsyncIterator()
            XCTAssertEqual(node.observerCount, 2)
            let firstOfOne = await one.next()
            let firstOfTwo = await two.next()
            node.advance(by: 2)
            var lastOfOne = firstOfOne
            while let snapshot = await one.next() { lastOfOne = snapshot }
            var lastOfTwo = firstOfTwo
            while let snapshot = await two.next() { lastOfTwo = snapshot }

            XCTAssertEqual(firstOfOne?.completedUnitCount, 0)
            XCTAssertEqual(firstOfTwo?.completedUnitCount, 0)
            XCTAssertEqual(lastOfOne?.isFinished, true)
            XCTAssertEqual(lastOfTwo?.isFinished, true)
            XCTAssertEqual(node.observerCount, 0)
        }
    }

    /// `next()` returns `nil` once the stream has ended, which the final delivery does before it invalidates
    /// the observation. Held there, that delivery has not yet removed the observer when the consumer reads the
    /// end: `next()` itself takes the observation off the node before it returns `nil`.
    func test_an_iteration_holds_no_observer_once_next_returned_nil_while_the_final_delivery_is_still_ending() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 1)
            let terminationReached = AsyncGate()
            let terminationMayGoOn = DispatchSemaphore(value: 0)
            let sequence = ProgressNode.Snapshots(node: node) {
                Task { await terminationReached.open() }
                terminationMayGoOn.wait()
            }
            var iterator = sequence.makeAsyncIterator()
            let first = await iterator.next()
            node.advance()  // the final delivery yields, ends the stream and stops in the hook
            await terminationReached.wait()
            let last = await iterator.next()
            let end = await iterator.next()

            XCTAssertEqual(first?.completedUnitCount, 0)
            XCTAssertEqual(last?.isFinished, true)
            XCTAssertNil(end)
            XCTAssertEqual(node.observerCount, 0)
            terminationMayGoOn.signal()
        }
    }

    // MARK: Docs/Observation.md
    //
    // Each snippet of the guide sits between `// BEGIN snippet: NAME` and `// END snippet: NAME`, with
    // `print` shadowed by a closure that records the lines; the guide shows it verbatim after
    // `<!-- snippet: NAME -->` (checked by the last test).

    func test_guide_observing_a_key_path() async {
        let printed = DeliveryLog<String>()
        let print: @Sendable (String) -> Void = { printed.append($0) }
        // BEGIN snippet: observation-key-path
        let album = ProgressNode.discreteProgress(totalUnitCount: 4)
        let display = DispatchQueue(label: "album display")

        let observation = album.observe(\.fractionCompleted, on: display, options: .initial) { album, change in
            print("\(album.totalUnitCount) photos: \(Int(change.newValue * 100))%")
        }

        for _ in 0..<4 { album.advance() }  // from any thread; the last line printed is "4 photos: 100%"
        await observation.waitForLastDelivery()  // it has been printed
        // END snippet: observation-key-path
        observation.invalidate()

        let lines = printed.deliveries.map(\.new)
        XCTAssertEqual(lines.last, "4 photos: 100%")
        XCTAssertEqual(Set(lines).count, lines.count, "a line repeated: \(lines)")
        XCTAssertTrue(
            Set(lines).isSubset(of: [
                "4 photos: 0%", "4 photos: 25%", "4 photos: 50%", "4 photos: 75%", "4 photos: 100%",
            ]),
            "\(lines)")
    }

    func test_guide_throttling_with_minimum_interval() async {
        let printed = DeliveryLog<String>()
        let print: @Sendable (String) -> Void = { printed.append($0) }
        let start = ContinuousClock.now
        // BEGIN snippet: observation-throttle
        let download = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let terminal = DispatchQueue(label: "terminal")

        let redraw = download.observe(\.completedUnitCount, on: terminal, minimumInterval: .milliseconds(100)) {
            _, change in
            print("\(change.newValue) bytes")  // the last line printed is "1000000 bytes"
        }
        for _ in 0..<1_000 { download.advance(by: 1_000) }
        await redraw.waitForLastDelivery()
        // END snippet: observation-throttle
        let elapsed = ContinuousClock.now - start
        redraw.invalidate()

        XCTAssertEqual(printed.last?.new, "1000000 bytes")
        XCTAssertLessThanOrEqual(printed.count, Int(elapsed / .milliseconds(100)) + 1)
    }

    func test_guide_snapshots_for_await() async {
        await withHangDetection {
            let printed = DeliveryLog<String>()
            let print: @Sendable (String) -> Void = { printed.append($0) }
            // BEGIN snippet: observation-snapshots
            let job = ProgressNode.discreteProgress(totalUnitCount: 3)
            let worker = Task {
                for _ in 0..<3 { job.advance() }
            }

            for await snapshot in job.snapshots {
                print("\(snapshot.completedUnitCount) of \(snapshot.totalUnitCount)")  // ends with "3 of 3"
            }
            // The loop ends by itself: the last snapshot was finished (or cancelled).
            await worker.value
            // END snippet: observation-snapshots

            let lines = printed.deliveries.map(\.new)
            XCTAssertEqual(lines.last, "3 of 3")
            XCTAssertEqual(lines, lines.sorted())
            XCTAssertEqual(job.observerCount, 0)
        }
    }

    func test_guide_cancelling_the_task_stops_observing() async {
        await withHangDetection {
            let printed = DeliveryLog<String>()
            let print: @Sendable (String) -> Void = { printed.append($0) }
            // BEGIN snippet: observation-cancel-task
            let upload = ProgressNode.discreteProgress(totalUnitCount: 100)
            let statusLine = Task {
                for await snapshot in upload.snapshots {
                    print("uploading: \(Int(snapshot.fractionCompleted * 100))%")
                }
            }
            // The status line is no longer needed, the upload goes on:
            statusLine.cancel()
            // END snippet: observation-cancel-task

            await statusLine.value
            let stopped = await eventually { upload.observerCount == 0 }
            XCTAssertTrue(stopped, "the cancelled loop still observes")
            upload.advance(by: 100)
            XCTAssertTrue(upload.isFinished)
        }
    }

    /// Docs/Observation.md shows each snippet above (and those of ObservableProgressTests.swift) verbatim,
    /// but for its leading `import` lines, and every `swift` block in it is one of them, except the SwiftUI
    /// view marked `<!-- apple-only -->` (SwiftUI does not exist here).
    func test_guide_snippets_match_docs_observation() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = try ["ObservationTests.swift", "ObservableProgressTests.swift"].map {
            try String(
                contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent($0),
                encoding: .utf8)
        }.joined(separator: "\n")
        let guide = try String(contentsOf: root.appendingPathComponent("Docs/Observation.md"), encoding: .utf8)

        var snippets: [String: [String]] = [:]
        var current: (name: String, lines: [String])?
        for line in source.components(separatedBy: "\n") {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("// BEGIN snippet: ") {
                current = (String(trimmed.dropFirst("// BEGIN snippet: ".count)), [])
            } else if trimmed.hasPrefix("// END snippet: "), let snippet = current {
                let lines = snippet.lines
                let indentation = lines.filter { !$0.isEmpty }.map { $0.count - $0.drop { $0 == " " }.count }.min() ?? 0
                snippets[snippet.name] = lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indentation)) }
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        XCTAssertEqual(
            Set(snippets.keys),
            [
                "observation-key-path", "observation-throttle", "observation-snapshots", "observation-cancel-task",
                "observation-tracking-loop",
            ])

        var shown: [String] = []
        for block in GuideSwiftBlock.all(in: guide) where block.marker != "<!-- apple-only -->" {
            guard let name = block.snippetName else {
                XCTFail("a swift block without a snippet marker: \(block.lines.first ?? "")")
                continue
            }
            shown.append(name)
            let lines = block.lines.drop { $0.hasPrefix("import ") || $0.isEmpty }
            XCTAssertEqual(Array(lines), snippets[name], "snippet \(name) differs from its test")
        }
        XCTAssertEqual(Set(shown), Set(snippets.keys), "snippets the guide does not show, or shows twice")
        XCTAssertEqual(shown.count, snippets.count)
    }
}
