import ProgressTree

/// A reference model of the single-threaded semantics of `ProgressNode`, written from the rules of
/// `Docs/Composition.md`, `Docs/Cancellation.md` and `Docs/Properties.md` (quoted below with their page), and
/// deliberately naive: plain values, recursion, no caching, no locks. `ModelBasedTests` runs random
/// operations on both and compares them after every step.
///
/// Nodes are numbered in creation order. Every node in the model is assumed to get counting handlers
/// (`cancellationHandler`, `pausingHandler`, `resumingHandler`) right after it is created
/// (`installHandlers(_:)`); the model counts the calls each should have seen.
///
/// Covered: creation (`discreteProgress`, `init(totalUnitCount:)` inside and outside a scope,
/// `init(parent:userInfo:)`, `init(totalUnitCount:parent:pendingUnitCount:)`), `addChild`, implicit scopes
/// (one stack for `becomeCurrent`/`performAsCurrent` and `withCurrent`: properly nested, the innermost is the
/// one begun last), the counts, the fraction formula, `isIndeterminate`/`isFinished`, finishing (credit and
/// detach, up the tree; held while work is attached below), cancel/pause/resume with inheritance and the
/// handler calls, through finished nodes, and `fail(_:)` (the share kept, descendants cancelled). Not
/// covered: anything concurrent, outcome counts, metadata and descriptions, observation, checkpoints and
/// the `Task` bridge.
struct ReferenceModel {
    enum Link: Equatable {
        /// Never added to a parent.
        case none
        case attached(parent: Int, pendingUnitCount: Int64)
        /// Was attached and finished (credited) or failed: let go, for good. A finished one may still be
        /// held by its parent for transitions (`Node.heldBy`).
        case detached
    }

    struct Node: Equatable {
        var total: Int64
        var completed: Int64 = 0
        var link = Link.none
        /// What transitions reach below this node, in the order added: the attached children, and the
        /// children held after they finished. `children` of the node lists the attached ones.
        var reached: [Int] = []
        /// Docs/Cancellation.md ("Through finished nodes"): the parent that holds this finished node while
        /// work is attached below it.
        var heldBy: Int?
        var isCancelled = false
        var isPaused = false
        var isFailed = false
        /// A transition passed through this final node: a pause (until a resume passes, or the node leaves
        /// its parent's reach), a cancellation (for good).
        var pausedThrough = false
        var cancelledThrough = false
        /// The shares of children that failed, kept at their fraction at failure (Docs/Cancellation.md,
        /// "Failure").
        var failedUnits = 0.0
        /// Whether the counting handlers are installed yet (they are set after the initializer returns).
        var hasHandlers = false
        var cancellationCalls = 0
        var pausingCalls = 0
        var resumingCalls = 0
        /// Custom properties (`ModelProperties`, by index): the values set on the node, and what the children
        /// that left it left behind (a key only once something was left).
        var propertyValues: [Int: Int] = [:]
        var propertiesLeft: [Int: Int] = [:]
    }

    /// An implicit-composition scope: `becomeCurrent`, `performAsCurrent` or `withCurrent`.
    struct Scope {
        let node: Int
        let pendingUnitCount: Int64
        var isClaimed = false
    }

    private(set) var nodes: [Node] = []
    private(set) var scopes: [Scope] = []

    /// `ProgressNode.current()`: the node of the innermost scope.
    var current: Int? { scopes.last?.node }

    // MARK: Derived values

    /// Docs/Composition.md ("Indeterminate children"): "indeterminate when `totalUnitCount < 0`,
    /// `completedUnitCount < 0`, or both are 0".
    static func isIndeterminate(completed: Int64, total: Int64) -> Bool {
        total < 0 || completed < 0 || (total == 0 && completed == 0)
    }

    /// Docs/Composition.md ("Finishing is permanent"): "finished when `completedUnitCount >= totalUnitCount > 0`
    /// (or `completedUnitCount > 0` with a total of 0)".
    static func isFinished(completed: Int64, total: Int64) -> Bool {
        (completed >= total && total > 0) || (completed > 0 && total == 0)
    }

