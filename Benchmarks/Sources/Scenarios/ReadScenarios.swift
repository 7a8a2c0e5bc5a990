// The read scenarios (9–13), for ProgressNode (`PN`), Foundation's `Progress` (`FP`) and, where
// it means something, the atomic limit (`Limit`). Same rules as `Scenarios.swift`: public API only, every
// result checked (a wrong one stops the run), a value returned to keep the optimizer honest.
//
// Unlike scenarios 1–8, which time the whole call, 9–12 time only the phase they are about: the tree is
// built (and read once, so that it is clean) before the clock starts. They return that time in seconds.
//
//  9. Clean-root read: `fractionCompleted` of a root with nothing changed since the last read, for an
//     8-deep chain and for a root with 100 children.
// 10. Two threads, two independent trees (8-deep chains): each thread updates the leaf of its own tree and
//     reads its own root every k updates (k = 1, 10, 100), or only updates, or only reads (`OwnTreeLoop`).
//     Run with one thread and with two, on `Thread`s started together behind a barrier; the scaling ratio is
//     (2-thread throughput) ÷ (1-thread throughput). The trees are built by the calling thread, one after
//     the other, as a program that hands each worker a tree would; a variant builds each on its worker.
// 11. Wide tree: 1,000 or 100,000 children updated round-robin, the root read every 1,000 updates.
// 12. 1,000 nodes, each observed (`observe(\.fractionCompleted, on:)`), updated round-robin until every
//     observer has received its node's final value. Foundation on Linux has no KVO: it gets the same updates
//     without observers.
// 13. Memory per live (attached, unfinished) node: see `PN.liveNodes` and `ProgressTreeCompare`, which runs
//     it in a fresh process per library.

import Dispatch
import Foundation
import ProgressTree
import Synchronization

// MARK: - Timing and threads

/// Seconds taken by `body`.
@inline(__always)
func timed(_ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    body()
    let (seconds, attoseconds) = (clock.now - start).components
    return Double(seconds) + Double(attoseconds) * 1e-18
}

