// The benchmark scenarios of Docs/Performance.md, written once and run by both executables of this package:
// `ProgressTreeCompare` (ContinuousClock, side-by-side table) and `ProgressTreeBenchmarks`
// (package-benchmark: wall clock, malloc counts, memory and p90 thresholds).
//
// Every scenario exists three times:
// - `PN`: ProgressTree's `ProgressNode`;
// - `FP`: the toolchain's own `Foundation.Progress`, driven the same way;
// - `Limit`: the same number of bare relaxed `Atomic<Int64>` adds, the physical limit of any thread-safe
//   counter (no tree, no fraction, no finishing).
//
// Each function builds what it needs, does the work, checks the result (a wrong result is a bug, so it
// stops the run with `preconditionFailure`) and returns a value to keep the optimizer honest.

import Dispatch
import Foundation
import Observation
import ProgressTree
import ProgressTreeTerminal
import Synchronization

// MARK: - Sizes

/// The sizes of the scenarios. `full` is what `Docs/Performance.md` reports; `smoke` is a quick pass for CI.
public struct ScenarioSizes: Sendable {
    /// Scenario 1 and the updates of scenarios 2 and 3.
    public var updates: Int
    /// Depth of the leaf in scenarios 2, 3 and 7 (the root is at depth 0).
    public var depth: Int
    /// Scenario 4: children × updates per child.
    public var children: Int
    public var updatesPerChild: Int
    /// Scenario 5: updates per thread (two threads).
    public var updatesPerThread: Int
    /// Scenario 6: create-attach-finish cycles (timed), and the count for the memory measurement.
    public var childCycles: Int
    public var memoryChildren: Int
    /// Scenario 7: update-then-read pairs.
    public var polledUpdates: Int
    /// Scenario 8: updates with the terminal renderer attached, and without.
    public var rendererUpdates: Int
    /// Scenario 9: reads of a clean root, and the children of the wide root read (the chain is `depth` deep).
    public var cleanReads: Int
    public var cleanReadChildren: Int
    /// Scenario 10: updates per thread, each thread on its own tree (a chain `depth` deep), with a read of
    /// its root every `ownTreeReadEvery[i]` updates.
    public var ownTreeUpdates: Int
    public var ownTreeReadEvery: [Int]
    /// Scenario 11: children of the wide root (one run per count), updates in all (round-robin, so each
    /// child gets `wideUpdates / children`), and a read of the root every `wideReadEvery` updates.
    public var wideChildren: [Int]
    public var wideUpdates: Int
    public var wideReadEvery: Int
    /// Scenario 12: observed nodes (children of one root, one observation each) × updates per node.
    public var observedNodes: Int
    public var observedUpdatesPerNode: Int
    /// Scenario 13: live (attached, unfinished) children for the memory measurement.
    public var liveNodes: Int
    /// Scenario 16: file children of the described root (one run per count), and the update-and-read pairs
    /// timed for each count.
    public var describedChildren: [Int]
    public var describedReads: [Int]

    public static let full = ScenarioSizes(
        updates: 1_000_000, depth: 8, children: 1_000, updatesPerChild: 1_000, updatesPerThread: 500_000,
        childCycles: 100_000, memoryChildren: 1_000_000, polledUpdates: 100_000, rendererUpdates: 10_000_000,
        cleanReads: 2_000_000, cleanReadChildren: 100, ownTreeUpdates: 200_000, ownTreeReadEvery: [1, 10, 100],
        wideChildren: [1_000, 100_000], wideUpdates: 1_000_000, wideReadEvery: 1_000,
        observedNodes: 1_000, observedUpdatesPerNode: 100, liveNodes: 1_000_000,
        describedChildren: [1_000, 10_000, 100_000], describedReads: [2_000, 500, 50])

    public static let smoke = ScenarioSizes(
        updates: 20_000, depth: 8, children: 100, updatesPerChild: 200, updatesPerThread: 10_000,
        childCycles: 2_000, memoryChildren: 20_000, polledUpdates: 2_000, rendererUpdates: 200_000,
        cleanReads: 20_000, cleanReadChildren: 100, ownTreeUpdates: 2_000, ownTreeReadEvery: [1, 10, 100],
        wideChildren: [100, 2_000], wideUpdates: 20_000, wideReadEvery: 1_000,
        observedNodes: 100, observedUpdatesPerNode: 10, liveNodes: 10_000,
        describedChildren: [100, 1_000], describedReads: [100, 20])
}