    func isIndeterminate(_ node: Int) -> Bool {
        Self.isIndeterminate(completed: nodes[node].completed, total: nodes[node].total)
    }

    /// Docs/Cancellation.md ("Failure"): a failed node never becomes finished, whatever its counts.
    func isFinished(_ node: Int) -> Bool {
        !nodes[node].isFailed && countsSayFinished(node)
    }

    private func countsSayFinished(_ node: Int) -> Bool {
        Self.isFinished(completed: nodes[node].completed, total: nodes[node].total)
    }

    /// The attached children, in the order they were added (`ProgressNode.children`).
    func children(_ node: Int) -> [Int] {
        nodes[node].reached.filter { child in
            if case .attached = nodes[child].link { return true }
            return false
        }
    }

    /// Docs/Composition.md ("The formula"): `clamp((completed + Σ pendingᵢ × fractionᵢ) / total)`; "the sum
    /// runs over the attached children that have not finished"; an indeterminate node reports 0 (and so
    /// contributes 0); the table gives (1, 0 → 1). Docs/Cancellation.md: a failed child's share stays at its
    /// fraction at failure.
    func fraction(_ index: Int) -> Double {
        let node = nodes[index]
        if isIndeterminate(index) { return 0 }
        if node.total == 0 { return 1 }  // completed > 0 here: the table's (1, 0 → false, 1)
        var units = Double(node.completed) + node.failedUnits
        for child in children(index) {
            guard case .attached(_, let pending) = nodes[child].link else {
                preconditionFailure("model: listed child not attached")
            }
            units += Double(pending) * fraction(child)
        }
        return min(max(units / Double(node.total), 0), 1)
    }

    /// The nodes above `node` that reach it (its parent, or the parent holding it, and so on), nearest first.
    func ancestors(of node: Int) -> [Int] {
        var result: [Int] = []
        var next = above(node)
        while let ancestor = next {
            result.append(ancestor)
            next = above(ancestor)
        }
        return result
    }

    private func above(_ node: Int) -> Int? {
        if case .attached(let parent, _) = nodes[node].link { return parent }
        return nodes[node].heldBy
    }

    /// Whether `parent.addChild(child, …)` is legal (Docs/Composition.md: adding a node that "already has a
    /// parent (or had one and finished)", or one of the parent's ancestors, stops the program).
    func canAddChild(_ child: Int, to parent: Int) -> Bool {
        child != parent && nodes[child].link == .none && !ancestors(of: parent).contains(child)
    }

    // MARK: Creation and composition

    /// `discreteProgress(totalUnitCount:)`, and `init(parent: nil)` with a total of 0: never attaches.
    mutating func createRoot(totalUnitCount: Int64) -> Int {
        nodes.append(Node(total: totalUnitCount))
        return nodes.count - 1
    }

    /// `init(totalUnitCount:)`, and `init(parent: current())` with a total of 0. Docs/Composition.md ("The
    /// first-child rule"): "only the first node created attaches, and it takes the whole pending count" — only the
    /// innermost scope is looked at.
    mutating func createImplicit(totalUnitCount: Int64) -> Int {
        let node = createRoot(totalUnitCount: totalUnitCount)
        if let innermost = scopes.indices.last, !scopes[innermost].isClaimed {
            scopes[innermost].isClaimed = true
            attach(node, to: scopes[innermost].node, pendingUnitCount: scopes[innermost].pendingUnitCount)
        }
        return node
    }

    /// `init(totalUnitCount:parent:pendingUnitCount:)`.
    mutating func createChild(totalUnitCount: Int64, parent: Int, pendingUnitCount: Int64) -> Int {
        let node = createRoot(totalUnitCount: totalUnitCount)
        attach(node, to: parent, pendingUnitCount: pendingUnitCount)
        return node  // new: 0 completed, so not finished
    }