/// Runs `body(0)`, …, `body(count - 1)` on `count` new `Thread`s and waits for all of them. The threads are
/// started together behind a barrier: each one runs `prepare(index)`, announces itself and waits; once all
/// are there they are let go at once. Returns the wall time from the first thread's start to the last
/// thread's end, in seconds (thread creation, `prepare` and the barrier are not included).
func onThreads(
    _ count: Int, prepare: @escaping @Sendable (Int) -> Void = { _ in }, _ body: @escaping @Sendable (Int) -> Void
) -> Double {
    let barrier = StartBarrier()
    let done = DispatchSemaphore(value: 0)
    let clock = ContinuousClock()
    let spans = Mutex<[(start: ContinuousClock.Instant, end: ContinuousClock.Instant)]>([])
    for index in 0..<count {
        let thread = Thread {
            prepare(index)
            barrier.arriveAndWait()
            let start = clock.now
            body(index)
            let end = clock.now
            spans.withLock { $0.append((start, end)) }
            done.signal()
        }
        thread.start()
    }
    barrier.release(whenArrived: count)
    for _ in 0..<count { done.wait() }
    return spans.withLock { spans in
        let (seconds, attoseconds) = (spans.map(\.end).max()! - spans.map(\.start).min()!).components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// The barrier of `onThreads`: workers yield the CPU while they wait (the machine may have fewer free cores
/// than threads), and all of them see the same release.
final class StartBarrier: Sendable {
    private let arrived = Atomic<Int>(0)
    private let go = Atomic<Bool>(false)

    func arriveAndWait() {
        arrived.add(1, ordering: .sequentiallyConsistent)
        while !go.load(ordering: .acquiring) { sched_yield() }
    }

    func release(whenArrived parties: Int) {
        while arrived.load(ordering: .sequentiallyConsistent) < parties { sched_yield() }
        go.store(true, ordering: .releasing)
    }
}

// MARK: - Scenario 10's loops

/// What each thread of scenario 10 does with its own tree, `updates` times.
public enum OwnTreeLoop: Sendable, CustomStringConvertible {
    /// A leaf update, and a read of the root after every `every`-th.
    case updatesAndReads(every: Int)
    /// A leaf update; the root is read once, after the clock stops.
    case updatesOnly
    /// A read of the root, clean: the leaf advanced once and the root was read before the clock started.
    case readsOnly

    var readsOnly: Bool {
        if case .readsOnly = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .updatesAndReads(let every): return "read/\(every)"
        case .updatesOnly: return "updates only"
        case .readsOnly: return "reads only"
        }
    }
}

// MARK: - ProgressNode

extension PN {
    /// The two shapes of scenario 9.
    public enum CleanShape: Sendable {
        /// `root` → … → leaf, `depth` edges.
        case chain(depth: Int)
        /// A root with `children` children.
        case wide(children: Int)
    }

    /// Scenario 9's tree: the leaf (or every child) stands for 4 units and has done 1, so the root reads
    /// exactly 0.25. Read once, so that it is clean. Returns the root and the value it must read.
    public static func makeCleanTree(_ shape: CleanShape) -> (
        root: ProgressNode, nodes: [ProgressNode], expected: Double
    ) {
        switch shape {
        case .chain(let depth):
            let (root, leaf) = makeChain(depth: depth, leafTotal: 4)
            leaf.advance(by: 1)
            expect(root.fractionCompleted == 0.25, "clean read: chain root reads \(root.fractionCompleted)")
            return (root, [leaf], 0.25)
        case .wide(let children):
            let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
            let nodes = (0..<children).map { _ in
                ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
            }
            for node in nodes { node.advance(by: 1) }
            expect(root.fractionCompleted == 0.25, "clean read: wide root reads \(root.fractionCompleted)")
            return (root, nodes, 0.25)
        }
    }

    /// Scenario 9's loop: `n` reads of `root.fractionCompleted`, each checked against `expected`.
    @inline(never)
    public static func cleanReadLoop(_ root: ProgressNode, _ n: Int, expected: Double) -> Double {
        var last = 0.0
        for _ in 0..<n {
            last = root.fractionCompleted
            if last != expected { preconditionFailure("clean read: root reads \(last), expected \(expected)") }
        }
        return last
    }

    /// 9. Seconds for `n` reads of a clean root (tree built and read once before the clock starts).
    @inline(never)
    public static func cleanReads(_ n: Int, _ shape: CleanShape) -> Double {
        let (root, nodes, expected) = makeCleanTree(shape)
        var last = 0.0
        let seconds = timed { last = cleanReadLoop(root, n, expected: expected) }
        consume(last)
        withExtendedLifetime(nodes) {}
        return seconds
    }

    /// 10. `threads` threads, each on its own `depth`-deep chain, running `loop` for `updates` steps (checked:
    /// the root reads `i / (updates + 1)` after `i` updates). The trees are built by the calling thread one
    /// after the other, or, with `buildOnThreads`, each by its worker before the barrier (in the worker's own
    /// malloc arena). Seconds from the first thread's start to the last one's end.
    @inline(never)
    public static func ownTrees(
        threads: Int, updates: Int, loop: OwnTreeLoop, depth: Int, buildOnThreads: Bool = false
    ) -> Double {
        let total = Int64(updates) + 1
        let start = loop.readsOnly ? 1 / Double(total) : 0
        let end = loop.readsOnly ? start : Double(updates) / Double(total)
        @Sendable func makeTree() -> (root: ProgressNode, leaf: ProgressNode) {
            let tree = makeChain(depth: depth, leafTotal: total)
            if loop.readsOnly { tree.leaf.advance(by: 1) }
            expect(tree.root.fractionCompleted == start, "own trees: fresh root")  // read once: clean
            return tree
        }
        let trees = Mutex<[Int: (root: ProgressNode, leaf: ProgressNode)]>([:])
        if !buildOnThreads {
            for index in 0..<threads {
                let tree = makeTree()
                trees.withLock { $0[index] = tree }
            }
        }
        let seconds = onThreads(
            threads,
            prepare: { index in
                guard buildOnThreads else { return }
                let tree = makeTree()
                trees.withLock { $0[index] = tree }
            }
        ) { index in
            let (root, leaf) = trees.withLock { $0[index]! }
            switch loop {
            case .updatesAndReads(let every):
                var untilRead = every
                for i in 1...updates {
                    leaf.advance(by: 1)
                    untilRead -= 1
                    if untilRead == 0 {
                        untilRead = every
                        let fraction = root.fractionCompleted
                        expectClose(fraction, Double(i) / Double(total), "own trees: root after \(i) updates")
                    }
                }
            case .updatesOnly:
                for _ in 0..<updates { leaf.advance(by: 1) }
            case .readsOnly:
                for _ in 0..<updates {
                    let fraction = root.fractionCompleted
                    if fraction != start { preconditionFailure("own trees: clean root reads \(fraction)") }
                }
            }
        }
        for (root, _) in trees.withLock({ Array($0.values) }) {
            expectClose(root.fractionCompleted, end, "own trees: final root")
            expect(!root.isFinished, "own trees: root must not finish")
        }
        return seconds
    }

    /// 11. A root with `children` children, `updates` updates round-robin (each child stands for
    /// `updates / children` units, so all of them finish with the last round), the root read every
    /// `readEvery` updates and checked. Seconds for the updates and reads (the tree is built before).
    @inline(never)
    public static func wideTree(children: Int, updates: Int, readEvery: Int) -> Double {
        let rounds = updates / children
        precondition(rounds * children == updates, "wide tree: updates must be a multiple of children")
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
        let nodes = (0..<children).map { _ in
            ProgressNode(totalUnitCount: Int64(rounds), parent: root, pendingUnitCount: 1)
        }
        expect(root.fractionCompleted == 0, "wide tree: fresh root")
        var reads = 0
        let seconds = timed {
            var untilRead = readEvery
            var done = 0
            for _ in 0..<rounds {
                for node in nodes {
                    node.advance(by: 1)
                    done += 1
                    untilRead -= 1
                    if untilRead == 0 {
                        untilRead = readEvery
                        reads += 1
                        expectClose(root.fractionCompleted, Double(done) / Double(updates), "wide tree: root")
                    }
                }
            }
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "wide tree: root ends finished (\(fraction))")
        expect(reads == updates / readEvery, "wide tree: \(reads) reads")
        return seconds
    }

    /// 12. A root with `nodes` children, each observed (`observe(\.fractionCompleted, on:)`, one serial queue
    /// for all), each updated `perNode` times round-robin. Timed from the first registration to the moment
    /// every observer has received 1.0 (its node's final value). Returns the seconds and the deliveries.
    @inline(never)
    public static func observedNodes(_ nodes: Int, perNode: Int) -> (seconds: Double, deliveries: Int) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(nodes))
        let children = (0..<nodes).map { _ in
            ProgressNode(totalUnitCount: Int64(perNode), parent: root, pendingUnitCount: 1)
        }
        let queue = DispatchQueue(label: "observers")
        let deliveries = Atomic<Int>(0)
        let finals = Atomic<Int>(0)
        let allFinal = DispatchSemaphore(value: 0)
        var observations: [ProgressObservation] = []
        observations.reserveCapacity(nodes)
        let seconds = timed {
            for child in children {
                observations.append(
                    child.observe(\.fractionCompleted, on: queue) { _, change in
                        deliveries.add(1, ordering: .relaxed)
                        if change.newValue == 1, finals.add(1, ordering: .acquiringAndReleasing).newValue == nodes {
                            allFinal.signal()
                        }
                    })
            }
            for _ in 0..<perNode {
                for child in children { child.advance(by: 1) }
            }
            expect(allFinal.wait(timeout: .now() + 30) == .success, "observed nodes: not every final value arrived")
        }
        for observation in observations { observation.invalidate() }
        expect(
            finals.load(ordering: .acquiring) == nodes, "observed nodes: \(finals.load(ordering: .acquiring)) finals")
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "observed nodes: root ends finished (\(fraction))")
        return (seconds, deliveries.load(ordering: .relaxed))
    }

    /// 13. `n` live children of one root: attached, each advanced to 1 of 2 units (unfinished), the root read
    /// once (it must read exactly 0.5). Nothing but the tree keeps them: the root holds its attached
    /// children. Returns the root, to be kept alive while the memory is measured.
    @inline(never)
    public static func liveNodes(_ n: Int) -> ProgressNode {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n {
            let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            child.advance(by: 1)
        }
        let fraction = root.fractionCompleted
        expect(fraction == 0.5 && !root.isFinished, "live nodes: root reads \(fraction), expected 0.5")
        return root
    }
}