// MARK: - Helpers

/// Keeps a value alive and opaque to the optimizer.
@inline(never)
public func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// One counter on its own heap object (and so its own cache line, give or take), as a node's would be.
final class Counter: Sendable {
    let value = Atomic<Int64>(0)
}

/// `object`, through a call the optimizer cannot see into: a `Counter` made for a loop stays on the heap, as
/// a node's count does, instead of being promoted to the stack.
@inline(never)
func opaque<Object: AnyObject>(_ object: Object) -> Object { object }

/// Runs `body(0)` and `body(1)` on two threads at once and waits for both. Both start together.
func onTwoThreads(_ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let gate = Gate()
    for index in 0..<2 {
        DispatchQueue.global().async(group: group) {
            gate.arriveAndWait(parties: 2)
            body(index)
        }
    }
    group.wait()
}

/// A spinning two-party start gate, so that both threads really run their loops at the same time.
final class Gate: Sendable {
    private let arrived = Atomic<Int>(0)
    func arriveAndWait(parties: Int) {
        arrived.add(1, ordering: .sequentiallyConsistent)
        while arrived.load(ordering: .sequentiallyConsistent) < parties {}
    }
}

/// `root` → … → leaf, `depth` edges, each intermediate node standing for all of its parent's units.
public func makeChain(depth: Int, leafTotal: Int64) -> (root: ProgressNode, leaf: ProgressNode) {
    let root = ProgressNode.discreteProgress(totalUnitCount: 1)
    var node = root
    for level in 1...depth {
        node = ProgressNode(totalUnitCount: level == depth ? leafTotal : 1, parent: node, pendingUnitCount: 1)
    }
    return (root, node)
}

public func makeFoundationChain(depth: Int, leafTotal: Int64) -> (root: Progress, leaf: Progress) {
    let root = Progress.discreteProgress(totalUnitCount: 1)
    var node = root
    for level in 1...depth {
        node = Progress(totalUnitCount: level == depth ? leafTotal : 1, parent: node, pendingUnitCount: 1)
    }
    return (root, node)
}

func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { preconditionFailure("benchmark result check failed: \(message())") }
}

/// `what` is built only when the check fails, so that a loop checking every value builds no string.
func expectClose(_ value: Double, _ expected: Double, _ what: @autoclosure () -> String) {
    expect(abs(value - expected) < 1e-9, "\(what()) is \(value), expected \(expected)")
}

// MARK: - ProgressNode

public enum PN {
    /// 1. One node, `n` updates.
    @inline(never)
    public static func singleNode(_ n: Int) -> Double {
        let node = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n { node.advance(by: 1) }
        let fraction = node.fractionCompleted
        expect(node.isFinished && fraction == 1, "single node ends finished")
        return fraction
    }

    /// Only the update loop of scenario 1, on a node made by the caller (for the allocation count).
    @inline(never)
    public static func advanceLoop(_ node: ProgressNode, _ n: Int) {
        for _ in 0..<n { node.advance(by: 1) }
    }

    /// 1b. Scenario 1 through a `BatchReporter`: one node, `n` × `reporter.advance()`, one read. The node
    /// must finish at the last unit, not before (checked once, half-way, and at the end).
    @inline(never)
    public static func singleNodeReporter(_ n: Int) -> Double {
        let node = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        node.withBatchReporter { reporter in
            for _ in 0..<(n - 1) { reporter.advance() }
            expect(
                !node.isFinished && node.completedUnitCount > Int64(n) - Int64(n) / 1_000 - 1,
                "reporter: one step behind at most")
            reporter.advance()
            expect(node.isFinished, "reporter: finished at the last unit")
        }
        let fraction = node.fractionCompleted
        expect(node.completedUnitCount == Int64(n) && fraction == 1, "reporter: single node ends finished")
        return fraction
    }

    /// Only the loop of scenario 1b, on a node made by the caller (for the allocation count): the reporter
    /// is made, used and dropped inside.
    @inline(never)
    public static func reporterLoop(_ node: ProgressNode, _ n: Int) {
        node.withBatchReporter { reporter in
            for _ in 0..<n { reporter.advance() }
        }
    }

