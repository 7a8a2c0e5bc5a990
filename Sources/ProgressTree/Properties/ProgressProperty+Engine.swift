// The typed half of the summary engine: the default implementations of `ProgressProperty`'s underscored
// requirements. Each is `@inlinable`, so every conformance carries a copy compiled for its own `Value` and
// `Summary` where it is declared, and the library's engine (Summaries/, not generic) calls it through the
// property's witness table: a node's summary (`_progressTreeNodeSummary`), and one step on a column
// (`_progressTreeColumnStep`: make one, set or reset a member's contribution, fold what a member leaves).
//
// They run where the engine calls them: under the tree's domain lock (the columns belong to it), with no
// node lock held, on what the engine lends them (Summaries/SummaryStep.swift). `reduce`, `merge` and
// `summaryLeftBehind` are the property's own: user code that must not call into the tree, as the protocol
// says.

extension ProgressProperty {
    /// Stores `value` on `node` and announces it, as an update does.
    @inlinable
    public static func _progressTreeSetValue(_ value: Value, on node: ProgressNode) {
        node.storePropertyValue(value, of: Self.self)
    }

    /// `node`'s own value, or the default.
    @inlinable
    public static func _progressTreeValue(of node: ProgressNode) -> Value {
        node.ownValue(of: Self.self) ?? defaultValue
    }

    /// `node`'s summary, read by the engine (the parts of `node`, brought up to date).
    @inlinable
    public static func _progressTreeSummary(of node: ProgressNode) -> Summary {
        var summary: Summary?
        node.readSummaryParts(of: Self.self) { summary = _progressTreeNodeSummary($0) }
        guard let summary else { preconditionFailure("ProgressTree: a summary read computes the node's summary") }
        return summary
    }

    /// A node's summary: its value reduced into the default summary, merged with what it keeps of its
    /// children. A node without a value of its own contributes `defaultValue` reduced, which `merge` ignores
    /// (the protocol's requirement): so with children to merge, their summary is the node's.
    @inlinable
    public static func _progressTreeNodeSummary(_ parts: _ProgressTreeSummaryParts) -> Summary {
        let below = parts.below(Self.self)
        let value = parts.value(of: Self.self)
        if value == nil, let below { return below }
        var summary = defaultSummary
        reduce(into: &summary, value: value ?? defaultValue)
        guard let below else { return summary }
        return merge(summary, below)
    }

    /// One step of the engine on a column of this property (see `_ProgressTreeColumnStep`).
    @inlinable
    public static func _progressTreeColumnStep(_ step: inout _ProgressTreeColumnStep) {
        switch step.action {
        case .make:
            step.made = .passRetained(SummaryTree<Self>())
        case .set(let entry, let merging):
            step.target.set(Self.self, entry: entry, to: _progressTreeNodeSummary(step.member), merging: merging)
        case .rebuild:
            step.target.rebuild(Self.self)
        case .clear(let entry):
            step.target.set(Self.self, entry: entry, to: nil)
        case .fold(let outcome):
            if let left = summaryLeftBehind(_progressTreeNodeSummary(step.member), by: outcome) {
                step.target.addLeft(Self.self, left)
            }
        case .removeLeaves:
            step.target.removeLeaves(Self.self)
        case .check:
            step.record(step.target.violations(Self.self))
        case .checkMember(let entry):
            step.record(
                step.target.violations(Self.self, ofEntry: entry, expecting: _progressTreeNodeSummary(step.member)))
        }
    }
}
