@testable import ProgressTree
import TestSupport

/// One operation of a model-based run (see `ModelBasedTests`). Nodes are named by creation order.
indirect enum ModelOperation {
    enum ScopeFlavour { case becomeCurrent, performAsCurrent, withCurrent }

    case createDiscrete(total: Int64)
    case createChild(total: Int64, parent: Int, pending: Int64)
    /// `init(totalUnitCount:)`: attaches to the innermost scope if its pending count is unclaimed.
    case createImplicit(total: Int64)
    /// `init(parent:)`: the current node (`true`) or `nil`.
    case createWithParent(current: Bool)
    case addChild(child: Int, parent: Int, pending: Int64)
    case setCompleted(node: Int, value: Int64)
    case setTotal(node: Int, value: Int64)
    case advance(node: Int, units: Int64)
    /// Changes with no read in between: count changes, or value sets among finishes and failures.
    case burst([ModelOperation])
    case cancel(node: Int)
    /// `fail(_:)` with a `ModelError`.
    case fail(node: Int)
    case pause(node: Int)
    case resume(node: Int)
    case reinstallHandlers(node: Int)
    /// `node[property] = value`, `property` indexing `ModelProperties.all`.
    case setProperty(node: Int, property: Int, value: Int)
    case scope(ScopeFlavour, node: Int, pending: Int64, body: [ModelOperation])
}

/// The error `ModelOperation.fail` fails nodes with.
struct ModelError: Error {}

/// A failure of a run: the report to print, and which properties differed (to shrink towards the same bug).
struct ModelFailure {
    let report: String
    let properties: Set<String>
}

/// One sequence of operations on real nodes and on `ReferenceModel`, compared after every step. Either
/// generated from a seed (`ModelRun(seed:steps:)`) or replayed from a program (`ModelRun(replaying:seed:)`,
/// used to shrink a failure: operations that no longer make sense, such as a node index not created yet,
/// are skipped).
final class ModelRun {
    private struct Handlers {
        let cancellation = CallCounter()
        let pausing = CallCounter()
        let resuming = CallCounter()

        func install(on node: ProgressNode) {
            node.cancellationHandler = cancellation.increment
            node.pausingHandler = pausing.increment
            node.resumingHandler = resuming.increment
        }
    }

    static let maxNodes = 14
    static let maxScopeDepth = 3

    let seed: UInt64
    /// Draws the operations (generating runs only).
    private var operationRandom: SplitMix64
    /// Draws the custom property operations (generating runs only), apart from `operationRandom` so that a
    /// seed's other operations stay what they were before properties were added.
    private var propertyRandom: SplitMix64
    /// Draws the order in which nodes are read; the same in a generating run and its replay.
    private var readRandom: SplitMix64
    private let replay: [ModelOperation]?
    /// Whether each comparison also checks the core's invariants (`invariantDifferences`).
    private let checkingInvariants: Bool
    private var stepsLeft: Int
    private var model = ReferenceModel()
    private var nodes: [ProgressNode] = []
    private var handlers: [Handlers] = []
    private var trace: [String] = []
    private var scopeDepth = 0
    /// The operations performed so far (top level; a scope holds its body).
    private(set) var program: [ModelOperation] = []
    private(set) var failure: ModelFailure?
    /// Whether the run met a finished node held by its parent with work still attached below it (after
    /// some step), the shape Docs/Cancellation.md's "Through finished nodes" is about.
    private(set) var metHeldNode = false
    /// Whether the run failed a node that was not final.
    private(set) var metFailure = false

    init(seed: UInt64, steps: Int, checkingInvariants: Bool = true) {
        self.seed = seed
        self.checkingInvariants = checkingInvariants
        operationRandom = SplitMix64(seed: seed)
        propertyRandom = SplitMix64(seed: seed ^ 0x3C3C_C3C3_9696_6969)
        readRandom = SplitMix64(seed: seed ^ 0x0F0F_F0F0_5A5A_A5A5)
        replay = nil
        stepsLeft = steps
    }

    init(replaying program: [ModelOperation], seed: UInt64) {
        self.seed = seed
        operationRandom = SplitMix64(seed: seed)
        propertyRandom = SplitMix64(seed: seed ^ 0x3C3C_C3C3_9696_6969)
        readRandom = SplitMix64(seed: seed ^ 0x0F0F_F0F0_5A5A_A5A5)
        replay = program
        stepsLeft = .max
        checkingInvariants = true
    }

