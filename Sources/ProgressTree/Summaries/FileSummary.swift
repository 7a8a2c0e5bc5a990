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
}

extension ProgressNode {
    /// The files and bytes of this node's subtree (see `FileSummary` for the rule), including the children
    /// that already finished.
    ///
    /// Thread safety: safe from any thread; a read of the tree (its refresh lock, and one node lock at a time
    /// inside it). A concurrent update is either seen or not, never half seen: a child that finishes
    /// meanwhile is counted once, attached or left behind.
    /// - Complexity: that of `fractionCompleted` (the same read brings the summaries of the changed part up to
    ///   date), × log of the siblings of each changed node: never O(children). The first read is O(attached
    ///   nodes in the subtree); finished children are O(1) in total (folded into their parent).
    public var fileSummary: FileSummary {
        FileSummaryProperty._progressTreeSummary(of: self)
    }
}