    /// `addChild(_:withPendingUnitCount:)`. Docs/Composition.md: "A child that already made progress
    /// counts at once"; "a child that has already finished is credited at once". Docs/Cancellation.md
    /// ("Failure"): a failed node added as a child leaves at once, its share kept, nothing credited.
    mutating func addChild(_ child: Int, to parent: Int, pendingUnitCount: Int64) {
        precondition(canAddChild(child, to: parent), "model: illegal addChild")
        nodes[child].link = .attached(parent: parent, pendingUnitCount: pendingUnitCount)
        nodes[parent].reached.append(child)
        countsDidChange(child)
        inherit(child, from: parent)
        if nodes[child].isFailed {
            foldProperties(of: child, into: parent, by: .failed)
            nodes[parent].failedUnits += Double(pendingUnitCount) * fraction(child)
            nodes[child].link = .detached
            nodes[parent].reached.removeAll { $0 == child }
            releaseHoldIfEmpty(parent)
        }
    }

    private mutating func attach(_ child: Int, to parent: Int, pendingUnitCount: Int64) {
        nodes[child].link = .attached(parent: parent, pendingUnitCount: pendingUnitCount)
        nodes[parent].reached.append(child)
        inherit(child, from: parent)
    }

    /// Docs/Cancellation.md ("Later children too"): a child attached to a node that cancels or pauses the
    /// nodes below it (cancelled, failed or paused, or a finished node a cancellation or pause passed
    /// through) "becomes cancelled or paused as it is attached, and so does the subtree it brings with it",
    /// as the parent's transition would reach it: a child finished on arrival with nothing attached below it
    /// is let go at once and not touched; one with work attached below it is passed through.
    private mutating func inherit(_ child: Int, from parent: Int) {
        let node = nodes[parent]
        if node.isCancelled || node.isFailed || node.cancelledThrough {
            cancel(child, fromAbove: true)
        } else if pausesBelow(parent) {
            pause(child, fromAbove: true)
        }
    }

    private func pausesBelow(_ index: Int) -> Bool {
        let node = nodes[index]
        return node.pausedThrough || (node.isPaused && !node.isCancelled && !node.isFailed)
    }

    /// The handlers are set just after the node is created, or set again later. Docs/Cancellation.md ("Set
    /// after the fact"): setting `cancellationHandler` on a node already cancelled runs it at once; "The same holds for `pausingHandler` on a paused node. It does not hold for
    /// `resumingHandler`."
    mutating func installHandlers(_ node: Int) {
        nodes[node].hasHandlers = true
        if nodes[node].isCancelled { nodes[node].cancellationCalls += 1 }
        if nodes[node].isPaused { nodes[node].pausingCalls += 1 }
    }

    // MARK: Implicit scopes

    mutating func beginScope(node: Int, pendingUnitCount: Int64) {
        scopes.append(Scope(node: node, pendingUnitCount: pendingUnitCount))
    }

    /// Docs/Composition.md ("When no child attaches"): "If no node attached by the end of the scope …, the
    /// pending count is added to the parent's `completedUnitCount` at once".
    mutating func endScope() {
        let scope = scopes.removeLast()
        if !scope.isClaimed { advance(scope.node, by: scope.pendingUnitCount) }
    }

    // MARK: Counts

    mutating func setTotal(_ node: Int, _ total: Int64) {
        nodes[node].total = total
        countsDidChange(node)
    }

    mutating func setCompleted(_ node: Int, _ completed: Int64) {
        nodes[node].completed = completed
        countsDidChange(node)
    }

    /// `advance(by:)`, saturating at the bounds of `Int64` (as the library documents).
    mutating func advance(_ node: Int, by units: Int64) {
        nodes[node].completed = Self.saturatingSum(nodes[node].completed, units)
        countsDidChange(node)
    }

