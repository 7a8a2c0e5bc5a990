/// A type that reports its progress through a `ProgressNode`, like Foundation's `ProgressReporting`.
///
/// Conform a long-running operation to it so that callers can attach its `progress` to their own tree
/// (`parent.addChild(operation.progress, withPendingUnitCount: 1)`), observe or cancel it.
///
/// > Note: Foundation declares a protocol of the same name (for `Progress`). In a file that imports both
/// > Foundation and ProgressTree, the bare name is ambiguous: write `ProgressTree.ProgressReporting`.
public protocol ProgressReporting {
    /// The node that reports this object's progress. Should return the same node every time.
    var progress: ProgressNode { get }
}
