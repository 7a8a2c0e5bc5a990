import Dispatch
import Synchronization
import XCTest

@testable import ProgressTree
import ProgressTreePlatform

/// Read hooks for `ProgressNode.completedUnitCountWithReadHook`, by node: they let a test act at the exact
/// moment an observation reads its value.
private let readHooks = Lock<[ObjectIdentifier: @Sendable (ProgressNode, Int64) -> Void]>([:])

extension ProgressNode {
    /// `completedUnitCount`, calling the node's read hook (if one is set) with the value read.
    fileprivate var completedUnitCountWithReadHook: Int64 {
        let value = completedUnitCount
        if let hook = readHooks.withLock({ $0[ObjectIdentifier(self)] }) { hook(self, value) }
        return value
    }

    /// Sets the read hook of this node for the duration of `body`.
    fileprivate func withReadHook(_ hook: @escaping @Sendable (ProgressNode, Int64) -> Void, _ body: () -> Void) {
        readHooks.withLock { $0[ObjectIdentifier(self)] = hook }
        body()
        _ = readHooks.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
    }
}

/// Observation under contention: many threads updating while many observe, register and invalidate.
/// Run under ThreadSanitizer by `.ci/run` (`--sanitize=thread`, like the whole suite).
final class ObservationConcurrencyTests: XCTestCase {
    /// 8 threads advance 8 children of a root while 8 observers, registered from 8 threads, follow the
    /// root's fraction and count: each observer's last delivery is the exact final value, and its
    /// deliveries are chained (in order, none equal to the previous one).
    func test_many_updating_threads_and_many_observers_each_get_the_exact_final_value() {
        let workers = 8
        let unitsPerChild: Int64 = 20_000
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(workers))
        let children = (0..<workers).map { _ in
            ProgressNode(totalUnitCount: unitsPerChild, parent: root, pendingUnitCount: 1)
        }
        let fractionLogs = (0..<workers).map { _ in DeliveryLog<Double>() }
        let countLogs = (0..<workers).map { _ in DeliveryLog<Int64>() }
        let overlaps = Atomic<Int>(0)
        let tokens = Lock<[ProgressObservation]>([])
        let shared = DispatchQueue(label: "shared", attributes: .concurrent)
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()

        for worker in 0..<workers {
            DispatchQueue.global().async(group: group) {
                // Register while the updates run: half on their own serial queue, half on one concurrent
                // queue (where the handlers of one observation still never overlap).
                let queue = worker.isMultiple(of: 2) ? DispatchQueue(label: "observer \(worker)") : shared
                let running = Atomic<Int>(0)
                let fraction = root.observe(\.fractionCompleted, on: queue, options: .initial) { _, change in
                    if running.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    fractionLogs[worker].record(change)
                    running.subtract(1, ordering: .sequentiallyConsistent)
                }
                let count = root.observe(\.completedUnitCount, on: queue, options: .initial) { _, change in
                    countLogs[worker].record(change)
                }
                tokens.withLock { $0 += [fraction, count] }
                start.signal()
            }
            DispatchQueue.global().async(group: group) {
                start.wait()
                for _ in 0..<unitsPerChild { children[worker].advance() }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + observationHangTimeout), .success)
        for worker in 0..<workers {
            waitForDelivery(of: 1, to: fractionLogs[worker])
            waitForDelivery(of: Int64(workers), to: countLogs[worker])
        }
        for token in tokens.withLock({ $0 }) { token.invalidate() }