    /// Docs/Composition.md ("Finishing is permanent"): when an attached child finishes, "its pending count is
    /// added to the parent's `completedUnitCount`", "it is detached", and "if the credit finishes the parent
    /// in turn, the parent is credited to its own parent, and so on up". Docs/Cancellation.md ("Through
    /// finished nodes"): a child that finishes while nodes are attached below it stays in its parent's reach
    /// until none is; "A finished node is not paused": a paused node that finishes leaves the pause itself,
    /// also through its children's credit.
    private mutating func countsDidChange(_ changed: Int) {
        guard isFinished(changed) else { return }
        var node = changed
        while true {
            guard case .attached(let parent, let pending) = nodes[node].link else {
                leavePause(node)
                return
            }
            foldProperties(of: node, into: parent, by: nodes[node].isCancelled ? .cancelled : .finished)
            nodes[node].link = .detached
            let held = !nodes[node].reached.isEmpty
            if held {
                nodes[node].heldBy = parent
            } else {
                nodes[parent].reached.removeAll { $0 == node }
                nodes[node].pausedThrough = false
            }
            leavePause(node)
            nodes[parent].completed = Self.saturatingSum(nodes[parent].completed, pending)
            if !held { releaseHoldIfEmpty(parent) }
            guard isFinished(parent) else { return }
            node = parent
        }
    }

    /// Docs/Cancellation.md ("A finished node is not paused"): the node leaves its pause (its resuming
    /// handler runs); the nodes below it stay paused, and while a resume can still reach them through it (a
    /// root, or held) it stands for a paused node to them. On a cancelled node the pause stays ("`pause()`
    /// and `resume()` on a cancelled node also do nothing").
    private mutating func leavePause(_ node: Int) {
        guard nodes[node].isPaused && !nodes[node].isCancelled else { return }
        nodes[node].isPaused = false
        if nodes[node].hasHandlers { nodes[node].resumingCalls += 1 }
        if nodes[node].link == .none || nodes[node].heldBy != nil { nodes[node].pausedThrough = true }
    }

    /// Docs/Cancellation.md ("Through finished nodes"): a held node with nothing attached below it any more
    /// leaves its parent's reach (and so on up).
    private mutating func releaseHoldIfEmpty(_ start: Int) {
        var node = start
        while let holder = nodes[node].heldBy, nodes[node].reached.isEmpty {
            nodes[node].heldBy = nil
            nodes[node].pausedThrough = false
            nodes[holder].reached.removeAll { $0 == node }
            node = holder
        }
    }

    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    // MARK: Control

    /// Whether a transition reaching `node` leaves it alone itself (Docs/Cancellation.md, "Through finished
    /// nodes"): cancelled, failed or finished by its counts, or, reached from above, held.
    private func isFinal(_ node: Int, fromAbove: Bool) -> Bool {
        nodes[node].isCancelled || nodes[node].isFailed || countsSayFinished(node)
            || (fromAbove && nodes[node].heldBy != nil)
    }

    /// Whether a transition from above reaches `node` at all: attached, or held.
    private func isReached(_ node: Int) -> Bool {
        if case .attached = nodes[node].link { return true }
        return nodes[node].heldBy != nil
    }

    mutating func cancel(_ node: Int) { cancel(node, fromAbove: false) }

    /// Docs/Cancellation.md: "Cancellation is permanent"; handlers run "Once per transition"; a final node is
    /// not cancelled itself, but the cancellation goes on below it.
    private mutating func cancel(_ node: Int, fromAbove: Bool) {
        if fromAbove && !isReached(node) { return }
        if !nodes[node].isCancelled && !nodes[node].isFailed {
            if isFinal(node, fromAbove: fromAbove) {
                nodes[node].cancelledThrough = true
            } else {
                nodes[node].isCancelled = true
                if nodes[node].hasHandlers { nodes[node].cancellationCalls += 1 }
            }
        }
        for child in nodes[node].reached { cancel(child, fromAbove: true) }
    }

    mutating func pause(_ node: Int) { pause(node, fromAbove: false) }

