// What a node keeps of its children's summaries (the summary engine: ProgressNode+Summaries.swift states its
// invariants). Owned by the tree's domain lock, like the `ChildSums` that holds it.

/// A node's summaries of its children: one column per property found among its members or in what its
/// children left behind (`SummaryColumn`), each member's contribution at the member's entry in the node's
/// `ChildSums`. Created when the node's summary is first read with children (it then *starts*: its members
/// are counted from then on) or when a child first leaves it something.
///
/// Reached only through the node's `ChildSums` by code holding the tree's domain lock (the lock's
/// `RefreshScratch` is the proof each engine function asks for), which orders every access.
final class SummaryTable {
    /// One column a property, in the order the properties were first seen; a property has at most one.
    private(set) var columns: [SummaryColumn] = []
    /// Whether the node's members are counted: once set (by the first read of the node's summary), every
    /// child the node's summary counts as attached has its contribution in the columns.
    var isStarted = false

    /// The column of the property `key` names, `nil` when it has none.
    func column(for key: ObjectIdentifier) -> SummaryColumn? {
        for column in columns where column.key == key { return column }
        return nil
    }

    /// The column of `property`, made empty if it has none.
    func column(of property: any ProgressProperty.Type) -> SummaryColumn {
        if let existing = column(for: ObjectIdentifier(property)) { return existing }
        var step = _ProgressTreeColumnStep(.make, column: nil)
        property._progressTreeColumnStep(&step)
        guard let made = step.column, made.key == ObjectIdentifier(property) else {
            preconditionFailure("ProgressTree: \(property) made no column of its own")
        }
        columns.append(made)
        return made
    }

    /// Runs `action` on every column.
    func forEachColumn(_ action: _ProgressTreeColumnStep.Action) {
        for column in columns {
            var step = _ProgressTreeColumnStep(action, column: column)
            column.property._progressTreeColumnStep(&step)
        }
    }

    /// The invariants of the columns (`SummaryTree.violations()`), one line each.
    func violations() -> [String] {
        var found: [String] = []
        for column in columns {
            var step = _ProgressTreeColumnStep(.check, column: column)
            column.property._progressTreeColumnStep(&step)
            found += step.violations
        }
        if Set(columns.map(\.key)).count != columns.count { found.append("a summary table has two columns of one property") }
        return found
    }
}