    /// Runs the sequence; returns the first step after which the nodes and the model differ.
    func run() -> ModelFailure? {
        if let replay {
            for operation in replay where failure == nil {
                if let performed = perform(operation) { program.append(performed) }
            }
        } else {
            while stepsLeft > 0 && failure == nil {
                if let performed = generateAndPerform() { program.append(performed) }
            }
        }
        return failure
    }

    // MARK: Generating

    private func generateAndPerform() -> ModelOperation? {
        guard stepsLeft > 0, failure == nil else { return nil }
        stepsLeft -= 1
        return perform(generate())
    }

    private func generate() -> ModelOperation {
        // One operation in six sets a custom property (Properties/); one in three of those is a burst of value
        // sets, finishes and failures with no read in between, so that value sets walk past nodes whose
        // members left and were not drained yet (Summaries/PropertySums.swift).
        if !nodes.isEmpty && propertyRandom.below(6) == 0 {
            guard propertyRandom.below(3) == 0 else { return randomSetProperty() }
            return .burst(
                (0..<(2 + propertyRandom.below(4))).map { _ in
                    switch propertyRandom.below(4) {
                    case 0, 1: randomSetProperty()
                    case 2: finishByHand()
                    default: .fail(node: randomNode())
                    }
                })
        }
        let canCreate = nodes.count < Self.maxNodes
        let roll = nodes.isEmpty ? 0 : operationRandom.below(100)
        switch roll {
        case 0..<7 where canCreate: return .createDiscrete(total: randomTotal())
        case 7..<17 where canCreate:
            return .createChild(total: randomTotal(), parent: randomNode(), pending: randomPending())
        case 17..<23 where canCreate: return .createImplicit(total: randomTotal())
        case 23..<26 where canCreate:
            return .createWithParent(current: model.current != nil && operationRandom.below(2) == 0)
        case 26..<33:
            var pairs: [(child: Int, parent: Int)] = []
            for child in nodes.indices {
                for parent in nodes.indices where model.canAddChild(child, to: parent) { pairs.append((child, parent)) }
            }
            guard !pairs.isEmpty else { return randomAdvance() }
            let (child, parent) = operationRandom.element(of: pairs)
            return .addChild(child: child, parent: parent, pending: randomPending())
        case 33..<38: return randomCountChange(0)
        case 38..<42: return finishByHand()
        case 42..<48: return randomCountChange(1)
        case 48..<60: return randomAdvance()
        case 60..<64:
            return .burst((0..<(2 + operationRandom.below(3))).map { _ in randomCountChange(operationRandom.below(3)) })
        case 64..<66: return .cancel(node: randomNode())
        case 66..<68: return .fail(node: randomNode())
        case 68..<78: return .pause(node: randomNode())
        case 78..<87: return .resume(node: randomNode())
        case 87..<89: return .reinstallHandlers(node: randomNode())
        case 89..<100 where scopeDepth < Self.maxScopeDepth:
            let flavour = operationRandom.element(of: [
                ModelOperation.ScopeFlavour.becomeCurrent, .performAsCurrent, .withCurrent,
            ])
            return .scope(flavour, node: randomNode(), pending: randomPending(), body: [])  // body generated inside
        default: return randomAdvance()
        }
    }

    private func randomNode() -> Int { operationRandom.below(nodes.count) }

    private func randomSetProperty() -> ModelOperation {
        .setProperty(
            node: propertyRandom.below(nodes.count), property: propertyRandom.below(ModelProperties.count),
            value: Int(propertyRandom.value(in: -2...9)))
    }

    /// Sets a node's completed count to what finishes it, preferring nodes with work attached below them
    /// (a node finished by hand while its children run; or 1 of a total of 0), so that runs meet finished
    /// nodes with live children often (Docs/Cancellation.md, "Through finished nodes").
    private func finishByHand() -> ModelOperation {
        let withChildren = nodes.indices.filter { !model.nodes[$0].reached.isEmpty }
        let node =
            !withChildren.isEmpty && operationRandom.below(4) != 0
            ? operationRandom.element(of: withChildren) : randomNode()
        let total = model.nodes[node].total
        return .setCompleted(node: node, value: total > 0 ? total : 1)
    }

