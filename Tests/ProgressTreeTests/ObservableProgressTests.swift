import Dispatch
import Foundation
import Observation
import Synchronization
@testable import ProgressTree
import TestSupport
import XCTest

/// `ObservableProgress`: a node followed by Swift's Observation (Docs/Observation.md, "SwiftUI and
/// Observation"), with the loops a SwiftUI body and an `Observations` sequence rely on.
final class ObservableProgressTests: XCTestCase {
    /// Runs of the "last value" tests; `PROGRESSTREE_OBSERVABLE_RUNS=10000 swift test --filter
    /// ObservableProgressTests` for the long run.
    static let runs = ProcessInfo.processInfo.environment["PROGRESSTREE_OBSERVABLE_RUNS"].flatMap { Int($0) } ?? 100

    // MARK: What can be followed

    func test_tracking_a_property_hears_of_its_change_and_reads_the_new_value() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let progress = node.observable
        let changed = DispatchSemaphore(value: 0)
        let before = withObservationTracking {
            progress.fractionCompleted
        } onChange: {
            changed.signal()
        }
        XCTAssertEqual(before, 0)
        node.advance(by: 1)
        XCTAssertEqual(changed.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(progress.fractionCompleted, 0.25, "the value is stored before the change is announced")
    }

    func test_every_property_follows_the_node_including_values_from_descendants() throws {
        let album = ProgressNode.discreteProgress(totalUnitCount: 2)
        album.isPausable = true
        let photo = ProgressNode(totalUnitCount: 100, parent: album, pendingUnitCount: 1)
        let other = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        let progress = album.observable
        let read = { () -> [String] in
            [
                "\(progress.fractionCompleted)", "\(progress.completedUnitCount)", "\(progress.totalUnitCount)",
                "\(progress.isIndeterminate)", "\(progress.isFinished)", "\(progress.isCancelled)",
                "\(progress.isPaused)", "\(progress.isFailed)", "\(progress.failureDescription ?? "-")",
                "\(progress.descendantOutcomes.failedCount)", "\(progress.isCancellable)", "\(progress.isPausable)",
                progress.localizedDescription, progress.localizedAdditionalDescription,
                "\(progress.children.map(\.totalUnitCount))",
            ]
        }
        XCTAssertEqual(
            read(),
            [
                "0.0", "0", "2", "false", "false", "false", "false", "false", "-", "0", "true", "true",
                "0% completed", "0 of 2", "[100, 1]",
            ])

        photo.completedUnitCount = 50
        other.fail(CocoaError(.fileReadNoPermission))
        try waitForDelivery(of: progress) { progress.descendantOutcomes.failedCount == 1 }
        XCTAssertEqual(progress.fractionCompleted, 0.25, "the grandchild's half of one unit, of two")
        XCTAssertEqual(progress.children.map(\.totalUnitCount), [100], "the failed child left")
        XCTAssertEqual(progress.children.first?.node === photo, true)
        XCTAssertEqual(progress.children.first === photo.observable, true, "one companion per node")
        XCTAssertEqual(progress.localizedDescription, "25% completed")

        album.pause()
        try waitForDelivery(of: progress) { progress.isPaused }
        progress.cancel()
        try waitForDelivery(of: progress) { progress.isCancelled }
        XCTAssertTrue(photo.isCancelled, "the companion's controls act on the node")
    }

    func test_a_failed_node_shows_failed_with_its_reason() throws {
        let node = ProgressNode.discreteProgress(totalUnitCount: 4)
        let progress = node.observable
        XCTAssertFalse(progress.isFailed)
        XCTAssertNil(progress.failureDescription)
        node.fail(CocoaError(.fileNoSuchFile))
        try waitForDelivery(of: progress) { progress.isFailed }
        XCTAssertEqual(progress.failureDescription, node.snapshot.failureDescription)
        XCTAssertNotNil(progress.failureDescription)
    }

    // MARK: The last value always arrives

