// The typed half of the summary engine: the default implementations of `ProgressProperty`'s underscored
// requirements. Each is `@inlinable`, so every conformance carries a copy compiled for its own `Value` and
// `Summary` where it is declared, and the library's engine (Summaries/, not generic) calls it through the
// property's witness table: a node's summary (`_progressTreeNodeSummary`), and one step on a column
// (`_progressTreeColumnStep`: make one, set or reset a member's contribution, fold what a member leaves).
//
// They run where the engine calls them: under the tree's domain lock (the columns belong to it), with no
// node lock held. `reduce`, `merge` and `summaryLeftBehind` are the property's own: user code that must not
// call into the tree, as the protocol says.

/// What the summary engine knows of one node when it computes the node's summary of a property: its own
/// values, what it keeps of its children for that property, its file facts. Not API: ProgressTree's.
public struct _ProgressTreeSummaryParts {
    /// The node's own values (`nil`: it set none).
    @usableFromInline let values: PropertyValues?
    /// The node's column of the property: what it keeps of its children (`nil`: nothing).
    @usableFromInline let column: SummaryColumn?
    /// The node's file facts (`nil`: it describes no files).
    @usableFromInline let files: FileFacts?

    @usableFromInline
    init(values: PropertyValues?, column: SummaryColumn?, files: FileFacts?) {
        self.values = values
        self.column = column
        self.files = files
    }
}

/// One step of the summary engine on a column of one property. Not API: ProgressTree's.
public struct _ProgressTreeColumnStep {
    @usableFromInline
    enum Action {
        /// Make an empty column of the property (into `column`).
        case make
        /// Set the contribution of the member at an entry to its summary, computed from `parts`.
        case set(entry: Int)
        /// Reset the contribution of the member at an entry to the default.
        case clear(entry: Int)
        /// Add what a member leaving with an outcome leaves behind, its summary computed from `parts`.
        case fold(ProgressPropertyOutcome)
        /// Forget every member's contribution: the node has no member any more.
        case removeLeaves
        /// Check the column's invariants, where its summaries are `Equatable` (PROGRESSTREE_INTERNAL_CHECKS).
        case check
        /// Check that the contribution at an entry is the summary computed from `parts` (the same way).
        case checkMember(entry: Int)
    }

    @usableFromInline let action: Action
    @usableFromInline var column: SummaryColumn?
    @usableFromInline let parts: _ProgressTreeSummaryParts?
    /// What `check` found wrong, one line each.
    @usableFromInline var violations: [String] = []

    init(_ action: Action, column: SummaryColumn?, parts: _ProgressTreeSummaryParts? = nil) {
        self.action = action
        self.column = column
        self.parts = parts
    }
}

extension ProgressProperty {
    /// Stores `value` on `node` and announces it, as an update does.
    @inlinable
    public static func _progressTreeSetValue(_ value: Value, on node: ProgressNode) {
        node.storePropertyValue(value, of: Self.self)
    }

    /// `node`'s own value, or the default.
    @inlinable
    public static func _progressTreeValue(of node: ProgressNode) -> Value {
        node.ownPropertyValues()?.value(of: Self.self) ?? defaultValue
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
        let below = parts.column.flatMap { SummaryTree<Self>.of($0).combined }
        let value = parts.values?.value(of: Self.self)
        if value == nil, let below { return below }
        var summary = defaultSummary
        reduce(into: &summary, value: value ?? defaultValue)
        guard let below else { return summary }
        return merge(summary, below)
    }

    /// One step of the engine on a column of this property (see `_ProgressTreeColumnStep`).
    @inlinable
    public static func _progressTreeColumnStep(_ step: inout _ProgressTreeColumnStep) {
        if case .make = step.action {
            step.column = SummaryTree<Self>()
            return
        }
        guard let column = step.column else { preconditionFailure("ProgressTree: a column step names its column") }
        let tree = SummaryTree<Self>.of(column)
        switch step.action {
        case .make:
            break
        case .set(let entry):
            guard let parts = step.parts else { preconditionFailure("ProgressTree: a member's step has its parts") }
            tree.set(entry, to: _progressTreeNodeSummary(parts))
        case .clear(let entry):
            tree.clear(entry)
        case .fold(let outcome):
            guard let parts = step.parts else { preconditionFailure("ProgressTree: a member's step has its parts") }
            if let left = summaryLeftBehind(_progressTreeNodeSummary(parts), by: outcome) { tree.addLeft(left) }
        case .removeLeaves:
            tree.removeLeaves()
        case .check:
            step.violations = tree.violations()
        case .checkMember(let entry):
            guard let parts = step.parts else { preconditionFailure("ProgressTree: a member's step has its parts") }
            step.violations = tree.violations(ofEntry: entry, expecting: _progressTreeNodeSummary(parts))
        }
    }
}