    private func randomTotal() -> Int64 {
        switch operationRandom.below(14) {
        case 0: 0
        case 1: -1
        case 2: 1_000
        case 3: .max
        case 4: (1 << 53) + 1  // not exact in a Double
        default: operationRandom.value(in: 1...6)
        }
    }

    private func randomCompleted() -> Int64 {
        switch operationRandom.below(14) {
        case 0: -1
        case 1: 999
        case 2: .max
        case 3: .min
        default: operationRandom.value(in: 0...7)
        }
    }

    private func randomPending() -> Int64 {
        operationRandom.below(8) == 0
            ? operationRandom.element(of: [.max, 1 << 60, (1 << 53) + 1]) : operationRandom.value(in: 0...5)
    }

    private func randomAdvance() -> ModelOperation {
        .advance(
            node: randomNode(),
            units: operationRandom.below(6) == 0
                ? operationRandom.element(of: [-1, .max, .min, 1 << 62]) : operationRandom.value(in: 1...3))
    }

    private func randomCountChange(_ kind: Int) -> ModelOperation {
        switch kind {
        case 0: .setCompleted(node: randomNode(), value: randomCompleted())
        case 1: .setTotal(node: randomNode(), value: randomTotal())
        default: randomAdvance()
        }
    }

    // MARK: Performing

    /// Performs `operation` on the nodes and the model, then compares them. Returns the operation as
    /// performed (a generated scope with its body), or `nil` when it does not apply (replays only).
    private func perform(_ operation: ModelOperation) -> ModelOperation? {
        guard failure == nil else { return nil }
        guard let performed = performWithoutComparing(operation) else { return nil }
        compare()
        return performed
    }

    private func isNode(_ index: Int) -> Bool { nodes.indices.contains(index) }

    private func performWithoutComparing(_ operation: ModelOperation) -> ModelOperation? {
        switch operation {
        case .createDiscrete(let total):
            let index = model.createRoot(totalUnitCount: total)
            added(
                ProgressNode.discreteProgress(totalUnitCount: total), model: index,
                "ProgressNode.discreteProgress(totalUnitCount: \(total))")
        case .createChild(let total, let parent, let pending):
            guard isNode(parent) else { return nil }
            let index = model.createChild(totalUnitCount: total, parent: parent, pendingUnitCount: pending)
            added(
                ProgressNode(totalUnitCount: total, parent: nodes[parent], pendingUnitCount: pending), model: index,
                "ProgressNode(totalUnitCount: \(total), parent: n\(parent), pendingUnitCount: \(pending))")
        case .createImplicit(let total):
            let index = model.createImplicit(totalUnitCount: total)
            added(ProgressNode(totalUnitCount: total), model: index, "ProgressNode(totalUnitCount: \(total))")
        case .createWithParent(let current):
            if current {
                guard let parent = model.current else { return nil }
                let index = model.createImplicit(totalUnitCount: 0)
                added(
                    ProgressNode(parent: nodes[parent]), model: index,
                    "ProgressNode(parent: n\(parent))  // the current node")
            } else {
                let index = model.createRoot(totalUnitCount: 0)
                added(ProgressNode(parent: nil), model: index, "ProgressNode(parent: nil)")
            }
        case .addChild(let child, let parent, let pending):
            guard isNode(child), isNode(parent), model.canAddChild(child, to: parent) else { return nil }
            log("n\(parent).addChild(n\(child), withPendingUnitCount: \(pending))")
            model.addChild(child, to: parent, pendingUnitCount: pending)
            nodes[parent].addChild(nodes[child], withPendingUnitCount: pending)
        case .setCompleted(let node, let value):
            guard isNode(node) else { return nil }
            log("n\(node).completedUnitCount = \(value)")
            model.setCompleted(node, value)
            nodes[node].completedUnitCount = value
        case .setTotal(let node, let value):
            guard isNode(node) else { return nil }
            log("n\(node).totalUnitCount = \(value)")
            model.setTotal(node, value)
            nodes[node].totalUnitCount = value
        case .advance(let node, let units):
            guard isNode(node) else { return nil }
            log("n\(node).advance(by: \(units))")
            model.advance(node, by: units)
            nodes[node].advance(by: units)
        case .burst(let changes):
            log("// a burst, no read in between:")
            let performed = changes.compactMap(performWithoutComparing)
            if performed.isEmpty { return nil }
            return .burst(performed)
        case .cancel(let node):
            guard isNode(node) else { return nil }
            log("n\(node).cancel()")
            model.cancel(node)
            nodes[node].cancel()
        case .fail(let node):
            guard isNode(node) else { return nil }
            log("n\(node).fail(ModelError())")
            model.fail(node)
            nodes[node].fail(ModelError())
        case .pause(let node):
            guard isNode(node) else { return nil }
            log("n\(node).pause()")
            model.pause(node)
            nodes[node].pause()
        case .resume(let node):
            guard isNode(node) else { return nil }
            log("n\(node).resume()")
            model.resume(node)
            nodes[node].resume()
        case .setProperty(let node, let property, let value):
            guard isNode(node), (0..<ModelProperties.count).contains(property) else { return nil }
            log("n\(node)[\(ModelProperties.names[property]).self] = \(value)")
            model.setProperty(node, property, value)
            ModelProperties.set(property, of: nodes[node], to: value)
        case .reinstallHandlers(let node):
            guard isNode(node) else { return nil }
            log("// n\(node): the three handlers set again")
            model.installHandlers(node)
            handlers[node].install(on: nodes[node])
        case .scope(let flavour, let node, let pending, let body):
            guard isNode(node) else { return nil }
            return performScope(flavour, node: node, pending: pending, body: body)
        }
        return operation
    }