// MARK: - Foundation.Progress

extension FP {
    public static func makeCleanTree(_ shape: PN.CleanShape) -> (root: Progress, nodes: [Progress], expected: Double) {
        switch shape {
        case .chain(let depth):
            let (root, leaf) = makeFoundationChain(depth: depth, leafTotal: 4)
            leaf.completedUnitCount += 1
            expect(root.fractionCompleted == 0.25, "Foundation clean read: chain root reads \(root.fractionCompleted)")
            return (root, [leaf], 0.25)
        case .wide(let children):
            let root = Progress.discreteProgress(totalUnitCount: Int64(children))
            let nodes = (0..<children).map { _ in
                Progress(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
            }
            for node in nodes { node.completedUnitCount += 1 }
            expect(root.fractionCompleted == 0.25, "Foundation clean read: wide root reads \(root.fractionCompleted)")
            return (root, nodes, 0.25)
        }
    }

    @inline(never)
    public static func cleanReadLoop(_ root: Progress, _ n: Int, expected: Double) -> Double {
        var last = 0.0
        for _ in 0..<n {
            last = root.fractionCompleted
            if last != expected {
                preconditionFailure("Foundation clean read: root reads \(last), expected \(expected)")
            }
        }
        return last
    }

    @inline(never)
    public static func cleanReads(_ n: Int, _ shape: PN.CleanShape) -> Double {
        let (root, nodes, expected) = makeCleanTree(shape)
        var last = 0.0
        let seconds = timed { last = cleanReadLoop(root, n, expected: expected) }
        consume(last)
        withExtendedLifetime(nodes) {}
        return seconds
    }

    /// 10 for Foundation: each tree is created here and then used by its one thread only, which is safe.
    @inline(never)
    public static func ownTrees(threads: Int, updates: Int, loop: OwnTreeLoop, depth: Int) -> Double {
        let total = Int64(updates) + 1
        let start = loop.readsOnly ? 1 / Double(total) : 0
        let end = loop.readsOnly ? start : Double(updates) / Double(total)
        let trees = UncheckedBox(
            (0..<threads).map { _ in
                let tree = makeFoundationChain(depth: depth, leafTotal: total)
                if loop.readsOnly { tree.leaf.completedUnitCount = 1 }
                return tree
            })
        for tree in trees.value { expect(tree.root.fractionCompleted == start, "Foundation own trees: fresh root") }
        let seconds = onThreads(threads) { index in
            let (root, leaf) = trees.value[index]
            switch loop {
            case .updatesAndReads(let every):
                var untilRead = every
                for i in 1...updates {
                    leaf.completedUnitCount += 1
                    untilRead -= 1
                    if untilRead == 0 {
                        untilRead = every
                        let fraction = root.fractionCompleted
                        expectClose(
                            fraction, Double(i) / Double(total), "Foundation own trees: root after \(i) updates")
                    }
                }
            case .updatesOnly:
                for _ in 0..<updates { leaf.completedUnitCount += 1 }
            case .readsOnly:
                for _ in 0..<updates {
                    let fraction = root.fractionCompleted
                    if fraction != start { preconditionFailure("Foundation own trees: root reads \(fraction)") }
                }
            }
        }
        for tree in trees.value {
            expectClose(tree.root.fractionCompleted, end, "Foundation own trees: final root")
            expect(!tree.root.isFinished, "Foundation own trees: root must not finish")
        }
        return seconds
    }

    @inline(never)
    public static func wideTree(children: Int, updates: Int, readEvery: Int) -> Double {
        let rounds = updates / children
        precondition(rounds * children == updates, "wide tree: updates must be a multiple of children")
        let root = Progress.discreteProgress(totalUnitCount: Int64(children))
        let nodes = (0..<children).map { _ in
            Progress(totalUnitCount: Int64(rounds), parent: root, pendingUnitCount: 1)
        }
        expect(root.fractionCompleted == 0, "Foundation wide tree: fresh root")
        var reads = 0
        let seconds = timed {
            var untilRead = readEvery
            var done = 0
            for _ in 0..<rounds {
                for node in nodes {
                    node.completedUnitCount += 1
                    done += 1
                    untilRead -= 1
                    if untilRead == 0 {
                        untilRead = readEvery
                        reads += 1
                        expectClose(
                            root.fractionCompleted, Double(done) / Double(updates), "Foundation wide tree: root")
                    }
                }
            }
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "Foundation wide tree: root ends finished (\(fraction))")
        expect(reads == updates / readEvery, "Foundation wide tree: \(reads) reads")
        return seconds
    }

    /// 12 for Foundation, which cannot be observed on Linux (no KVO): the same tree and updates, no observers.
    @inline(never)
    public static func observedNodesWithoutObservers(_ nodes: Int, perNode: Int) -> Double {
        let root = Progress.discreteProgress(totalUnitCount: Int64(nodes))
        let children = (0..<nodes).map { _ in
            Progress(totalUnitCount: Int64(perNode), parent: root, pendingUnitCount: 1)
        }
        let seconds = timed {
            for _ in 0..<perNode {
                for child in children { child.completedUnitCount += 1 }
            }
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "Foundation observed nodes: root ends finished (\(fraction))")
        for child in children { expect(child.fractionCompleted == 1, "Foundation observed nodes: child final value") }
        return seconds
    }

    @inline(never)
    public static func liveNodes(_ n: Int) -> Progress {
        let root = Progress.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n {
            let child = Progress(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
            child.completedUnitCount = 1
        }
        let fraction = root.fractionCompleted
        expect(fraction == 0.5 && !root.isFinished, "Foundation live nodes: root reads \(fraction), expected 0.5")
        return root
    }
}

// MARK: - The atomic limit

extension Limit {
    /// Scenario 9's limit: `n` acquiring loads of one counter, converted to a `Double` as a fraction would be.
    @inline(never)
    public static func loads(_ n: Int) -> Double {
        let counter = Counter()
        counter.value.store(1, ordering: .releasing)
        let seconds = timed {
            var sum = 0.0
            for _ in 0..<n { sum += Double(counter.value.load(ordering: .acquiring)) }
            expect(sum == Double(n), "atomic loads")
        }
        return seconds
    }

    /// Scenario 11's shape: `children` counters, `updates` relaxed adds round-robin.
    @inline(never)
    public static func roundRobin(children: Int, updates: Int) -> Double {
        let counters = (0..<children).map { _ in Counter() }
        let seconds = timed {
            for _ in 0..<(updates / children) {
                for counter in counters { counter.value.wrappingAdd(1, ordering: .relaxed) }
            }
        }
        let sum = counters.reduce(0) { $0 + $1.value.load(ordering: .relaxed) }
        expect(sum == Int64(updates), "atomic round-robin")
        return seconds
    }
}
