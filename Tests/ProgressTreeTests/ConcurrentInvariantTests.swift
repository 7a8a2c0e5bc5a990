import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// The concurrent counterpart of `ModelBasedTests`: two threads run seeded random operations on one shared
/// forest at once (count changes, `pause()`/`resume()`/rarely `cancel()` of the roots, new children added).
/// No interleaving is known in advance, so instead of a model the test checks, once both threads are done,
/// what must hold whatever the interleaving (Docs/Cancellation.md, "The model" and "Handlers";
/// Docs/Composition.md, "The formula"):
///
/// - each handler ran once per transition: `cancellationHandler` once if cancelled, else never; pausing
///   minus resuming calls is 1 for a paused node, 0 otherwise;
/// - a finished node is not paused (unless it was cancelled while paused: `resume()` after `cancel()` does
///   nothing);
/// - the attached children of a node are unfinished, attached to it, cancelled if it is cancelled, and
///   paused or cancelled if it is paused (pause and resume are only ever called on the roots);
/// - `fractionCompleted` of every node is the formula over its counts and its attached children;
/// - after `resume()` of every root, no node is paused but those cancelled while paused (a paused node
///   anywhere else is one no `resume()` reaches).
///
/// Every node gets counting handlers before it is attached, so no transition can come before them.
/// More rounds: `PROGRESSTREE_CONCURRENT_MODEL_SEEDS=1-5000 swift test --filter ConcurrentInvariantTests`.
final class ConcurrentInvariantTests: XCTestCase {
    static let defaultSeeds = Array(UInt64(1)...150)
    static let operationsPerThread = 300

    func test_concurrent_random_operations_keep_the_invariants_of_handlers_pausing_and_fractions() throws {
        let seeds = try ModelSeeds.fromEnvironment(variable: "PROGRESSTREE_CONCURRENT_MODEL_SEEDS") ?? Self.defaultSeeds
        var failures: [String] = []
        for seed in seeds {
            let problems = ConcurrentRound(seed: seed).run(operationsPerThread: Self.operationsPerThread)
            if !problems.isEmpty {
                failures.append("seed \(seed):\n    " + problems.prefix(8).joined(separator: "\n    "))
            }
        }
        for failure in failures.prefix(3) { XCTFail(failure) }
        XCTAssertEqual(failures.count, 0, "\(failures.count) of \(seeds.count) rounds broke an invariant")
    }
}

/// One round: a forest of two roots with a few children, two threads of random operations, the checks.
private final class ConcurrentRound: Sendable {
    struct Handlers: Sendable {
        let cancellation = CallCounter()
        let pausing = CallCounter()
        let resuming = CallCounter()
    }

    let seed: UInt64
    let roots: [ProgressNode]
    /// Every node, with its handler counters, in creation order; appended to by both threads.
    private let registry = Lock<[(node: ProgressNode, handlers: Handlers)]>([])