        XCTAssertEqual(overlaps.load(ordering: .relaxed), 0)
        XCTAssertEqual(root.observerCount, 0)
        for worker in 0..<workers {
            let fractions = fractionLogs[worker].deliveries
            XCTAssertEqual(fractions.last?.new, 1, "observer \(worker)")
            XCTAssertEqual(fractions.filter { $0.new == 1 }.count, 1, "observer \(worker)")
            XCTAssertNil(fractions.first?.old)
            assertChained(fractions, from: nil)
            let counts = countLogs[worker].deliveries
            XCTAssertEqual(counts.last?.new, Int64(workers), "observer \(worker)")
            assertChained(counts, from: nil)
            // The root's count only grows (finished children are credited): deliveries strictly increase.
            XCTAssertEqual(counts.map(\.new), counts.map(\.new).sorted(), "observer \(worker)")
        }
    }

    /// Many threads advance one node while many observers follow its count, some on suspended queues
    /// (slow observers): every observer ends with exactly N·M.
    func test_observers_of_a_shared_counter_all_receive_the_exact_total() {
        let threads = 8
        let perThread: Int64 = 50_000
        let total = Int64(threads) * perThread
        let node = ProgressNode.discreteProgress(totalUnitCount: total)
        let queues = (0..<threads).map { DispatchQueue(label: "observer \($0)") }
        let logs = (0..<threads).map { _ in DeliveryLog<Int64>() }
        for queue in queues.prefix(threads / 2) { queue.suspend() }
        let tokens = (0..<threads).map { index in
            node.observe(\.completedUnitCount, on: queues[index]) { _, change in logs[index].record(change) }
        }
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread { node.advance() }
        }
        for queue in queues.prefix(threads / 2) { queue.resume() }
        for index in 0..<threads { waitForDelivery(of: total, to: logs[index]) }
        for queue in queues { drain(queue) }
        for token in tokens { token.invalidate() }

        XCTAssertEqual(node.completedUnitCount, total)
        for index in 0..<threads {
            XCTAssertEqual(logs[index].last?.new, total)
            assertChained(logs[index].deliveries, from: 0)
        }
        for index in 0..<threads / 2 {
            XCTAssertEqual(logs[index].deliveries, [Delivery(0, total)], "suspended observer \(index)")
        }
    }

    /// Observations come and go on several threads while others update: once `invalidate()` has
    /// returned, that observation's handler never starts again; the observations that stay get the
    /// final value.
    func test_no_handler_starts_after_invalidate_returns_while_updates_and_registrations_race() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 400_000)
        let violations = Atomic<Int>(0)
        let handlerRuns = Atomic<Int>(0)
        let keeper = DeliveryLog<Int64>()
        let keeperToken = node.observe(\.completedUnitCount, on: DispatchQueue(label: "keeper")) { _, change in
            keeper.record(change)
        }
        let queues = (0..<4).map { DispatchQueue(label: "churn \($0)", attributes: $0 == 0 ? .concurrent : []) }
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            if index < 4 {
                for _ in 0..<100_000 { node.advance() }
                return
            }
            for round in 0..<300 {
                let invalidated = Atomic<Bool>(false)
                let delivered = DispatchSemaphore(value: 0)
                var token: ProgressObservation? = node.observe(
                    \.completedUnitCount, on: queues[(index + round) % 4],
                    options: round.isMultiple(of: 2) ? .initial : []
                ) { _, _ in
                    handlerRuns.add(1, ordering: .relaxed)
                    if invalidated.load(ordering: .sequentiallyConsistent) { violations.add(1, ordering: .relaxed) }
                    delivered.signal()
                }
                // Every 50th round waits for its `.initial` delivery before letting go, so that some churned
                // observations certainly deliver (the others race their invalidation, which usually wins).
                if round.isMultiple(of: 50) { _ = delivered.wait(timeout: .now() + observationHangTimeout) }
                if round.isMultiple(of: 3) {
                    token?.invalidate()
                } else {
                    token = nil  // released: its deinit invalidates
                }
                invalidated.store(true, ordering: .sequentiallyConsistent)
            }
        }
        waitForDelivery(of: 400_000, to: keeper)
        for queue in queues { drain(queue) }
        keeperToken.invalidate()

        XCTAssertEqual(violations.load(ordering: .relaxed), 0)
        XCTAssertGreaterThan(handlerRuns.load(ordering: .relaxed), 0, "no churned observation ever delivered")
        XCTAssertEqual(node.observerCount, 0)
        XCTAssertEqual(keeper.last?.new, 400_000)
        assertChained(keeper.deliveries, from: 0)
    }

    /// Regression: a change made while `observe` read the registration-time value (without `.initial`)
    /// could be delivered before that read was recorded, as `nil → new`; the recorded older value then
    /// replaced it, so the value delivered last was no longer what the observer had been told, and a
    /// later return to the registration-time value was skipped as "equal". The read hook makes the change
    /// at exactly that moment, then lets a delivery that was scheduled by it run before the read returns.
    func test_a_change_while_the_registration_value_is_read_is_delivered_as_a_change_from_it() {
        let queue = DispatchQueue(label: "observer")
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let reads = Atomic<Int>(0)
        let log = DeliveryLog<Int64>()
        let hook: @Sendable (ProgressNode, Int64) -> Void = { node, _ in
            guard reads.add(1, ordering: .relaxed).newValue == 1 else { return }
            // Inside the registration-time read, on the registering thread.
            node.completedUnitCount = 1
            let ranDeliveriesScheduledSoFar = DispatchSemaphore(value: 0)
            queue.async { ranDeliveriesScheduledSoFar.signal() }
            ranDeliveriesScheduledSoFar.wait()
        }
        node.withReadHook(hook) {
            let token = node.observe(\.completedUnitCountWithReadHook, on: queue) { _, change in log.record(change) }
            waitForDelivery(of: 1, to: log)
            node.completedUnitCount = 0  // back to the registration-time value: a change for this observer
            waitForDelivery(of: 0, to: log)
            token.invalidate()
        }

        XCTAssertEqual(log.deliveries, [Delivery(0, 1), Delivery(1, 0)])
    }

    /// On a concurrent queue, a delivery that read an older value must not be overtaken by a later one:
    /// the later delivery waits, so the observer ends with the newest value. The read hook holds the
    /// delivery of 2 just after its read while the node moves on to 3; a delivery of 3 allowed to run
    /// alongside it would finish first, and the held one would then deliver the stale 2 last.
    func test_a_delivery_that_read_an_older_value_is_not_overtaken_on_a_concurrent_queue() {
        let queue = DispatchQueue(label: "observer", attributes: .concurrent)
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        let log = DeliveryLog<Int64>()
        let readingTwo = Gate()
        let deliveredThree = DispatchSemaphore(value: 0)
        let heldReadDone = Gate()
        let hook: @Sendable (ProgressNode, Int64) -> Void = { _, value in
            guard value == 2 else { return }
            readingTwo.open()
            // A window for a wrong implementation to deliver 3 meanwhile (in a right one it cannot start).
            _ = deliveredThree.wait(timeout: .now() + 0.2)
            heldReadDone.open()
        }
        node.withReadHook(hook) {
            let token = node.observe(\.completedUnitCountWithReadHook, on: queue, options: .initial) { _, change in
                log.record(change)
                if change.newValue == 3 { deliveredThree.signal() }
            }
            waitForDelivery(of: 0, to: log)
            node.completedUnitCount = 2
            XCTAssertTrue(readingTwo.wait())
            node.completedUnitCount = 3  // schedules the next delivery while the held one is still running
            XCTAssertTrue(heldReadDone.wait())
            waitForDelivery(of: 3, to: log)
            drain(queue)
            token.invalidate()
        }

        XCTAssertEqual(log.deliveries, [Delivery(nil, 0), Delivery(0, 2), Delivery(2, 3)])
    }

    /// The same race, left to chance: observers registered without `.initial` while another thread
    /// updates never see a `nil` old value, and each ends with the final value.
    func test_registering_without_initial_while_updating_never_delivers_a_nil_old_value() {
        for round in 0..<200 {
            let node = ProgressNode.discreteProgress(totalUnitCount: 1_001)
            let queue = DispatchQueue(label: "observer")
            let log = DeliveryLog<Int64>()
            let updating = DispatchGroup()
            DispatchQueue.global().async(group: updating) { for _ in 0..<1_000 { node.advance() } }
            let token = node.observe(\.completedUnitCount, on: queue) { _, change in log.record(change) }
            XCTAssertEqual(updating.wait(timeout: .now() + observationHangTimeout), .success)
            node.advance()  // after registration: the final value differs from the registration-time one
            waitForDelivery(of: 1_001, to: log)
            token.invalidate()

            let deliveries = log.deliveries
            XCTAssertFalse(deliveries.contains { $0.old == nil }, "round \(round): \(deliveries)")
            XCTAssertEqual(deliveries.last?.new, 1_001, "round \(round)")
            if let first = deliveries.first?.old { assertChained(deliveries, from: first) }
        }
    }

    /// Many tasks consume `snapshots` of one node while threads update it: each sequence ends, after a
    /// finished snapshot, with increasing counts and no observer left behind.
    func test_many_snapshot_consumers_while_threads_update() async {
        await withHangDetection {
            let node = ProgressNode.discreteProgress(totalUnitCount: 200_000)
            let sequences = await withTaskGroup(of: [Int64].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        var counts: [Int64] = []
                        for await snapshot in node.snapshots { counts.append(snapshot.completedUnitCount) }
                        return counts
                    }
                }
                let observing = await eventually { node.observerCount == 8 }
                XCTAssertTrue(observing)
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<50_000 { node.advance() }
                        return []
                    }
                }
                var sequences: [[Int64]] = []
                for await counts in group where !counts.isEmpty { sequences.append(counts) }
                return sequences
            }
            XCTAssertEqual(sequences.count, 8)
            for counts in sequences {
                XCTAssertEqual(counts.last, 200_000)
                XCTAssertEqual(counts, counts.sorted())
            }
            let stopped = await eventually { node.observerCount == 0 }
            XCTAssertTrue(stopped)
        }
    }

    /// Snapshots read while threads finish the node: a snapshot whose counts say finished says 100%, and
    /// the last snapshot of every sequence is that one. (The last unit can land between the reads of the
    /// fraction and of the counts; such a snapshot ended the sequence as "finished at 99.95%".)
    func test_a_finished_snapshot_always_says_complete_while_threads_finish_the_node() async {
        await withHangDetection {
            var torn: [ProgressNode.Snapshot] = []
            for _ in 0..<300 {
                let node = ProgressNode.discreteProgress(totalUnitCount: 2_000)
                let snapshots = await withTaskGroup(of: [ProgressNode.Snapshot].self) { group in
                    group.addTask {
                        var snapshots: [ProgressNode.Snapshot] = []
                        for await snapshot in node.snapshots { snapshots.append(snapshot) }
                        return snapshots
                    }
                    for _ in 0..<2 {
                        group.addTask {
                            for _ in 0..<1_000 { node.advance() }
                            return []
                        }
                    }
                    var all: [ProgressNode.Snapshot] = []
                    for await snapshots in group { all += snapshots }
                    return all
                }
                XCTAssertEqual(snapshots.last?.completedUnitCount, 2_000)
                XCTAssertEqual(snapshots.last?.isFinished, true)
                torn += snapshots.filter { $0.isFinished && $0.fractionCompleted != 1 }
            }
            XCTAssertEqual(torn, [], "finished snapshots that do not say 100%")
        }
    }

    /// Handlers that cancel, add children and observe, running on several queues while other threads
    /// update the same tree: no deadlock, and every observer sees the cancellation.
    func test_reentrant_handlers_under_contention_do_not_deadlock() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        // One unit more than the threads add, so the leaf never finishes (and detaches) before the last
        // delivery, which reads 1,000,000 >= 500,000, cancels the root and through it the leaf.
        let leaf = ProgressNode(totalUnitCount: 1_000_001, parent: root, pendingUnitCount: 1_000)
        let cancelledLogs = (0..<4).map { _ in DeliveryLog<Bool>() }
        // One nested observer per outer observer, registered from inside its first delivery. Registering one
        // on every delivery would make each update signal an ever longer list (quadratic: under
        // ThreadSanitizer on a slow machine this test once ran for over an hour).
        let nested = Lock<[Int: ProgressObservation]>([:])
        let tokens = (0..<4).map { index in
            root.observe(\.fractionCompleted, on: DispatchQueue(label: "reentrant \(index)")) { observed, _ in
                let child = ProgressNode(totalUnitCount: 1, parent: observed, pendingUnitCount: 0)
                child.advance()
                if nested.withLock({ $0[index] == nil }) {
                    let inner = leaf.observe(\.isCancelled, on: DispatchQueue.global(), options: .initial) {
                        _, change in
                        cancelledLogs[index].record(change)
                    }
                    nested.withLock { $0[index] = inner }
                }
                if leaf.completedUnitCount >= 500_000 { observed.cancel() }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<250_000 { leaf.advance() }
        }
        for log in cancelledLogs { waitForDelivery(of: true, to: log) }
        for token in tokens { token.invalidate() }
        for token in nested.withLock({ $0.values }) { token.invalidate() }

        XCTAssertTrue(root.isCancelled)
        XCTAssertTrue(leaf.isCancelled)
        XCTAssertEqual(root.observerCount, 0)
        XCTAssertEqual(leaf.observerCount, 0)
    }
}