    /// 2. A leaf `depth` levels deep, `n` updates, then one read of the root's fraction. The leaf stands
    /// for `n + 1` units, so it does not finish and the read really folds the path back up.
    @inline(never)
    public static func deepLeaf(_ n: Int, depth: Int) -> Double {
        let (root, leaf) = makeChain(depth: depth, leafTotal: Int64(n) + 1)
        _ = root.fractionCompleted  // a clean tree, as after the UI's last refresh
        for _ in 0..<n { leaf.advance(by: 1) }
        let fraction = root.fractionCompleted
        expectClose(fraction, Double(n) / Double(n + 1), "deep leaf: root fraction")
        return fraction
    }

    /// 3. As 2, with the root's fraction observed on another queue. Timed until the observer has
    /// delivered the final value.
    @inline(never)
    public static func deepLeafObserved(_ n: Int, depth: Int) -> (fraction: Double, deliveries: Int) {
        let (root, leaf) = makeChain(depth: depth, leafTotal: Int64(n) + 1)
        let queue = DispatchQueue(label: "observer")
        let deliveries = Atomic<Int>(0)
        let last = Mutex<Double>(0)
        let expected = Double(n) / Double(n + 1)
        let done = DispatchSemaphore(value: 0)
        let observation = root.observe(\.fractionCompleted, on: queue) { _, change in
            deliveries.add(1, ordering: .relaxed)
            last.withLock { $0 = change.newValue }
            if change.newValue == expected { done.signal() }
        }
        for _ in 0..<n { leaf.advance(by: 1) }
        let fraction = root.fractionCompleted
        expectClose(fraction, expected, "observed deep leaf: root fraction")
        // Coalescing guarantees the last value is delivered.
        expect(done.wait(timeout: .now() + 10) == .success, "observer never saw the final value")
        observation.invalidate()
        expectClose(last.withLock { $0 }, expected, "observed deep leaf: last delivered value")
        return (fraction, deliveries.load(ordering: .relaxed))
    }

    /// 15. As 2, with the root tracked through Swift's Observation (`root.observable`, a loop re-arming
    /// `withObservationTracking` on another thread, as a SwiftUI view would). Timed: the updates and the
    /// root's read, as in 2 (the cost to the updating thread); then, untimed, the tracking loop must see
    /// the final value.
    @inline(never)
    public static func deepLeafTracked(_ n: Int, depth: Int) -> (seconds: Double, notifications: Int) {
        let (root, leaf) = makeChain(depth: depth, leafTotal: Int64(n) + 1)
        let progress = root.observable
        let expected = Double(n) / Double(n + 1)
        let notifications = Atomic<Int>(0)
        let sawFinal = DispatchSemaphore(value: 0)
        _ = progress.fractionCompleted
        Thread {
            while true {
                let changed = DispatchSemaphore(value: 0)
                let value = withObservationTracking {
                    progress.fractionCompleted
                } onChange: {
                    notifications.add(1, ordering: .relaxed)
                    changed.signal()
                }
                if value == expected { break }
                if changed.wait(timeout: .now() + 10) == .timedOut { break }
            }
            sawFinal.signal()
        }.start()
        _ = root.fractionCompleted  // a clean tree, as after the UI's last refresh
        let start = ContinuousClock.now
        for _ in 0..<n { leaf.advance(by: 1) }
        let fraction = root.fractionCompleted
        let elapsed = ContinuousClock.now - start
        expectClose(fraction, expected, "tracked deep leaf: root fraction")
        expect(sawFinal.wait(timeout: .now() + 20) == .success, "the tracking loop never saw the final value")
        expectClose(progress.fractionCompleted, expected, "tracked deep leaf: the value tracked")
        let (seconds, attoseconds) = elapsed.components
        return (Double(seconds) + Double(attoseconds) * 1e-18, notifications.load(ordering: .relaxed))
    }

    /// 4. `children` children, each updated `perChild` times to completion, one after the other.
    @inline(never)
    public static func manyChildren(_ children: Int, perChild: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
        let nodes = (0..<children).map { _ in
            ProgressNode(totalUnitCount: Int64(perChild), parent: root, pendingUnitCount: 1)
        }
        for node in nodes {
            for _ in 0..<perChild { node.advance(by: 1) }
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "many children: root finished (\(fraction))")
        return fraction
    }

