// The built-in file summary as a property of the engine, of the same kind as a program's own: its summary
// is `ProgressNode.FileSummary`, kept in a column of each table like any other, folded by the same rule
// when a child leaves (a failed child's files leave the summary). What differs is the node's own part: a
// node's "value" is what its kind, file counts and unit counts say (`FileFacts`), read by the engine from the
// node itself rather than stored, and its summary is made from those facts and its children's summary by
// the file rules (`FileFacts.summary(withChildren:)`), not by `reduce`.

/// The file summary (`ProgressNode.fileSummary`): the engine's built-in property.
enum FileSummaryProperty: ProgressProperty {
    /// A node that describes no files.
    static var defaultValue: FileFacts {
        FileFacts(isFile: false, explicitTotal: nil, explicitCompleted: nil, completed: 0, total: 0, childUnits: 0)
    }

    static var defaultSummary: ProgressNode.FileSummary { ProgressNode.FileSummary() }

    /// A node's own files added to `summary`.
    static func reduce(into summary: inout ProgressNode.FileSummary, value: FileFacts) {
        summary.add(value.summary(withChildren: ProgressNode.FileSummary()))
    }

    /// The files of both, saturating.
    static func merge(_ a: ProgressNode.FileSummary, _ b: ProgressNode.FileSummary) -> ProgressNode.FileSummary {
        var sum = a
        sum.add(b)
        return sum
    }

    /// A finished child's files stay counted; a failed child's leave the summary.
    static func summaryLeftBehind(
        _ summary: ProgressNode.FileSummary, by outcome: ProgressPropertyOutcome
    ) -> ProgressNode.FileSummary? {
        outcome == .failed ? nil : summary
    }

    /// The node's facts and its children's files, by the file rules.
    static func _progressTreeNodeSummary(_ parts: _ProgressTreeSummaryParts) -> ProgressNode.FileSummary {
        let below = parts.below(Self.self) ?? ProgressNode.FileSummary()
        return parts.files?.summary(withChildren: below) ?? below
    }
}