    /// A SwiftUI body re-evaluated after each change: re-arm tracking and read again, until the final
    /// state; 8 threads drive the tree to completion.
    func test_a_loop_that_rearms_tracking_sees_the_finish_every_time() throws {
        for run in 0..<Self.runs {
            let (root, leaves) = makeTree()
            let progress = root.observable
            let updaters = drive(leaves, to: .finished)
            let final = try followUntilFinal(progress) { $0.isFinished }
            updaters.wait()
            XCTAssertEqual(final.fraction, 1, "run \(run)")
            XCTAssertTrue(final.isFinal, "run \(run)")
        }
    }

    func test_a_loop_that_rearms_tracking_sees_the_cancellation_every_time() throws {
        for run in 0..<Self.runs {
            let (root, leaves) = makeTree()
            let progress = root.observable
            let updaters = drive(leaves, to: .cancelled(root))
            let final = try followUntilFinal(progress) { $0.isCancelled }
            updaters.wait()
            XCTAssertTrue(final.isFinal, "run \(run)")
            // Counts may still change after a cancellation: the loop goes on to the last of them.
            let last = root.fractionCompleted
            _ = try followUntilFinal(progress) { $0.fractionCompleted == last }
            XCTAssertTrue(progress.isCancelled)
        }
    }

    func test_a_loop_that_rearms_tracking_sees_the_failure_every_time() throws {
        for run in 0..<Self.runs {
            let (root, leaves) = makeTree()
            let progress = root.observable
            let updaters = drive(leaves, to: .failed(root))
            let final = try followUntilFinal(progress) { $0.isFailed }
            updaters.wait()
            XCTAssertTrue(final.isFinal, "run \(run)")
            let last = root.snapshot.fractionCompleted
            _ = try followUntilFinal(progress) { $0.fractionCompleted == last }
            XCTAssertTrue(progress.isFailed)
            XCTAssertNotNil(progress.failureDescription)
        }
    }

    /// `Observations`, the `AsyncSequence` of Swift's Observation, ends having seen 1.0 and the finish.
    func test_observations_sees_the_final_fraction_and_the_finish_every_time() async throws {
        for run in 0..<Self.runs {
            let (root, leaves) = makeTree()
            let progress = root.observable
            let updaters = drive(leaves, to: .finished)
            let values = Observations.untilFinished {
                progress.isFinished ? .finish : .next(progress.fractionCompleted)
            }
            let ended = try await withTimeout(seconds: 30) { () -> Double? in
                var last: Double?
                for await value in values { last = value }
                return last
            }
            updaters.wait()
            XCTAssertTrue(ended != nil, "run \(run): the sequence ended")
            XCTAssertTrue(progress.isFinished)
            XCTAssertEqual(progress.fractionCompleted, 1, "run \(run)")
        }
    }

    // MARK: Coalesced, never on the updating thread

