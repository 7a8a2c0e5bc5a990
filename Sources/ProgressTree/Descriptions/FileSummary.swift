extension ProgressNode {
    /// The files and bytes of a subtree: what a root line such as "Copying 9 files…", "3 of 9 files" or
    /// "1.61 GB of 3.22 GB (2 MB/s)" is made of. Read it with `ProgressNode.fileSummary`.
    ///
    /// How a subtree is counted (the aggregation rule):
    /// - A node of kind `.file` with no file below it describes its own file(s): `fileTotalCount` of them
    ///   (1 if not set), all completed when the node is finished (or `fileCompletedCount` if set), and its
    ///   unit counts are its bytes (Foundation's convention for `.file`). An indeterminate file node has an
    ///   unknown size.
    /// - Any other node adds up its children: the attached ones as they are now, and the finished ones as
    ///   they were when they finished (a parent folds a child's summary into its own when the child
    ///   finishes and is released, so finished children cost no memory).
    /// - An explicit `fileTotalCount` / `fileCompletedCount` on such a node replaces the sum. Files it
    ///   announces beyond the ones its subtree knows about have an unknown size (they have no node yet).
    ///
    /// All sums saturate instead of overflowing.
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct FileSummary: Sendable, Equatable {
        /// The number of files.
        public var fileTotalCount: Int
        /// The number of files done.
        public var fileCompletedCount: Int
        /// The size of the files whose size is known, in bytes.
        public var totalByteCount: Int64
        /// The bytes done, over the files whose size is known.
        public var completedByteCount: Int64
        /// How many of the `fileTotalCount` files have no known size (so `totalByteCount` covers fewer files).
        public var filesOfUnknownSize: Int

        /// Creates a summary.
        public init(
            fileTotalCount: Int = 0, fileCompletedCount: Int = 0, totalByteCount: Int64 = 0,
            completedByteCount: Int64 = 0, filesOfUnknownSize: Int = 0
        ) {
            self.fileTotalCount = fileTotalCount
            self.fileCompletedCount = fileCompletedCount
            self.totalByteCount = totalByteCount
            self.completedByteCount = completedByteCount
            self.filesOfUnknownSize = filesOfUnknownSize
        }

        /// Whether the byte counts describe every file: the size of each file is known, and there is at
        /// least one byte to do. The default descriptions show bytes only then, and file counts otherwise.
        public var hasCompleteByteCounts: Bool { filesOfUnknownSize == 0 && totalByteCount > 0 }

        /// `true` when the subtree describes no file at all.
        public var isEmpty: Bool { self == FileSummary() }

        /// Adds `other`, saturating.
        mutating func add(_ other: FileSummary) {
            fileTotalCount = fileTotalCount.addingSaturated(other.fileTotalCount)
            fileCompletedCount = fileCompletedCount.addingSaturated(other.fileCompletedCount)
            totalByteCount = totalByteCount.addingSaturated(other.totalByteCount)
            completedByteCount = completedByteCount.addingSaturated(other.completedByteCount)
            filesOfUnknownSize = filesOfUnknownSize.addingSaturated(other.filesOfUnknownSize)
        }
    }

    /// The files and bytes of this node's subtree (see `FileSummary` for the rule), including the children
    /// that already finished.
    ///
    /// Thread safety: safe from any thread; takes one node lock at a time. A concurrent update is either
    /// seen or not, never half seen: each node's counts and children are read under its lock.
    /// - Complexity: that of `fractionCompleted`, plus O(attached nodes in the subtree); finished
    ///   children are O(1) in total (folded into their parent).
    public var fileSummary: FileSummary {
        subtreeFiles().summary
    }

    /// The subtree's summary, and whether any node below this one (attached or finished) describes files.
    func subtreeFiles() -> (summary: FileSummary, hasFilesBelow: Bool) {
        _ = refresh()  // brings the children's cached partial progress (bytes of file nodes) up to date
        return computeFileSummary()
    }

    /// What a finished child hands to its parent's summary when it is released, decided under the child's
    /// lock (`state` is its state) by the finishing path (`finishAndCreditAncestors()`), in the critical
    /// section that detaches it: nothing (the common case: no file metadata anywhere in it), a leaf's own
    /// files (no walk, no allocation), or, when it still has attached children, a walk of its subtree.
    func finishedFileFold(of state: NodeState) -> FinishedFileFold {
        guard state.children.isEmpty else { return .walk }
        if state.metadata.contributesNoFiles { return .nothing }
        let leaf = fileFacts(of: state, includingChildren: false).summary(withChildren: FileSummary())
        return leaf.isEmpty ? .nothing : .summary(leaf)
    }

    /// The summary a finished child hands to its parent, or `nil` when it has nothing to hand. Called
    /// outside every lock; only a `.walk` takes locks (this node's, then its attached children's, one at a
    /// time).
    func fileSummaryForFinishedParentFold(_ fold: FinishedFileFold) -> FileSummary? {
        switch fold {
        case .nothing: return nil
        case .summary(let summary): return summary
        case .walk:
            let summary = computeFileSummary().summary
            return summary.isEmpty ? nil : summary
        }
    }

    /// Walks the attached subtree bottom-up, one node lock at a time, iteratively (a 10,000-deep chain
    /// needs no deep stack).
    private func computeFileSummary() -> (summary: FileSummary, hasFilesBelow: Bool) {
        var stack = [SummaryFrame(node: self, facts: readFileFacts())]
        while true {
            let top = stack.count - 1
            if let child = stack[top].facts.children.popLast() {
                stack.append(SummaryFrame(node: child, facts: child.readFileFacts()))
                continue
            }
            let frame = stack.removeLast()
            let summary = frame.facts.summary(withChildren: frame.childrenSum)
            if stack.isEmpty {
                let below = frame.facts.finishedChildren.fileTotalCount.addingSaturated(
                    frame.childrenSum.fileTotalCount)
                return (summary, below > 0)
            }
            stack[stack.count - 1].childrenSum.add(summary)
        }
    }

    /// What the summary needs from this node, read under its lock.
    private func readFileFacts() -> FileFacts {
        state.withLock { fileFacts(of: $0, includingChildren: true) }
    }

    /// What the summary needs from this node; the caller holds this node's lock (`state` is its state).
    private func fileFacts(of state: NodeState, includingChildren: Bool) -> FileFacts {
        let userInfo = state.metadata.userInfo
        return FileFacts(
            isFile: state.metadata.isFile,
            explicitTotal: userInfo.isEmpty ? nil : Self.fileCount(in: userInfo[.fileTotalCountKey]),
            explicitCompleted: userInfo.isEmpty ? nil : Self.fileCount(in: userInfo[.fileCompletedCountKey]),
            finishedChildren: state.metadata.finishedChildren,
            children: includingChildren && !state.children.isEmpty ? state.children.entries.map(\.node) : [],
            completed: completedStorage.load(ordering: .sequentiallyConsistent),
            total: totalStorage.load(ordering: .sequentiallyConsistent),
            childUnits: recentChildUnits)
    }

    /// A file count stored in `userInfo`, if it is a usable one: an integer (of any type) or an integral
    /// floating-point value, not negative. Anything else counts as not set.
    static func fileCount(in value: (any Sendable)?) -> Int? {
        guard let value else { return nil }
        if let integer = value as? any BinaryInteger { return nonNegativeInt(integer) }
        if let double = value as? Double, double.isFinite, double >= 0, double.rounded() == double {
            return double < 9.2e18 ? Int(double) : Int.max
        }
        return nil
    }
}