    /// 5. Two threads, each advancing its own leaf `perThread` times; the root must end at exactly 1.0
    /// and finished.
    @inline(never)
    public static func twoThreads(_ perThread: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let leaves = (0..<2).map { _ in
            ProgressNode(totalUnitCount: Int64(perThread), parent: root, pendingUnitCount: 1)
        }
        onTwoThreads { index in
            let leaf = leaves[index]
            for _ in 0..<perThread { leaf.advance(by: 1) }
        }
        let fraction = root.fractionCompleted
        expect(
            fraction == 1.0 && root.isFinished && root.completedUnitCount == 2,
            "two threads: root ends at \(fraction), finished: \(root.isFinished), completed \(root.completedUnitCount) of 2"
        )
        return fraction
    }

    /// 6. Create a child, attach it and finish it, `n` times.
    @inline(never)
    public static func childCycles(_ n: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n {
            let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            child.advance(by: 1)
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "child cycles: root finished")
        return fraction
    }

    /// 6 with the root tracked through Swift's Observation (`root.observable`, its fraction and children
    /// read, as a view listing the children does): finished children must still be let go.
    @inline(never)
    public static func childCyclesTracked(_ n: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        let progress = root.observable
        _ = progress.fractionCompleted
        _ = progress.children
        for _ in 0..<n {
            let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            child.advance(by: 1)
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "child cycles, tracked: root finished")
        withExtendedLifetime(progress) {}
        return fraction
    }

    /// 7. After every leaf update, read the root's fraction (what a naive UI does).
    @inline(never)
    public static func polled(_ n: Int, depth: Int) -> Double {
        let (root, leaf) = makeChain(depth: depth, leafTotal: Int64(n) + 1)
        var sum = 0.0
        for _ in 0..<n {
            leaf.advance(by: 1)
            sum += root.fractionCompleted
        }
        expectClose(root.fractionCompleted, Double(n) / Double(n + 1), "polled: root fraction")
        return sum
    }
}

// MARK: - ProgressNode with the terminal renderer

extension PN {
    /// 8. `n` updates of a leaf under a root, with a live `TerminalRenderer` on the root drawing to
    /// /dev/null from its own timer (default 15 frames per second, no initial delay so it draws from the
    /// start), or without one. Timed from before `start()` to after `stop()` (which draws the final frame).
    @inline(never)
    public static func withRenderer(_ n: Int, attached: Bool) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let leaf = ProgressNode(totalUnitCount: Int64(n), parent: root, pendingUnitCount: 1)
        var renderer: TerminalRenderer?
        var devNull: Int32 = -1
        if attached {
            devNull = open("/dev/null", O_WRONLY)
            expect(devNull >= 0, "open /dev/null")
            var options = TerminalRenderer.Options()
            options.initialDelay = .zero
            renderer = TerminalRenderer(
                root, mode: .live, options: options, output: FileDescriptorOutput(descriptor: devNull))
            renderer!.start()
        }
        for _ in 0..<n { leaf.advance(by: 1) }
        renderer?.stop()
        if devNull >= 0 { close(devNull) }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "renderer scenario: root finished")
        return fraction
    }
}

// MARK: - Foundation.Progress

public enum FP {
    @inline(never)
    public static func singleNode(_ n: Int) -> Double {
        let node = Progress.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n { node.completedUnitCount += 1 }
        let fraction = node.fractionCompleted
        expect(node.isFinished && fraction == 1, "Foundation single node ends finished")
        return fraction
    }

    @inline(never)
    public static func deepLeaf(_ n: Int, depth: Int) -> Double {
        let (root, leaf) = makeFoundationChain(depth: depth, leafTotal: Int64(n) + 1)
        _ = root.fractionCompleted
        for _ in 0..<n { leaf.completedUnitCount += 1 }
        let fraction = root.fractionCompleted
        expectClose(fraction, Double(n) / Double(n + 1), "Foundation deep leaf: root fraction")
        return fraction
    }

    @inline(never)
    public static func manyChildren(_ children: Int, perChild: Int) -> Double {
        let root = Progress.discreteProgress(totalUnitCount: Int64(children))
        let nodes = (0..<children).map { _ in
            Progress(totalUnitCount: Int64(perChild), parent: root, pendingUnitCount: 1)
        }
        for node in nodes {
            for _ in 0..<perChild { node.completedUnitCount += 1 }
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "Foundation many children: root finished (\(fraction))")
        return fraction
    }

