/// One node's contribution to a `FileSummary`, before its children are added.
struct FileFacts {
    var isFile: Bool
    var explicitTotal: Int?
    var explicitCompleted: Int?
    var finishedChildren: ProgressNode.FileSummary
    /// Attached children still to visit.
    var children: [ProgressNode]
    var completed: Int64
    var total: Int64
    var childUnits: Double

    /// The node's summary, given the sum of its attached children's summaries.
    func summary(withChildren attached: ProgressNode.FileSummary) -> ProgressNode.FileSummary {
        var below = finishedChildren
        below.add(attached)
        if isFile && below.fileTotalCount == 0 {
            return ownFiles()
        }
        if let explicitTotal {
            if explicitTotal > below.fileTotalCount {
                below.filesOfUnknownSize = below.filesOfUnknownSize.addingSaturated(
                    explicitTotal - below.fileTotalCount)
            }
            below.fileTotalCount = explicitTotal
        }
        if let explicitCompleted { below.fileCompletedCount = explicitCompleted }
        return below
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