    /// A scope: compared once it has begun, then after each operation inside, then after it ends.
    private func performScope(
        _ flavour: ModelOperation.ScopeFlavour, node: Int, pending: Int64, body: [ModelOperation]
    ) -> ModelOperation {
        var performedBody: [ModelOperation] = []
        let bodySteps = replay == nil ? operationRandom.below(5) : 0
        let runBody = {
            self.scopeDepth += 1
            defer { self.scopeDepth -= 1 }
            self.compare()
            if self.replay == nil {
                for _ in 0..<bodySteps {
                    if let performed = self.generateAndPerform() { performedBody.append(performed) }
                }
            } else {
                for operation in body {
                    if let performed = self.perform(operation) { performedBody.append(performed) }
                }
            }
        }
        model.beginScope(node: node, pendingUnitCount: pending)
        switch flavour {
        case .becomeCurrent:
            log("n\(node).becomeCurrent(withPendingUnitCount: \(pending))")
            nodes[node].becomeCurrent(withPendingUnitCount: pending)
            runBody()
            log("n\(node).resignCurrent()")
            nodes[node].resignCurrent()
        case .performAsCurrent:
            log("n\(node).performAsCurrent(withPendingUnitCount: \(pending)) {")
            nodes[node].performAsCurrent(withPendingUnitCount: pending, using: runBody)
            log("}")
        case .withCurrent:
            log("n\(node).withCurrent(pendingUnitCount: \(pending)) {")
            nodes[node].withCurrent(pendingUnitCount: pending, runBody)
            log("}")
        }
        model.endScope()
        return .scope(flavour, node: node, pending: pending, body: performedBody)
    }

    private func log(_ line: String) {
        trace.append(String(repeating: "    ", count: scopeDepth) + line)
    }

    private func added(_ node: ProgressNode, model index: Int, _ code: String) {
        precondition(index == nodes.count, "model and nodes out of step")
        nodes.append(node)
        let counters = Handlers()
        counters.install(on: node)
        handlers.append(counters)
        model.installHandlers(index)
        log("let n\(index) = \(code)")
        // Even seeds give the file summaries something to count: every third node is a file, and every fifth
        // announces two files. (Odd seeds leave the nodes without metadata, as users mostly do.)
        if seed % 2 == 0 && index % 3 == 1 {
            node.kind = .file
            log("n\(index).kind = .file")
        }
        if seed % 2 == 0 && index % 5 == 2 {
            node.fileTotalCount = 2
            log("n\(index).fileTotalCount = 2")
        }
    }

    // MARK: Comparing