    /// 1,000,000 updates from 4 threads into a tracked 3-level tree: at most one notification per property
    /// per coalescing interval, each on the library's queue.
    func test_a_burst_of_updates_gives_at_most_one_notification_per_interval_never_on_an_updating_thread() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let leaves = (0..<4).map { index -> ProgressNode in
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            return ProgressNode(totalUnitCount: 250_000, parent: middle, pendingUnitCount: 1)
        }
        let progress = root.observable
        let record = NotificationRecord()
        let stop = Flag()
        let follower = Thread {
            while !stop.isSet {
                let arrived = DispatchSemaphore(value: 0)
                _ = withObservationTracking {
                    progress.fractionCompleted
                } onChange: {
                    record.add(updatingThread: UpdaterMark.isSet)
                    arrived.signal()
                }
                _ = arrived.wait(timeout: .now() + 0.2)
            }
        }
        follower.start()
        let start = ContinuousClock.now
        let done = DispatchGroup()
        for leaf in leaves {
            done.enter()
            Thread {
                UpdaterMark.set()
                for _ in 0..<250_000 { leaf.advance() }
                done.leave()
            }.start()
        }
        done.wait()
        try waitForDelivery(of: progress) { progress.isFinished }
        let elapsed = ContinuousClock.now - start
        stop.set()
        let intervals = Int(elapsed / ObservableProgress.coalescingInterval) + 2
        XCTAssertGreaterThan(record.count, 0)
        XCTAssertLessThanOrEqual(record.count, intervals, "notifications in \(elapsed)")
        XCTAssertEqual(record.onUpdatingThread, 0)
        XCTAssertEqual(progress.fractionCompleted, 1)
    }

    // MARK: Only what is read; lifetime

    func test_a_node_whose_companion_nobody_made_has_no_observer() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        XCTAssertEqual(node.observerCount, 0)
        _ = node.observable.fractionCompleted
        XCTAssertEqual(node.observerCount, 0, "the companion went away with the expression")
    }

    /// The properties of one snapshot (counts, fraction, states, outcomes) go together; descriptions,
    /// estimates, controls and children only once read.
    func test_only_properties_that_were_read_are_kept_up_to_date() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1)
        let progress = node.observable
        XCTAssertEqual(progress.bridge.trackedProperties, [])
        _ = progress.isPaused
        XCTAssertEqual(progress.bridge.trackedProperties, ObservableProgressBridge.Properties.inSnapshot)
        _ = progress.localizedDescription
        XCTAssertEqual(
            progress.bridge.trackedProperties,
            ObservableProgressBridge.Properties.inSnapshot.union(ObservableProgress.properties.localizedDescription.key)
        )
    }

    /// Every public property of `ObservableProgress` but `node` and `id` has its row in
    /// `ObservableProgress.PropertyTable`, named as the property, with its own key path: a property added
    /// without a row (a getter reading the node itself) would be neither coalesced nor announced.
    func test_every_public_property_that_follows_the_node_has_a_row_in_the_table() throws {
        let source = try URLPath.read(
            URLPath.packageRoot(of: #filePath) + "/Sources/ProgressTree/Observation/ObservableProgress.swift")
        let declared = source.matches(of: #/public var (\w+):/#).map { String($0.1) }.filter { $0 != "id" }
        let rows = Mirror(reflecting: ObservableProgress.properties).children.map { $0.label ?? "" }
        XCTAssertEqual(rows.count, declared.count, "rows: \(rows)\ndeclared: \(declared)")
        XCTAssertEqual(Set(rows), Set(declared))
        XCTAssertEqual(ObservableProgress.propertyRows.count, rows.count)
        // The rows' key paths are distinct and none is `node` or `id`: with the counts above, each public
        // property that follows the node is announced by exactly one row. (Which row names which property is
        // the getters' business: each reads the row named after it.)
        let keyPaths = try Mirror(reflecting: ObservableProgress.properties).children.map {
            try XCTUnwrap(Mirror(reflecting: $0.value).descendant("keyPath") as? AnyKeyPath)
        }
        XCTAssertEqual(Set(keyPaths).count, keyPaths.count)
        XCTAssertFalse(keyPaths.contains(\ObservableProgress.id))
        XCTAssertFalse(keyPaths.contains(\ObservableProgress.node))
    }

    /// A view or loop that goes away keeps nothing alive and stops being notified.
    func test_a_companion_nobody_holds_goes_away_and_keeps_neither_the_node_nor_its_observer() throws {
        weak var weakNode: ProgressNode?
        weak var weakProgress: ObservableProgress?
        let bridge: ObservableProgressBridge
        do {
            let node = ProgressNode.discreteProgress(totalUnitCount: 2)
            let progress = node.observable
            _ = progress.fractionCompleted
            node.advance()
            try waitForDelivery(of: progress) { progress.fractionCompleted == 0.5 }
            weakNode = node
            weakProgress = progress
            bridge = progress.bridge
            XCTAssertEqual(node.observerCount, 1)
            // The echo of that change is the last delivery: let it run, so that nothing holds either for it.
            while bridge.hasDeliveryScheduled { Thread.sleep(forTimeInterval: 0.001) }
            bridge.waitForRunningDelivery()
        }
        XCTAssertNil(weakProgress)
        XCTAssertNil(weakNode)
    }

    func test_finished_children_are_released_below_a_tracked_root() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        let progress = root.observable
        _ = progress.fractionCompleted
        _ = progress.children
        weak var last: ProgressNode?
        for _ in 0..<1_000 {
            let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            child.advance()
            last = child
        }
        XCTAssertNil(last)
        XCTAssertEqual(root.completedUnitCount, 1_000)
    }

    // MARK: Docs/Observation.md

    func test_guide_observation_tracking_loop() {
        let printed = PrintedLines()
        let print: @Sendable (Any) -> Void = { printed.append($0) }
        // BEGIN snippet: observation-tracking-loop
        let album = ProgressNode.discreteProgress(totalUnitCount: 4)
        let progress = album.observable
        DispatchQueue.global().async { for _ in 0..<4 { album.advance() } }
        while true {
            let changed = DispatchSemaphore(value: 0)
            // As a SwiftUI body: read what is shown, hear of the next change, read again.
            let (fraction, finished) = withObservationTracking {
                (progress.fractionCompleted, progress.isFinished)
            } onChange: {
                changed.signal()
            }
            if finished {
                print("\(Int(fraction * 100))%")  // 100%
                break
            }
            changed.wait()
        }
        // END snippet: observation-tracking-loop
        XCTAssertEqual(printed.lines, ["100%"])
    }

    // MARK: Helpers

    /// A root with two middles of two leaves each, the leaves 1,000 units each.
    private func makeTree() -> (ProgressNode, [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        var leaves: [ProgressNode] = []
        for _ in 0..<2 {
            let middle = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            for _ in 0..<2 { leaves.append(ProgressNode(totalUnitCount: 1_000, parent: middle, pendingUnitCount: 1)) }
        }
        return (root, leaves)
    }

    private enum Ending {
        case finished
        case cancelled(ProgressNode)
        case failed(ProgressNode)
    }

    /// 8 threads, two per leaf, advance the leaves to their totals (or until `ending` cancels or fails the
    /// root halfway).
    private func drive(_ leaves: [ProgressNode], to ending: Ending) -> DispatchGroup {
        let group = DispatchGroup()
        let halfway = Counter()
        for leaf in leaves {
            for _ in 0..<2 {
                group.enter()
                Thread {
                    for step in 0..<500 {
                        leaf.advance()
                        if step == 250 {
                            halfway.add()
                            if halfway.count == 8 {
                                switch ending {
                                case .finished: break
                                case .cancelled(let root): root.cancel()
                                case .failed(let root): root.fail(CocoaError(.fileWriteOutOfSpace))
                                }
                            }
                        }
                    }
                    group.leave()
                }.start()
            }
        }
        return group
    }

    /// Re-arms `withObservationTracking` after each change and reads again, as a SwiftUI body is
    /// re-evaluated, until `isFinal` holds; fails (instead of hanging) when no change comes for 30 s.
    private func followUntilFinal(
        _ progress: ObservableProgress, file: StaticString = #filePath, line: UInt = #line,
        _ isFinal: @escaping (ObservableProgress) -> Bool
    ) throws -> (fraction: Double, isFinal: Bool) {
        while true {
            let changed = DispatchSemaphore(value: 0)
            let (fraction, final) = withObservationTracking {
                (progress.fractionCompleted, isFinal(progress))
            } onChange: {
                changed.signal()
            }
            if final { return (fraction, true) }
            guard changed.wait(timeout: .now() + 30) == .success else {
                XCTFail("no change announced after \(fraction)", file: file, line: line)
                return (fraction, false)
            }
        }
    }

    private func waitForDelivery(
        of progress: ObservableProgress, file: StaticString = #filePath, line: UInt = #line,
        until condition: () -> Bool
    ) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                XCTFail("condition not met within 30 s", file: file, line: line)
                throw CancellationError()
            }
            let changed = DispatchSemaphore(value: 0)
            withObservationTracking {
                _ = condition()
            } onChange: {
                changed.signal()
            }
            _ = changed.wait(timeout: .now() + 0.1)
        }
    }

    private func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async -> T) async throws -> T?
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// Counts notifications, and those made on an updating thread.
private final class NotificationRecord: Sendable {
    private let total = Atomic<Int>(0)
    private let onUpdater = Atomic<Int>(0)
    func add(updatingThread: Bool) {
        total.add(1, ordering: .relaxed)
        if updatingThread { onUpdater.add(1, ordering: .relaxed) }
    }
    var count: Int { total.load(ordering: .relaxed) }
    var onUpdatingThread: Int { onUpdater.load(ordering: .relaxed) }
}

/// Marks the threads that update the tree (thread-local).
private enum UpdaterMark {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    static func set() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1)) }
    static var isSet: Bool { pthread_getspecific(key) != nil }
}
