import Dispatch
import ProgressTree
import XCTest

/// The final value of a node (finished, cancelled) reaches every observer and ends `snapshots`, also when
/// the node is released right after it, or has no snapshot before it (Docs/Observation.md: "the last value
/// is never lost").
final class LastValueDeliveryTests: XCTestCase {
    func test_snapshots_of_a_node_cancelled_before_iteration_yield_one_cancelled_snapshot() async {
        let node = ProgressNode(totalUnitCount: 10)
        node.advance(by: 3)
        node.cancel()
        var received: [ProgressNode.Snapshot] = []
        for await snapshot in node.snapshots { received.append(snapshot) }
        XCTAssertEqual(received.count, 1)
        XCTAssertEqual(received.first?.isCancelled, true)
        XCTAssertEqual(received.first?.fractionCompleted, 0.3)
    }

    func test_snapshots_of_a_zero_total_node_end_on_its_first_unit() async {
        let node = ProgressNode(totalUnitCount: 0)
        let gate = AsyncGate()
        let consumer = Task {
            var received: [ProgressNode.Snapshot] = []
            for await snapshot in node.snapshots {
                received.append(snapshot)
                if received.count == 1 { await gate.open() }
            }
            return received
        }
        await gate.wait()
        node.advance()
        let received = await consumer.value
        XCTAssertEqual(received.first?.isIndeterminate, true)
        XCTAssertEqual(received.first?.fractionCompleted, 0)
        XCTAssertEqual(received.last?.isFinished, true)
        XCTAssertEqual(received.last?.fractionCompleted, 1)
    }

    /// The finished value is delivered also when the code that finished the node lets it go right away (a parent
    /// does not retain a finished child).
    func test_the_finished_value_is_delivered_when_the_node_is_released_right_after_finishing() {
        let queue = DispatchQueue(label: "observer")
        queue.suspend()
        var node: ProgressNode? = ProgressNode(totalUnitCount: 1)
        let delivered = expectation(description: "finished value delivered")
        let token = node!.observe(\.isFinished, on: queue) { _, change in
            if change.newValue { delivered.fulfill() }
        }
        node!.completedUnitCount = 1
        node = nil
        queue.resume()
        wait(for: [delivered], timeout: 5)
        token.invalidate()
    }

    func test_the_cancelled_value_is_delivered_when_the_node_is_released_right_after_cancelling() {
        let queue = DispatchQueue(label: "observer")
        queue.suspend()
        let parent = ProgressNode(totalUnitCount: 2)
        var child: ProgressNode? = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let delivered = expectation(description: "cancelled value delivered")
        let token = child!.observe(\.isCancelled, on: queue) { _, change in
            if change.newValue { delivered.fulfill() }
        }
        child!.cancel()
        child!.advance()  // finishes: the parent lets it go
        child = nil
        queue.resume()
        wait(for: [delivered], timeout: 5)
        token.invalidate()
    }

    func test_observer_of_a_detached_finished_child_sees_it_unfinish() {
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let queue = DispatchQueue(label: "observer")
        let finished = expectation(description: "finished delivered")
        let unfinished = expectation(description: "unfinished delivered")
        let token = child.observe(\.isFinished, on: queue) { _, change in
            if change.newValue { finished.fulfill() } else { unfinished.fulfill() }
        }
        child.advance()
        wait(for: [finished], timeout: 10)
        child.completedUnitCount = 0
        wait(for: [unfinished], timeout: 10)
        XCTAssertEqual(parent.completedUnitCount, 1)
        token.invalidate()
    }
}