    /// Compares every node with the model, reading the nodes in a random order; records the first failure.
    private func compare() {
        guard failure == nil else { return }
        if model.nodes.contains(where: { $0.heldBy != nil }) { metHeldNode = true }
        if model.nodes.contains(where: \.isFailed) { metFailure = true }
        var differences: [(property: String, text: String)] = []
        let actualCurrent = ProgressNode.current()
        let expectedCurrent = model.current.map { nodes[$0] }
        differences += invariantDifferences("as the last operation left them")
        if actualCurrent !== expectedCurrent {
            differences.append(
                (
                    "current()",
                    "ProgressNode.current() is \(name(of: actualCurrent)), the model says \(name(of: expectedCurrent))"
                ))
        }
        for index in readRandom.shuffled(Array(nodes.indices)) {
            let node = nodes[index]
            let expected = model.nodes[index]
            func check<T: Equatable>(_ property: String, _ actual: T, _ wanted: T) {
                if actual != wanted {
                    differences.append((property, "n\(index).\(property) is \(actual), the model says \(wanted)"))
                }
            }
            let fraction = node.fractionCompleted
            let wantedFraction = model.fraction(index)
            if !(abs(fraction - wantedFraction) <= 1e-12 * max(1, abs(wantedFraction))) {
                differences.append(
                    (
                        "fractionCompleted",
                        "n\(index).fractionCompleted is \(fraction), the model says \(wantedFraction)"
                    ))
            }
            check("completedUnitCount", node.completedUnitCount, expected.completed)
            check("totalUnitCount", node.totalUnitCount, expected.total)
            check("isFinished", node.isFinished, model.isFinished(index))
            check("isIndeterminate", node.isIndeterminate, model.isIndeterminate(index))
            check("isCancelled", node.isCancelled, expected.isCancelled)
            check("isPaused", node.isPaused, expected.isPaused)
            check("isFailed", node.isFailed, expected.isFailed)
            check("children", node.children.map { name(of: $0) }, model.children(index).map { "n\($0)" })
            // The summary the node keeps, updated from what changed since its last read, against a walk of
            // its subtree now (Summaries/FileSums.swift).
            check("fileSummary", node.fileSummary, node.computeFileSummary().summary)
            // Custom properties (Properties/): the walk's reduce and merge, with what left folded by its rule.
            for property in 0..<ModelProperties.count {
                check(
                    "summary(of: \(ModelProperties.names[property]).self)",
                    ModelProperties.summary(property, of: node), model.propertySummary(index, property))
                check(
                    "[\(ModelProperties.names[property]).self]", ModelProperties.value(property, of: node),
                    expected.propertyValues[property] ?? ModelProperties.defaultValues[property])
            }
            check("cancellationHandler calls", handlers[index].cancellation.value, expected.cancellationCalls)
            check("pausingHandler calls", handlers[index].pausing.value, expected.pausingCalls)
            check("resumingHandler calls", handlers[index].resuming.value, expected.resumingCalls)
        }
        differences += invariantDifferences("once every node was read")
        guard !differences.isEmpty else { return }
        let state = model.nodes.indices.map { index in
            let node = model.nodes[index]
            return "n\(index): \(node.completed) of \(node.total), \(node.link), reaches \(node.reached)"
                + (node.heldBy.map { ", held by n\($0)" } ?? "")
                + (node.isCancelled ? ", cancelled" : "") + (node.isPaused ? ", paused" : "")
                + (node.isFailed ? ", failed" : "") + (node.pausedThrough ? ", paused through" : "")
                + (node.cancelledThrough ? ", cancelled through" : "")
        }
        let indent = "\n    "
        failure = ModelFailure(
            report: "seed \(seed): after the last operation below, the nodes differ from the model"
                + " (rerun: PROGRESSTREE_MODEL_SEEDS=\(seed) swift test --filter ModelBasedTests)"
                + "\ndifferences:" + differences.map { indent + $0.text }.joined()
                + "\nmodel state:" + state.map { indent + $0 }.joined()
                + "\noperations (each node gets counting handlers right after it is created; every node is read"
                + " after each operation):" + trace.map { indent + $0 }.joined() + "    // <- after this",
            properties: Set(differences.map(\.property)))
    }

