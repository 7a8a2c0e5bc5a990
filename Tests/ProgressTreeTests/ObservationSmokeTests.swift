import Dispatch
import ProgressTree
import Synchronization
import XCTest

final class ObservationSmokeTests: XCTestCase {
    func test_suspended_queue_coalesces_a_million_updates_into_one_delivery_of_the_final_value() {
        let queue = DispatchQueue(label: "observer")
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let leaf = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1_000_000)
        let deliveries = Mutex<[Double]>([])
        let done = expectation(description: "final value")
        queue.suspend()
        let token = root.observe(\.fractionCompleted, on: queue) { _, change in
            deliveries.withLock { $0.append(change.newValue) }
            if change.newValue == 1 { done.fulfill() }
        }
        for _ in 0..<1_000_000 { leaf.advance() }
        queue.resume()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(deliveries.withLock { $0 }, [1.0])
        token.invalidate()
    }

    func test_snapshots_end_when_finished() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 3)
        let reader = Task {
            var values: [Int64] = []
            for await snapshot in node.snapshots { values.append(snapshot.completedUnitCount) }
            return values
        }
        node.advance(); node.advance(); node.advance()
        let values = await reader.value
        XCTAssertEqual(values.last, 3)
    }
}