/// `value` as an `Int` (clamped), or `nil` when negative.
private func nonNegativeInt<Integer: BinaryInteger>(_ value: Integer) -> Int? {
    value < 0 ? nil : Int(clamping: value)
}

/// What a finished child hands to its parent's `FileSummary` (see `ProgressNode.finishedFileFold(of:)`).
enum FinishedFileFold {
    case nothing
    case summary(ProgressNode.FileSummary)
    /// The child still has attached children: its summary needs a walk of its subtree.
    case walk
}

private struct SummaryFrame {
    let node: ProgressNode
    var facts: FileFacts
    var childrenSum = ProgressNode.FileSummary()
}

extension Metadata {
    /// Folds the summary of a child that finished (from `fileSummaryForFinishedParentFold(_:)`) into this
    /// node's total of finished children. Called under this node's lock, in the same critical section that
    /// removes the child, so a reader sees the child's files either attached or folded, never both or none.
    mutating func foldFinishedChild(_ summary: ProgressNode.FileSummary?) {
        if let summary { extrasForWriting().finishedChildren.add(summary) }
    }
}

/// One node's contribution to a `FileSummary`, before its children are added.
private struct FileFacts {
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

extension Int {
    /// `self + other`, clamped to `Int.min...Int.max` instead of trapping on overflow.
    func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        if !overflow { return sum }
        return other > 0 ? .max : .min
    }
}