    /// The core's invariants that the nodes break (`ProgressNode.invariantViolations()`, from each node
    /// neither attached nor held, and so for every node): none unless the build checks them
    /// (PROGRESSTREE_INTERNAL_CHECKS).
    private func invariantDifferences(_ when: String) -> [(property: String, text: String)] {
        guard ProgressNode.internalChecksEnabled && checkingInvariants else { return [] }
        var differences: [(property: String, text: String)] = []
        // Held nodes are checked with their holders.
        for (index, node) in nodes.enumerated() where node.state.withLock({ $0.link.kind }) != .attached && !node.isHeld
        {
            for violation in node.invariantViolations() {
                differences.append(("invariants", "\(when), below n\(index) (its root): \(violation)"))
            }
        }
        return differences
    }

    private func name(of node: ProgressNode?) -> String {
        guard let node else { return "nil" }
        return nodes.firstIndex { $0 === node }.map { "n\($0)" } ?? "an unknown node"
    }
}

// MARK: Shrinking

extension ModelRun {
    /// The smallest program found (greedily: dropping one operation, or unwrapping one scope or burst, at a
    /// time) that still fails on one of the properties `failure` names. Bounded by `attempts` replays.
    static func shrink(_ program: [ModelOperation], seed: UInt64, failure: ModelFailure, attempts: Int = 3_000)
        -> (program: [ModelOperation], failure: ModelFailure)
    {
        var best = (program: program, failure: failure)
        var attemptsLeft = attempts
        var improved = true
        while improved && attemptsLeft > 0 {
            improved = false
            for candidate in simplifications(of: best.program) {
                guard attemptsLeft > 0 else { break }
                attemptsLeft -= 1
                let run = ModelRun(replaying: candidate, seed: seed)
                if let newFailure = run.run(), !newFailure.properties.isDisjoint(with: failure.properties) {
                    best = (run.program, newFailure)
                    improved = true
                    break
                }
            }
        }
        return best
    }

    /// Every program one simplification away from `program`, bigger cuts first.
    private static func simplifications(of program: [ModelOperation]) -> [[ModelOperation]] {
        var result: [[ModelOperation]] = []
        // Without one node: its creation and every operation on it gone, the later nodes renumbered.
        let createdNodes = program.reduce(0) { $0 + $1.creations }
        for node in 0..<createdNodes {
            result.append(ModelOperation.program(program, removingNode: node))
        }
        // Halves and quarters, then single operations.
        for chunk in [program.count / 2, program.count / 4] where chunk > 1 {
            var start = 0
            while start < program.count {
                var candidate = program
                candidate.removeSubrange(start..<min(start + chunk, program.count))
                result.append(candidate)
                start += chunk
            }
        }
        for index in program.indices {
            var removed = program
            removed.remove(at: index)
            result.append(removed)
            switch program[index] {
            case .scope(let flavour, let node, let pending, let body):
                var unwrapped = program
                unwrapped.replaceSubrange(index...index, with: body)
                result.append(unwrapped)
                for inner in simplifications(of: body) {
                    var candidate = program
                    candidate[index] = .scope(flavour, node: node, pending: pending, body: inner)
                    result.append(candidate)
                }
            case .burst(let changes):
                var unwrapped = program
                unwrapped.replaceSubrange(index...index, with: changes)
                result.append(unwrapped)
                for inner in simplifications(of: changes) {
                    var candidate = program
                    candidate[index] = .burst(inner)
                    result.append(candidate)
                }
            default:
                break
            }
        }
        return result
    }
}

extension ModelOperation {
    /// How many nodes this operation creates (a scope: those created inside).
    var creations: Int {
        switch self {
        case .createDiscrete, .createChild, .createImplicit, .createWithParent: 1
        case .scope(_, _, _, let body): body.reduce(0) { $0 + $1.creations }
        default: 0
        }
    }

    /// `program` without the creation of `node` and every use of it, the nodes created after it renumbered.
    static func program(_ program: [ModelOperation], removingNode node: Int) -> [ModelOperation] {
        var created = 0  // nodes created by the operations before the one at hand
        return program.compactMap { $0.removingNode(node, created: &created) }
    }

