// The columns a node keeps of its children's summaries, in its `ChildSums` (owned by the tree's domain lock,
// as the rest of it): looked up and made by property, and stepped on through each property's own code.

extension ChildSums {
    /// The column of the property `key` names, `nil` when there is none.
    func column(for key: ObjectIdentifier, _ scratch: borrowing RefreshScratch) -> ColumnReference? {
        for index in 0..<columnCount(scratch) where column(at: index, scratch).key == key {
            return column(at: index, scratch)
        }
        return nil
    }

    /// The column of `property`, made empty if there is none.
    func column(of property: any ProgressProperty.Type, _ scratch: borrowing RefreshScratch) -> ColumnReference {
        if let existing = column(for: ObjectIdentifier(property), scratch) { return existing }
        var step = _ProgressTreeColumnStep(.make, column: nil)
        property._progressTreeColumnStep(&step)
        guard let made = step.made?.takeRetainedValue(), made.key == ObjectIdentifier(property) else {
            preconditionFailure("ProgressTree: \(property) made no column of its own")
        }
        let reference = ColumnReference(retaining: made)
        add(reference, scratch)
        return reference
    }

    /// Makes the columns `member` has and this node has not.
    func addColumns(for member: SummaryParts, _ scratch: borrowing RefreshScratch) {
        member.forEachValueProperty { type in
            if column(for: type.key, scratch) == nil { _ = column(of: type.property, scratch) }
        }
        if member.files != nil { _ = column(of: FileSummaryProperty.self, scratch) }
        guard let memberSums = member.sums else { return }
        for index in 0..<memberSums.columnCount(scratch) {
            let memberColumn = memberSums.column(at: index, scratch)
            if column(for: memberColumn.key, scratch) == nil { _ = column(of: memberColumn.property, scratch) }
        }
    }

    /// Sets the contribution at `entry` of a member with values or files of its own: in every column, its
    /// summary of the column's property (the default for a property it has not). `merging`: merge the path
    /// above it now (`false` during a start, which merges once at its end). Notes that the columns changed.
    func setContribution(
        at entry: Int, of member: SummaryParts, merging: Bool, _ scratch: borrowing RefreshScratch
    ) {
        for index in 0..<columnCount(scratch) {
            let column = column(at: index, scratch)
            let parts = member.parts(for: column.key, scratch)
            var step = _ProgressTreeColumnStep(.set(entry: entry, merging: merging), column: column, parts: parts)
            column.property._progressTreeColumnStep(&step)
        }
        noteColumnsChanged(scratch)
    }

    /// Sets the contribution at `entry` of a member with no value or file of its own, `member` its part: in
    /// each of its columns, what it keeps of its children (a column made where this node has none). Its
    /// contribution to any other column is the default, as it always was (its columns are only ever added).
    /// Notes that the columns changed.
    func setContribution(
        at entry: Int, ofColumnsOf member: ChildSums, merging: Bool, _ scratch: borrowing RefreshScratch
    ) {
        for index in 0..<member.columnCount(scratch) {
            let memberColumn = member.column(at: index, scratch)
            let target = column(for: memberColumn.key, scratch) ?? column(of: memberColumn.property, scratch)
            target.copy(from: memberColumn, entry: entry, merging: merging)
        }
        noteColumnsChanged(scratch)
    }

    /// Adds what `member`, leaving with `outcome`, leaves behind, to each column of a property it has.
    func fold(
        _ member: SummaryParts, by outcome: ProgressPropertyOutcome, _ scratch: borrowing RefreshScratch
    ) {
        addColumns(for: member, scratch)
        for column in columns(scratch) where member.has(column.key, scratch) {
            let parts = member.parts(for: column.key, scratch)
            var step = _ProgressTreeColumnStep(.fold(outcome), column: column, parts: parts)
            column.property._progressTreeColumnStep(&step)
        }
    }

    /// Runs `action` (one about no member) on every column.
    func forEachColumn(_ action: _ProgressTreeColumnStep.Action, _ scratch: borrowing RefreshScratch) {
        for column in columns(scratch) {
            var step = _ProgressTreeColumnStep(action, column: column)
            column.property._progressTreeColumnStep(&step)
        }
    }

    /// The invariants of the columns (`SummaryTree.violations()`), one line each.
    func columnViolations(_ scratch: borrowing RefreshScratch) -> [String] {
        let report = CheckReport()
        let columns = columns(scratch)
        for column in columns {
            var step = _ProgressTreeColumnStep(.check, column: column, report: report)
            column.property._progressTreeColumnStep(&step)
        }
        var found = report.violations
        if Set(columns.map(\.key)).count != columns.count { found.append("two summary columns of one property") }
        return found
    }
}
