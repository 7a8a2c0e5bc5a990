/// What a finished child hands to its parent's `FileSummary` (see `ProgressNode.finishedFileFold(of:)`).
enum FinishedFileFold {
    case nothing
    case summary(ProgressNode.FileSummary)
    /// The child still has attached children: its summary needs a walk of its subtree.
    case walk
}