    private func removingNode(_ removed: Int, created: inout Int) -> ModelOperation? {
        func renumber(_ index: Int) -> Int? { index == removed ? nil : (index > removed ? index - 1 : index) }
        let isCreation = creations == 1 && !isScope
        defer { if isCreation { created += 1 } }
        if isCreation && created == removed { return nil }
        switch self {
        case .createDiscrete, .createImplicit, .createWithParent:
            return self
        case .createChild(let total, let parent, let pending):
            return renumber(parent).map { .createChild(total: total, parent: $0, pending: pending) }
        case .addChild(let child, let parent, let pending):
            guard let child = renumber(child), let parent = renumber(parent) else { return nil }
            return .addChild(child: child, parent: parent, pending: pending)
        case .setCompleted(let node, let value): return renumber(node).map { .setCompleted(node: $0, value: value) }
        case .setTotal(let node, let value): return renumber(node).map { .setTotal(node: $0, value: value) }
        case .advance(let node, let units): return renumber(node).map { .advance(node: $0, units: units) }
        case .burst(let changes):
            let kept = changes.compactMap { $0.removingNode(removed, created: &created) }
            return kept.isEmpty ? nil : .burst(kept)
        case .cancel(let node): return renumber(node).map { .cancel(node: $0) }
        case .fail(let node): return renumber(node).map { .fail(node: $0) }
        case .pause(let node): return renumber(node).map { .pause(node: $0) }
        case .resume(let node): return renumber(node).map { .resume(node: $0) }
        case .reinstallHandlers(let node): return renumber(node).map { .reinstallHandlers(node: $0) }
        case .setProperty(let node, let property, let value):
            return renumber(node).map { .setProperty(node: $0, property: property, value: value) }
        case .scope(let flavour, let node, let pending, let body):
            let kept = body.compactMap { $0.removingNode(removed, created: &created) }
            guard let node = renumber(node) else { return nil }  // (its body's creations are counted above)
            return .scope(flavour, node: node, pending: pending, body: kept)
        }
    }

    private var isScope: Bool {
        if case .scope = self { return true }
        return false
    }
}

// MARK: Custom properties

/// A count: keeps all of a child's summary whatever the outcome. The tests' `PhotosSkipped`
/// (Support/PhotosSkipped.swift) under the model's name, which its logs print.
typealias ModelSum = PhotosSkipped

/// A rate: a finished child leaves nothing; a failed or cancelled one leaves its summary.
enum ModelRate: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
    static func summaryLeftBehind(_ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? {
        outcome == .finished ? nil : summary
    }
}

/// A maximum: `merge` cannot be undone, so a parent's kept summary re-merges its children's (a segment
/// tree, Summaries/PropertyTotal.swift), where a sum could subtract.
enum ModelMax: ProgressProperty {
    static var defaultValue: Int { .min }
    static var defaultSummary: Int { .min }
    static func reduce(into summary: inout Int, value: Int) { summary = max(summary, value) }
    static func merge(_ a: Int, _ b: Int) -> Int { max(a, b) }
}

/// The properties of model runs, by index.
enum ModelProperties {
    static let names = ["ModelSum", "ModelRate", "ModelMax"]
    static let defaultValues = [0, 0, Int.min]

    /// `merge(_:_:)` of each.
    static func merge(_ property: Int, _ a: Int, _ b: Int) -> Int {
        property == 2 ? ModelMax.merge(a, b) : a + b
    }
    static var count: Int { names.count }

    static func set(_ property: Int, of node: ProgressNode, to value: Int) {
        switch property {
        case 0: node[ModelSum.self] = value
        case 1: node[ModelRate.self] = value
        default: node[ModelMax.self] = value
        }
    }

    static func value(_ property: Int, of node: ProgressNode) -> Int {
        switch property {
        case 0: node[ModelSum.self]
        case 1: node[ModelRate.self]
        default: node[ModelMax.self]
        }
    }

    static func summary(_ property: Int, of node: ProgressNode) -> Int {
        switch property {
        case 0: node.summary(of: ModelSum.self)
        case 1: node.summary(of: ModelRate.self)
        default: node.summary(of: ModelMax.self)
        }
    }

    /// `summaryLeftBehind(_:by:)` of each.
    static func leftBehind(_ property: Int, _ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? {
        switch property {
        case 0: ModelSum.summaryLeftBehind(summary, by: outcome)
        case 1: ModelRate.summaryLeftBehind(summary, by: outcome)
        default: ModelMax.summaryLeftBehind(summary, by: outcome)
        }
    }
}
