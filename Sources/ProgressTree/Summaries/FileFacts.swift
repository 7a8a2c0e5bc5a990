/// What a node's own files are made of, read under its lock: its kind, its file counts, its unit counts
/// (a `.file` node's bytes) and the partial work of its children (as of the last refresh). The own value of
/// the built-in file summary (`FileSummaryProperty`): the engine computes a node's `FileSummary` from these
/// facts and what it keeps of its children.
@usableFromInline
struct FileFacts: Sendable {
    var isFile: Bool
    var explicitTotal: Int?
    var explicitCompleted: Int?
    var completed: Int64
    var total: Int64
    var childUnits: Double

    /// The node's summary, given `below`, the summary of its children (attached, and what the ones that left
    /// left behind): a `.file` node with no file below it describes its own file(s); any other node adds up
    /// its children, its explicit file counts replacing theirs (see `ProgressNode.FileSummary`).
    func summary(withChildren below: ProgressNode.FileSummary) -> ProgressNode.FileSummary {
        if isFile && below.fileTotalCount == 0 { return ownFiles() }
        var summary = below
        if let explicitTotal {
            if explicitTotal > summary.fileTotalCount {
                summary.filesOfUnknownSize = summary.filesOfUnknownSize.addingSaturated(
                    explicitTotal - summary.fileTotalCount)
            }
            summary.fileTotalCount = explicitTotal
        }
        if let explicitCompleted { summary.fileCompletedCount = explicitCompleted }
        return summary
    }

    /// A file node with no file below it: its files, with its unit counts as their bytes.
    private func ownFiles() -> ProgressNode.FileSummary {
        let files = explicitTotal ?? 1
        let finished = FractionMath.isFinished(completed: completed, total: total)
        var summary = ProgressNode.FileSummary(
            fileTotalCount: files, fileCompletedCount: explicitCompleted ?? (finished ? files : 0))
        if total > 0 && completed >= 0 {
            // Own units plus attached children's partial work (as of the last refresh), at most the total.
            let partial = childUnits > 0 ? Int64(min(childUnits.rounded(.down), 9.2e18)) : 0
            summary.totalByteCount = total
            summary.completedByteCount = min(total, completed.addingSaturated(partial))
        } else if total == 0 && completed > 0 {
            // "Finished with nothing announced": the bytes done are all there is.
            summary.totalByteCount = completed
            summary.completedByteCount = completed
        } else {
            summary.filesOfUnknownSize = files
        }
        return summary
    }
}