    init(seed: UInt64) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        roots = (0..<2).map { _ in ProgressNode.discreteProgress(totalUnitCount: random.value(in: 2...8)) }
        for root in roots { register(root) }
        for _ in 0..<6 { addChild(&random) }
    }

    private func register(_ node: ProgressNode) {
        let handlers = Handlers()
        node.cancellationHandler = handlers.cancellation.increment
        node.pausingHandler = handlers.pausing.increment
        node.resumingHandler = handlers.resuming.increment
        registry.withLock { $0.append((node, handlers)) }
    }

    private var all: [(node: ProgressNode, handlers: Handlers)] { registry.withLock { $0 } }

    private func randomNode(_ random: inout SplitMix64) -> ProgressNode {
        let nodes = all
        return nodes[random.below(nodes.count)].node
    }

    /// A new node, handlers first, then attached below any node (a new node cannot close a cycle).
    private func addChild(_ random: inout SplitMix64) {
        let parent = randomNode(&random)
        let child = ProgressNode.discreteProgress(totalUnitCount: random.value(in: 1...4))
        if random.below(4) == 0 { child.advance(by: random.value(in: 1...4)) }  // maybe finished already
        register(child)
        parent.addChild(child, withPendingUnitCount: random.value(in: 0...3))
    }

    private func operate(_ random: inout SplitMix64) {
        switch random.below(100) {
        case 0..<30: randomNode(&random).advance(by: random.below(5) == 0 ? -1 : random.value(in: 1...2))
        case 30..<42: randomNode(&random).completedUnitCount = random.value(in: 0...4)
        case 42..<50: randomNode(&random).totalUnitCount = random.value(in: 1...6)
        case 50..<65: roots[random.below(roots.count)].pause()
        case 65..<80: roots[random.below(roots.count)].resume()
        case 80..<81: roots[random.below(roots.count)].cancel()
        case 81..<90 where all.count < 40: addChild(&random)
        default: _ = randomNode(&random).fractionCompleted
        }
    }

    /// Runs both threads to the end, then returns the broken invariants (empty when all hold).
    func run(operationsPerThread: Int) -> [String] {
        let done = DispatchGroup()
        for thread in 0..<2 {
            done.enter()
            let seed = seed &* 2 &+ UInt64(thread) &+ 0x1234_5678
            Thread { [self] in
                var random = SplitMix64(seed: seed)
                for _ in 0..<operationsPerThread { operate(&random) }
                done.leave()
            }.start()
        }
        done.wait()
        var problems = invariantViolations()
        problems += check(afterResumingRoots: false)
        for root in roots { root.resume() }
        problems += invariantViolations()
        problems += check(afterResumingRoots: true)
        return problems
    }

    /// The core's invariants that the nodes break (`ProgressNode.invariantViolations()`, from each node not
    /// attached, and so for every node): none unless the build checks them (PROGRESSTREE_INTERNAL_CHECKS).
    private func invariantViolations() -> [String] {
        guard ProgressNode.internalChecksEnabled else { return [] }
        var violations: [String] = []
        for (index, entry) in all.enumerated() where entry.node.state.withLock({ $0.link.kind }) != .attached {
            violations += entry.node.invariantViolations().map { "below n\(index) (its root): \($0)" }
        }
        return violations
    }

    /// Where `node` hangs: attached to which node (and that one's state), detached, or never added.
    private func placement(of node: ProgressNode, _ names: [ObjectIdentifier: String]) -> String {
        let kind = node.state.withLock { $0.link.kind }
        guard let parent = node.parent else { return kind == .none ? "never added" : "finished and detached" }
        let name = names[ObjectIdentifier(parent)] ?? "?"
        let counts = "\(parent.completedUnitCount) of \(parent.totalUnitCount)"
        let marks = (parent.isPaused ? ", paused" : "") + (parent.isCancelled ? ", cancelled" : "")
        return "attached to \(name) (" + counts + marks + ", " + placement(of: parent, names) + ")"
    }

    private func check(afterResumingRoots: Bool) -> [String] {
        var problems: [String] = []
        let nodes = all
        let names = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { (ObjectIdentifier($1.node), "n\($0)") })
        for (index, (node, handlers)) in nodes.enumerated() {
            let name = "n\(index)"
            let isPaused = node.isPaused
            let isCancelled = node.isCancelled
            let isFinished = node.isFinished
            let describe =
                "(\(node.completedUnitCount) of \(node.totalUnitCount)"
                + (isCancelled ? ", cancelled" : "") + (isPaused ? ", paused" : "") + ")"
            if afterResumingRoots {
                if isPaused && !isCancelled {
                    problems.append(
                        "\(name) \(describe), \(placement(of: node, names)), is paused after every root resumed")
                }
                continue
            }
            if handlers.cancellation.value != (isCancelled ? 1 : 0) {
                problems.append("\(name) \(describe): cancellationHandler ran \(handlers.cancellation.value) times")
            }
            if handlers.pausing.value - handlers.resuming.value != (isPaused ? 1 : 0) {
                problems.append(
                    "\(name) \(describe): pausingHandler ran \(handlers.pausing.value) times, resumingHandler "
                        + "\(handlers.resuming.value)")
            }
            if isFinished && isPaused && !isCancelled {
                problems.append("\(name) \(describe) is finished and paused")
            }
            var childUnits = 0.0
            for child in node.children {
                let childName = names[ObjectIdentifier(child)] ?? "?"
                let link = (
                    child.parent,
                    child.state.withLock {
                        $0.link.kind == .none ? nil : child.pendingInParent.load(ordering: .relaxed)
                    }
                )
                guard link.0 === node, let pending = link.1 else {
                    problems.append("\(name) lists \(childName), which is not attached to it")
                    continue
                }
                if child.isFinished { problems.append("\(name) lists \(childName), which is finished") }
                if isCancelled && !child.isCancelled {
                    problems.append("\(name) is cancelled, its attached child \(childName) is not")
                }
                // Only the roots are ever paused or resumed, so below a paused node everything is paused
                // (or cancelled, which pause leaves alone).
                if isPaused && !isCancelled && !child.isPaused && !child.isCancelled {
                    problems.append("\(name) \(describe) is paused, its attached child \(childName) is not")
                }
                childUnits += Double(pending) * child.fractionCompleted
            }
            let expected =
                ReferenceModel.isIndeterminate(completed: node.completedUnitCount, total: node.totalUnitCount)
                ? 0 : min(1, (Double(node.completedUnitCount) + childUnits) / Double(node.totalUnitCount))
            if abs(node.fractionCompleted - expected) > 1e-9 {
                problems.append(
                    "\(name) \(describe): fractionCompleted \(node.fractionCompleted), its counts and children give \(expected)"
                )
            }
        }
        return problems
    }
}
