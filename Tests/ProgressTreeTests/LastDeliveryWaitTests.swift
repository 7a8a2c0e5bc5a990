import Dispatch
import Foundation
import XCTest

@testable import ProgressTree
import ProgressTreePlatform

// `ProgressObservation.waitForLastDelivery()` and `waitForLastDelivery(timeout:)`: a program waits until the
// node is final and the delivery of its final value has run, its handler returned. A handler that must not
// return yet waits on a semaphore the test signals; the short timeouts below are the API under test (a
// wait that must not end yet ends by its timeout), never a pause to let something happen.

final class LastDeliveryWaitTests: XCTestCase {
    private let hang = Duration.seconds(observationHangTimeout)

    /// Observes `keyPath` of `node` on a queue of its own, every delivery recorded in the log returned.
    private func logged<Value>(_ keyPath: KeyPath<ProgressNode, Value> & Sendable, of node: ProgressNode)
        -> (log: DeliveryLog<Value>, observation: ProgressObservation)
    {
        let log = DeliveryLog<Value>()
        let observation = node.observe(keyPath, on: DispatchQueue(label: "display")) { _, change in log.record(change) }
        return (log, observation)
    }

    func test_the_wait_returns_once_the_final_value_was_delivered_and_its_handler_returned() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let display = DispatchQueue(label: "display")
        let log = DeliveryLog<Double>()
        let finalHandlerMayReturn = DispatchSemaphore(value: 0)
        let observation = node.observe(\.fractionCompleted, on: display) { _, change in
            if change.newValue == 1 { finalHandlerMayReturn.wait() }
            log.record(change)
        }
        for _ in 0..<4 { node.advance() }

