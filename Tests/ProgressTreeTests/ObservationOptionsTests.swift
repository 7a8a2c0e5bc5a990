import Dispatch
import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// Key-value observing's spelling of `observe` (Docs/Migrating.md, "Observation"): the option names `.new`
/// and `.old` are accepted and change nothing, and without `on:` handlers run on a global queue.
final class ObservationOptionsTests: XCTestCase {
    func test_kvo_option_names_new_and_old_are_accepted_and_change_nothing() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let queue = DispatchQueue(label: "observer")
        let plain = ChangeLog()
        let kvo = ChangeLog()
        let plainDone = expectation(description: "plain observer saw 10")
        let kvoDone = expectation(description: "KVO-style observer saw 10")
        func record(_ log: ChangeLog, _ done: XCTestExpectation)
            -> @Sendable (ProgressNode, ProgressNode.Change<Int64>) -> Void
        {
            { _, change in
                log.lines.withLock { $0.append("\(change.oldValue.map(String.init) ?? "nil") → \(change.newValue)") }
                if change.newValue == 10 { done.fulfill() }
            }
        }
        let first = node.observe(
            \.completedUnitCount, on: queue, options: .initial, changeHandler: record(plain, plainDone))
        let second = node.observe(
            \.completedUnitCount, on: queue, options: [.initial, .new, .old], changeHandler: record(kvo, kvoDone))
        queue.sync {}  // both initial deliveries have run
        node.completedUnitCount = 10
        wait(for: [plainDone, kvoDone], timeout: 10)
        XCTAssertEqual(plain.lines.withLock { $0 }, ["nil → 0", "0 → 10"])
        XCTAssertEqual(kvo.lines.withLock { $0 }, plain.lines.withLock { $0 })
        first.invalidate()
        second.invalidate()
    }

    func test_observe_without_a_queue_delivers_on_a_global_queue() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let delivered = expectation(description: "delivered")
        let observation = node.observe(\.fractionCompleted, options: [.new]) { _, change in
            XCTAssertEqual(change.oldValue, 0)
            XCTAssertEqual(change.newValue, 0.5)
            delivered.fulfill()
        }
        node.completedUnitCount = 5
        wait(for: [delivered], timeout: 10)
        observation.invalidate()
    }
}

private final class ChangeLog: Sendable {
    let lines = Lock<[String]>([])
}
