// What the summary engine lends a property's own code (Properties/ProgressProperty+Engine.swift): a node's
// parts for one computation, and one step on one column. Both hold columns as `ColumnReference`s, without a
// reference count: valid for the call, which runs under the tree's domain lock with the columns' nodes held
// (ColumnReference.swift states the contract). A node's values are lent the same way, by the node's state,
// under the node's lock (`NodeState.lentPropertyValues`): the parts are read where a writer would wait.

/// What the engine reads of a node for its summaries (`ProgressNode.withSummaryParts`): its own values and
/// file facts, and its part (its columns). Lent for one call, under the domain lock and, when it has values,
/// the node's lock, which keep all three alive and unchanged: no reference count is taken.
struct SummaryParts {
    /// The node's values, unretained (`NodeState.lentPropertyValues`).
    var values: Unmanaged<PropertyValues>?
    var files: FileFacts?
    /// The node's `ChildSums`, whose columns are what it keeps of its children.
    var sums: UnownedSums?

    /// The parts of the property `key` names: the node's values, its column of that property, its facts.
    func parts(for key: ObjectIdentifier, _ scratch: borrowing RefreshScratch) -> _ProgressTreeSummaryParts {
        _ProgressTreeSummaryParts(values: values, column: sums?.column(for: key, scratch), files: files)
    }

    /// The parts of `property`.
    func parts(
        for property: any ProgressProperty.Type, _ scratch: borrowing RefreshScratch
    ) -> _ProgressTreeSummaryParts {
        parts(for: ObjectIdentifier(property), scratch)
    }

    /// Calls `body` with each property the node has a value of.
    func forEachValueProperty(_ body: (PropertyType) -> Void) {
        values?._withUnsafeGuaranteedRef { $0.forEachProperty(body) }
    }

    /// Whether the node has anything of the property `key` names: a value, its files, or a column.
    func has(_ key: ObjectIdentifier, _ scratch: borrowing RefreshScratch) -> Bool {
        if files != nil && key == ObjectIdentifier(FileSummaryProperty.self) { return true }
        if values?._withUnsafeGuaranteedRef({ $0.contains(key) }) == true { return true }
        return sums?.column(for: key, scratch) != nil
    }
}

/// A node's parts, lent by the summary engine to a property's own code for one computation: its own values,
/// what it keeps of its children for that property, its file facts. Not API: ProgressTree's.
public struct _ProgressTreeSummaryParts {
    /// The node's own values (`nil`: it set none), unretained: the engine holds them for the call.
    @usableFromInline let values: Unmanaged<PropertyValues>?
    /// The node's column of the property (`nil`: it keeps nothing of its children for it).
    @usableFromInline let column: ColumnReference?
    /// The node's file facts (`nil`: it describes no files).
    @usableFromInline let files: FileFacts?

    /// The parts of a node with no value, no file and no child: its summary is the default's.
    @usableFromInline static var none: Self { Self(values: nil, column: nil, files: nil) }

    /// The node's value of `Property`, `nil` when it set none.
    @inlinable
    func value<Property: ProgressProperty>(of _: Property.Type) -> Property.Value? {
        values?._withUnsafeGuaranteedRef { $0.value(of: Property.self) }
    }

    /// What the node keeps of its children for `Property`: its members' contributions merged with what left
    /// it, `nil` when it keeps nothing.
    @inlinable
    func below<Property: ProgressProperty>(_: Property.Type) -> Property.Summary? {
        column?.combined(Property.self)
    }
}

/// Where the checks of columns write what they find (PROGRESSTREE_INTERNAL_CHECKS).
@usableFromInline
final class CheckReport {
    @usableFromInline var violations: [String] = []
    init() {}
}

/// One step of the summary engine on a column of one property: its action, the column, and the parts of the
/// member the action is about. Not API: ProgressTree's.
public struct _ProgressTreeColumnStep {
    @usableFromInline
    enum Action {
        /// Make an empty column of the property (into `made`).
        case make
        /// Set the contribution of the member at an entry to its summary, computed from its parts; merging
        /// the path above it, or not (a start sets every member's, then merges once: `rebuild`).
        case set(entry: Int, merging: Bool)
        /// Merge every inner node of the column again, at the end of a start.
        case rebuild
        /// Reset the contribution of the member at an entry to the default.
        case clear(entry: Int)
        /// Add what a member leaving with an outcome leaves behind, its summary computed from its parts.
        case fold(ProgressPropertyOutcome)
        /// Forget every member's contribution: the node has no member any more.
        case removeLeaves
        /// Check the column's invariants, where its summaries are `Equatable` (into `violations`).
        case check
        /// Check that the contribution at an entry is the member's summary (the same way).
        case checkMember(entry: Int)
    }

    @usableFromInline let action: Action
    /// The column stepped on (`nil` for `make`).
    @usableFromInline let column: ColumnReference?
    /// The parts of the member the action is about (`nil` for the actions about no member).
    @usableFromInline let memberParts: _ProgressTreeSummaryParts?
    /// The column `make` made, retained once for the engine, which takes that reference.
    @usableFromInline var made: Unmanaged<SummaryColumn>?
    /// Where a check writes what it found wrong, unretained: the engine holds it for the call.
    @usableFromInline let report: Unmanaged<CheckReport>?

    init(
        _ action: Action, column: ColumnReference?, parts: _ProgressTreeSummaryParts? = nil,
        report: CheckReport? = nil
    ) {
        self.action = action
        self.column = column
        memberParts = parts
        self.report = report.map { .passUnretained($0) }
    }

    /// Writes what a check found wrong.
    @inlinable
    func record(_ violations: [String]) {
        report?._withUnsafeGuaranteedRef { $0.violations += violations }
    }

    /// The column, which every action but `make` names.
    @inlinable
    var target: ColumnReference {
        guard let column else { preconditionFailure("ProgressTree: a column step names its column") }
        return column
    }

    /// The parts of the member, which `set`, `fold` and `checkMember` name.
    @inlinable
    var member: _ProgressTreeSummaryParts {
        guard let memberParts else { preconditionFailure("ProgressTree: a member's step has its parts") }
        return memberParts
    }
}