    /// Docs/Cancellation.md ("Final nodes are passed through"): `pause()` changes nothing on a node already paused or
    /// final, and still reaches the nodes below.
    private mutating func pause(_ node: Int, fromAbove: Bool) {
        if fromAbove && !isReached(node) { return }
        if isFinal(node, fromAbove: fromAbove) {
            nodes[node].pausedThrough = true
        } else if !nodes[node].isPaused {
            nodes[node].isPaused = true
            nodes[node].pausedThrough = false
            if nodes[node].hasHandlers { nodes[node].pausingCalls += 1 }
        }
        for child in nodes[node].reached { pause(child, fromAbove: true) }
    }

    mutating func resume(_ node: Int) { resume(node, fromAbove: false) }

    private mutating func resume(_ node: Int, fromAbove: Bool) {
        if fromAbove && !isReached(node) { return }
        nodes[node].pausedThrough = false
        if nodes[node].isPaused && !nodes[node].isCancelled {
            nodes[node].isPaused = false
            if nodes[node].hasHandlers { nodes[node].resumingCalls += 1 }
        }
        for child in nodes[node].reached { resume(child, fromAbove: true) }
    }

    /// Docs/Cancellation.md ("Failure"): on a node that is not final (nor detached from a parent), `fail`
    /// marks it failed (no longer paused, no handler), keeps its share in its parent at its fraction then,
    /// credits nothing, lets it go, and cancels the nodes below it.
    mutating func fail(_ node: Int) {
        guard !nodes[node].isCancelled, !nodes[node].isFailed, nodes[node].link != .detached, !countsSayFinished(node)
        else { return }
        nodes[node].isFailed = true
        nodes[node].isPaused = false
        for child in nodes[node].reached { cancel(child, fromAbove: true) }
        if case .attached(let parent, let pending) = nodes[node].link {
            foldProperties(of: node, into: parent, by: .failed)
            nodes[parent].failedUnits += Double(pending) * fraction(node)
            nodes[node].link = .detached
            nodes[parent].reached.removeAll { $0 == node }
            releaseHoldIfEmpty(parent)
        }
    }

    // MARK: Custom properties

    /// `node[property] = value`. Docs/Properties.md ("Values set after a node ends"): a value set on a node
    /// that left its parent (it finished into it, or failed) is refused; the node keeps the value it had.
    mutating func setProperty(_ node: Int, _ property: Int, _ value: Int) {
        guard nodes[node].link != .detached else { return }
        nodes[node].propertyValues[property] = value
    }

    /// Docs/Properties.md: each attached node's value (its default when unset) reduced, merged with what the
    /// children that left it left behind, over the attached subtree (a sum, or a maximum).
    func propertySummary(_ index: Int, _ property: Int) -> Int {
        let node = nodes[index]
        var summary = node.propertyValues[property] ?? ModelProperties.defaultValues[property]
        if let left = node.propertiesLeft[property] { summary = ModelProperties.merge(property, summary, left) }
        for child in children(index) {
            summary = ModelProperties.merge(property, summary, propertySummary(child, property))
        }
        return summary
    }

    /// Whether the property was set in the attached subtree of `index`, or something was left in it.
    private func propertyAppears(_ index: Int, _ property: Int) -> Bool {
        nodes[index].propertyValues[property] != nil || nodes[index].propertiesLeft[property] != nil
            || children(index).contains { propertyAppears($0, property) }
    }

    /// Docs/Properties.md: a child leaving its parent leaves its subtree's summary, by the property's rule;
    /// a subtree where the property never appears leaves nothing.
    private mutating func foldProperties(of child: Int, into parent: Int, by outcome: ProgressPropertyOutcome) {
        for property in 0..<ModelProperties.count where propertyAppears(child, property) {
            let summary = propertySummary(child, property)
            if let left = ModelProperties.leftBehind(property, summary, by: outcome) {
                nodes[parent].propertiesLeft[property] =
                    nodes[parent].propertiesLeft[property].map { ModelProperties.merge(property, $0, left) } ?? left
            }
        }
    }
}