    /// Foundation's `Progress` has no locking at all (swift-corelibs-foundation), so two threads updating
    /// two leaves of one root race on the root. The correct way to use it from two threads is a lock
    /// around every update, which is what this measures.
    @inline(never)
    public static func twoThreadsLocked(_ perThread: Int) -> Double {
        let root = Progress.discreteProgress(totalUnitCount: 2)
        let leaves = (0..<2).map { _ in
            Progress(totalUnitCount: Int64(perThread), parent: root, pendingUnitCount: 1)
        }
        let lock = Mutex<Void>(())
        let shared = UncheckedBox((root, leaves))
        onTwoThreads { index in
            let leaf = shared.value.1[index]
            for _ in 0..<perThread { lock.withLock { _ in leaf.completedUnitCount += 1 } }
        }
        let fraction = lock.withLock { _ in root.fractionCompleted }
        expect(fraction == 1 && root.isFinished, "Foundation (locked) two threads: root ends at \(fraction)")
        return fraction
    }

    /// The same without the lock: a data race, run only on request (`--unsafe-foundation`) to show
    /// whether the result comes out right. Returns the root's final fraction and finished state.
    @inline(never)
    public static func twoThreadsUnlocked(_ perThread: Int) -> (fraction: Double, finished: Bool) {
        let root = Progress.discreteProgress(totalUnitCount: 2)
        let leaves = (0..<2).map { _ in
            Progress(totalUnitCount: Int64(perThread), parent: root, pendingUnitCount: 1)
        }
        let shared = UncheckedBox(leaves)
        onTwoThreads { index in
            let leaf = shared.value[index]
            for _ in 0..<perThread { leaf.completedUnitCount += 1 }
        }
        return (root.fractionCompleted, root.isFinished)
    }

    @inline(never)
    public static func childCycles(_ n: Int) -> Double {
        let root = Progress.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n {
            let child = Progress(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            child.completedUnitCount = 1
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "Foundation child cycles: root finished")
        return fraction
    }

    @inline(never)
    public static func polled(_ n: Int, depth: Int) -> Double {
        let (root, leaf) = makeFoundationChain(depth: depth, leafTotal: Int64(n) + 1)
        var sum = 0.0
        for _ in 0..<n {
            leaf.completedUnitCount += 1
            sum += root.fractionCompleted
        }
        expectClose(root.fractionCompleted, Double(n) / Double(n + 1), "Foundation polled: root fraction")
        return sum
    }
}

/// Moves a non-Sendable value (Foundation's `Progress`) to the benchmark's worker threads.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: - The atomic limit

public enum Limit {
    /// `n` relaxed adds on one counter: `wrappingAdd`, one `lock xadd` on x86-64 (`add` checks for overflow,
    /// which takes a compare-and-exchange loop), on a class's stored atomic.
    @inline(never)
    public static func adds(_ n: Int) -> Int64 {
        let counter = opaque(Counter())
        for _ in 0..<n { counter.value.wrappingAdd(1, ordering: .relaxed) }
        let result = counter.value.load(ordering: .relaxed)
        expect(result == Int64(n), "atomic adds")
        return result
    }

    /// Scenario 4's shape: `children` counters, `perChild` adds each.
    @inline(never)
    public static func manyCounters(_ children: Int, perChild: Int) -> Int64 {
        let counters = (0..<children).map { _ in Counter() }
        for counter in counters {
            for _ in 0..<perChild { counter.value.wrappingAdd(1, ordering: .relaxed) }
        }
        return counters.reduce(0) { $0 + $1.value.load(ordering: .relaxed) }
    }

    /// Scenario 5's shape: two threads, each on its own counter.
    @inline(never)
    public static func twoThreads(_ perThread: Int) -> Int64 {
        let counters = [Counter(), Counter()]
        onTwoThreads { index in
            let counter = counters[index]
            for _ in 0..<perThread { counter.value.wrappingAdd(1, ordering: .relaxed) }
        }
        let sum = counters[0].value.load(ordering: .relaxed) + counters[1].value.load(ordering: .relaxed)
        expect(sum == 2 * Int64(perThread), "atomic two threads")
        return sum
    }
}

// MARK: - Memory

/// Resident set size of this process now, from `/proc/self/statm` (Linux); `nil` elsewhere.
public func residentBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Peak resident set size of this process (`VmHWM` in `/proc/self/status`, Linux); `nil` elsewhere.
public func peakResidentBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let number = line.dropFirst(6).filter(\.isNumber)
        return Int(number).map { $0 * 1024 }
    }
    return nil
}