        XCTAssertFalse(observation.waitForLastDelivery(timeout: .milliseconds(50)), "the final handler runs")
        finalHandlerMayReturn.signal()
        XCTAssertTrue(observation.waitForLastDelivery(timeout: hang))
        XCTAssertEqual(log.last?.new, 1)
    }

    func test_the_async_wait_returns_after_the_handler_of_the_final_value() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let display = DispatchQueue(label: "display")
        let lines = DeliveryLog<String>()
        let observation = node.observe(\.fractionCompleted, on: display) { _, change in
            lines.append("\(Int(change.newValue * 100))%")
        }
        display.suspend()  // no delivery runs before the waiter waits
        for _ in 0..<4 { node.advance() }
        let waiter = Task {
            await observation.waitForLastDelivery()
            lines.append("waited")
        }
        display.resume()
        await waiter.value

        XCTAssertEqual(lines.deliveries.map(\.new).suffix(2), ["100%", "waited"])
    }

    func test_a_second_wait_after_the_last_delivery_returns_at_once() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (log, observation) = logged(\.completedUnitCount, of: node)
        node.advance()
        await observation.waitForLastDelivery()
        XCTAssertTrue(observation.waitForLastDelivery(timeout: .zero))
        XCTAssertEqual(log.deliveries, [Delivery(0, 1)])
    }

    func test_the_wait_ends_when_the_final_state_brings_no_new_value() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 3)
        let (log, observation) = logged(\.totalUnitCount, of: node)
        node.completedUnitCount = 3  // finished; the total it observes stays 3
        XCTAssertTrue(observation.waitForLastDelivery(timeout: hang))
        XCTAssertEqual(log.deliveries, [])
    }

    func test_the_wait_for_a_cancelled_node_ends_after_the_cancellation_was_delivered() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let (log, observation) = logged(\.isCancelled, of: node)
        node.cancel()
        await observation.waitForLastDelivery()
        XCTAssertEqual(log.deliveries, [Delivery(false, true)])
    }

    func test_the_wait_for_a_failed_node_ends_after_the_failure_was_delivered() async {
        struct DiskFull: Error {}
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let (log, observation) = logged(\.isFailed, of: node)
        node.fail(DiskFull())
        await observation.waitForLastDelivery()
        XCTAssertEqual(log.deliveries, [Delivery(false, true)])
    }

    func test_the_wait_for_a_throttled_observation_waits_for_the_deferred_final_delivery() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 2)
        let log = DeliveryLog<Int64>()
        let observation = node.observe(
            \.completedUnitCount, on: DispatchQueue(label: "display"), minimumInterval: .milliseconds(200)
        ) { _, change in
            log.record(change)
        }
        node.advance()
        waitForDelivery(of: 1, to: log)
        node.advance()  // within the interval: delivered when it has passed
        await observation.waitForLastDelivery()
        XCTAssertEqual(log.deliveries, [Delivery(0, 1), Delivery(1, 2)])
    }

    /// A node half done, which nothing finishes, observed on a queue of its own; and a task waiting for the
    /// observation's last delivery, once it waits.
    private func waiterForAnUnfinishedNode() async
        -> (node: ProgressNode, observation: ProgressObservation, waiter: Task<Void, Never>)
    {
        let node = ProgressNode.discreteProgress(totalUnitCount: 2)
        let observation = node.observe(\.completedUnitCount, on: DispatchQueue(label: "display")) { _, _ in }
        node.advance()
        let waiter = Task { await observation.waitForLastDelivery() }
        let waits = await eventually { observation.waiterCount == 1 }
        XCTAssertTrue(waits)
        return (node, observation, waiter)
    }

    func test_the_wait_for_a_node_that_never_finishes_ends_with_its_timeout() async {
        let (node, observation, waiter) = await waiterForAnUnfinishedNode()
        XCTAssertFalse(observation.waitForLastDelivery(timeout: .milliseconds(20)))
        waiter.cancel()
        await waiter.value
        XCTAssertFalse(node.isFinished)
    }

    func test_the_async_wait_ends_when_its_task_is_cancelled() async {
        let (node, observation, waiter) = await waiterForAnUnfinishedNode()
        waiter.cancel()
        await waiter.value
        XCTAssertFalse(node.isFinished)
        XCTAssertEqual(observation.waiterCount, 0)
    }

    func test_the_wait_ends_when_the_observation_is_invalidated() async {
        let (node, observation, waiter) = await waiterForAnUnfinishedNode()
        observation.invalidate()
        await waiter.value
        XCTAssertTrue(observation.waitForLastDelivery(timeout: .zero))
        XCTAssertFalse(node.isFinished)
    }

    func test_the_wait_ends_when_the_unfinished_node_goes_away() async {
        let display = DispatchQueue(label: "display")
        var node: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 2)
        let observation = node!.observe(\.completedUnitCount, on: display) { _, _ in }
        node!.advance()
        drain(display)  // the delivery scheduled by the advance held the node; it has run
        let waiter = Task { await observation.waitForLastDelivery() }
        let waits = await eventually { observation.waiterCount == 1 }
        XCTAssertTrue(waits)
        node = nil  // its deinit wakes the waiter
        await waiter.value
        XCTAssertTrue(observation.waitForLastDelivery(timeout: .zero))
    }

    func test_the_wait_from_inside_its_own_handler_returns_false_at_once() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        let token = Lock<ProgressObservation?>(nil)
        let answers = DeliveryLog<Bool>()
        let display = DispatchQueue(label: "display")
        display.suspend()  // the token is stored before the handler runs
        let observation = node.observe(\.completedUnitCount, on: display) { _, _ in
            let observation = token.withLock { $0 }
            answers.append(observation?.waitForLastDelivery(timeout: .seconds(observationHangTimeout)) ?? true)
        }
        token.withLock { $0 = observation }
        node.advance()
        let start = ContinuousClock.now
        display.resume()
        waitForDelivery(of: false, to: answers)
        XCTAssertLessThan(ContinuousClock.now - start, hang / 2, "it waited for its own timeout")
        XCTAssertTrue(observation.waitForLastDelivery(timeout: hang))
    }

    /// Workers finish the node from other threads; once they have returned, the wait covers their updates:
    /// the last value delivered is the final one, on a concurrent queue too.
    func test_after_the_workers_returned_the_wait_ends_with_the_final_value_delivered() {
        for round in 0..<200 {
            let node = ProgressNode.discreteProgress(totalUnitCount: 64)
            let queue = round.isMultiple(of: 2) ? DispatchQueue(label: "display") : .global()
            let log = DeliveryLog<Int64>()
            let observation = node.observe(\.completedUnitCount, on: queue) { _, change in log.record(change) }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<16 { node.advance() }
            }
            XCTAssertTrue(observation.waitForLastDelivery(timeout: hang))
            XCTAssertEqual(log.last?.new, 64, "round \(round): \(log.deliveries)")
            if log.last?.new != 64 { return }
        }
    }
}
