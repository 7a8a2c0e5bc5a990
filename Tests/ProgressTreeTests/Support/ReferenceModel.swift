/// A small, deterministic pseudo-random generator (SplitMix64), so that a seed names one sequence of
/// operations on every platform and every run. Not for anything but tests.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (`bound > 0`).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A value in `range`.
    mutating func value(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(below(Int(range.upperBound - range.lowerBound) + 1))
    }

    /// One element of `elements` (not empty).
    mutating func element<T>(of elements: [T]) -> T { elements[below(elements.count)] }

    /// `elements` in a random order (Fisher–Yates).
    mutating func shuffled<T>(_ elements: [T]) -> [T] {
        var result = elements
        for index in result.indices.reversed() where index > 0 {
            result.swapAt(index, below(index + 1))
        }
        return result
    }
}

/// A reference model of the single-threaded semantics of `ProgressNode`, written from
/// the rules of `Docs/Composition.md` and `Docs/Cancellation.md` (quoted below with their page), and
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
/// detach, up the tree), cancel/pause/resume with inheritance and the handler calls. Not covered: anything
/// concurrent, `fail(_:)`, metadata and descriptions, observation, checkpoints and the `Task` bridge.
struct ReferenceModel {
    enum Link: Equatable {
        /// Never added to a parent.
        case none
        case attached(parent: Int, pendingUnitCount: Int64)
        /// Was attached and finished: credited and let go, for good.
        case detached
    }

    struct Node: Equatable {
        var total: Int64
        var completed: Int64 = 0
        var link = Link.none
        /// The attached children, in the order they were added.
        var children: [Int] = []
        var isCancelled = false
        var isPaused = false
        /// Whether the counting handlers are installed yet (they are set after the initializer returns).
        var hasHandlers = false
        var cancellationCalls = 0
        var pausingCalls = 0
        var resumingCalls = 0
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

    func isFinished(_ node: Int) -> Bool {
        Self.isFinished(completed: nodes[node].completed, total: nodes[node].total)
    }

    /// Docs/Composition.md ("The formula"): `clamp((completed + Σ pendingᵢ × fractionᵢ) / total)`; "the sum
    /// runs over the attached children that have not finished"; an indeterminate node reports 0 (and so contributes 0); the table gives (1, 0 → 1).
    func fraction(_ index: Int) -> Double {
        let node = nodes[index]
        if isIndeterminate(index) { return 0 }
        if node.total == 0 { return 1 }  // completed > 0 here: the table's (1, 0 → false, 1)
        var units = Double(node.completed)
        for child in node.children {
            guard case .attached(_, let pending) = nodes[child].link else { preconditionFailure("model: listed child not attached") }
            units += Double(pending) * fraction(child)
        }
        return min(max(units / Double(node.total), 0), 1)
    }

    /// The attached ancestors of `node`, nearest first.
    func ancestors(of node: Int) -> [Int] {
        var result: [Int] = []
        var link = nodes[node].link
        while case .attached(let parent, _) = link {
            result.append(parent)
            link = nodes[parent].link
        }
        return result
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
    /// counts at once"; "a child that has already finished is credited at once".
    mutating func addChild(_ child: Int, to parent: Int, pendingUnitCount: Int64) {
        precondition(canAddChild(child, to: parent), "model: illegal addChild")
        attach(child, to: parent, pendingUnitCount: pendingUnitCount)
        countsDidChange(child)
    }

    /// Docs/Cancellation.md ("Later children too"): a child attached to a cancelled or paused node "becomes
    /// cancelled or paused as it is attached, and so does the subtree it brings with it", as
    /// `cancel()`/`pause()` of the child would. A child finished on arrival is credited and let go at once
    /// (Docs/Composition.md), so it is never attached and a pause does not flow into it: pausing the nodes
    /// below it would leave them paused out of reach of the parent's `resume()` (Docs/Cancellation.md: "A
    /// finished node is not paused"). A cancellation still does: "it takes a cancellation, but not a pause".
    private mutating func attach(_ child: Int, to parent: Int, pendingUnitCount: Int64) {
        nodes[child].link = .attached(parent: parent, pendingUnitCount: pendingUnitCount)
        nodes[parent].children.append(child)
        if nodes[parent].isCancelled {
            cancel(child)
        } else if nodes[parent].isPaused && !isFinished(child) {
            pause(child)
        }
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
    /// in turn, the parent is credited to its own parent, and so on up". Docs/Cancellation.md: "A paused node
    /// that finishes leaves the pause as if `resume()` were called on it", also through its children's
    /// credit.
    private mutating func countsDidChange(_ changed: Int) {
        guard isFinished(changed) else { return }
        var node = changed
        while true {
            guard case .attached(let parent, let pending) = nodes[node].link else {
                leavePause(node)
                return
            }
            nodes[node].link = .detached
            nodes[parent].children.removeAll { $0 == node }
            leavePause(node)
            nodes[parent].completed = Self.saturatingSum(nodes[parent].completed, pending)
            guard isFinished(parent) else { return }
            node = parent
        }
    }

    /// "As `resume()` would": the node and the attached nodes below it. On a cancelled node `resume()` does
    /// nothing (Docs/Cancellation.md: "`pause()` and `resume()` on a cancelled
    /// node also do nothing"), so a node paused and then
    /// cancelled stays paused when it finishes.
    private mutating func leavePause(_ node: Int) {
        if nodes[node].isPaused && !nodes[node].isCancelled { resume(node) }
    }

    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    // MARK: Control

    /// `node` and every node attached below it.
    func subtree(_ node: Int) -> [Int] {
        var result: [Int] = []
        var stack = [node]
        while let next = stack.popLast() {
            result.append(next)
            stack.append(contentsOf: nodes[next].children.reversed())
        }
        return result
    }

    /// Docs/Cancellation.md: "Cancellation is permanent"; handlers run "Once per transition".
    mutating func cancel(_ node: Int) {
        for index in subtree(node) where !nodes[index].isCancelled {
            nodes[index].isCancelled = true
            if nodes[index].hasHandlers { nodes[index].cancellationCalls += 1 }
        }
    }

    /// Docs/Cancellation.md ("No-ops are defined"): `pause()` changes nothing on a finished or cancelled
    /// node, and still reaches the nodes below.
    mutating func pause(_ node: Int) {
        for index in subtree(node)
        where !nodes[index].isCancelled && !nodes[index].isPaused && !isFinished(index) {
            nodes[index].isPaused = true
            if nodes[index].hasHandlers { nodes[index].pausingCalls += 1 }
        }
    }

    mutating func resume(_ node: Int) {
        for index in subtree(node) where nodes[index].isPaused && !nodes[index].isCancelled {
            nodes[index].isPaused = false
            if nodes[index].hasHandlers { nodes[index].resumingCalls += 1 }
        }
    }
}
