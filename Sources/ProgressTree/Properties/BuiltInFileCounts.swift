// The file counts as properties: `node[ProgressNode.FileTotalCount.self] = 3` is `fileTotalCount = 3`, and
// `root.summary(of: ProgressNode.FileTotalCount.self)` is `root.fileSummary.fileTotalCount`. Their values live
// where `fileTotalCount` and `userInfo` keep them, and their summaries are fields of the built-in file
// summary (`FileSummaryProperty`), so their witnesses say so: the engine keeps no column of their own.

extension ProgressNode {
    /// The number of files, as a property: a node's value is its own file count (`.fileTotalCountKey`, 0
    /// when not set); its summary is its subtree's `fileSummary.fileTotalCount`, by the file summary's rules
    /// (a `.file` node counts one file unless it says otherwise; finished children's files stay counted).
    ///
    /// Setting the value is `fileTotalCount = value`; the summary never needs a walk of your own.
    public enum FileTotalCount: ProgressProperty {
        /// No count set: 0.
        public static var defaultValue: Int { 0 }
        /// No files: 0.
        public static var defaultSummary: Int { 0 }
        /// Adds a count (a negative one counts as 0), saturating.
        public static func reduce(into summary: inout Int, value: Int) {
            summary = summary.addingSaturated(max(value, 0))
        }
        /// The sum, saturating.
        public static func merge(_ a: Int, _ b: Int) -> Int { a.addingSaturated(b) }

        /// `node.fileTotalCount = value`: one storage. Not API: ProgressTree's.
        public static func _progressTreeSetValue(_ value: Int, on node: ProgressNode) {
            node.setUserInfoObject(value, forKey: .fileTotalCountKey)
        }
        /// The node's own count, 0 when none. Not API: ProgressTree's.
        public static func _progressTreeValue(of node: ProgressNode) -> Int {
            fileCount(in: node.userInfoValue(.fileTotalCountKey)) ?? 0
        }
        /// `node.fileSummary.fileTotalCount`. Not API: ProgressTree's.
        public static func _progressTreeSummary(of node: ProgressNode) -> Int { node.fileSummary.fileTotalCount }
    }

    /// The number of files done, as a property: a node's value is its own count (`.fileCompletedCountKey`,
    /// 0 when not set); its summary is its subtree's `fileSummary.fileCompletedCount`. See `FileTotalCount`.
    public enum FileCompletedCount: ProgressProperty {
        /// No count set: 0.
        public static var defaultValue: Int { 0 }
        /// No files: 0.
        public static var defaultSummary: Int { 0 }
        /// Adds a count (a negative one counts as 0), saturating.
        public static func reduce(into summary: inout Int, value: Int) {
            summary = summary.addingSaturated(max(value, 0))
        }
        /// The sum, saturating.
        public static func merge(_ a: Int, _ b: Int) -> Int { a.addingSaturated(b) }

        /// `node.fileCompletedCount = value`: one storage. Not API: ProgressTree's.
        public static func _progressTreeSetValue(_ value: Int, on node: ProgressNode) {
            node.setUserInfoObject(value, forKey: .fileCompletedCountKey)
        }
        /// The node's own count, 0 when none. Not API: ProgressTree's.
        public static func _progressTreeValue(of node: ProgressNode) -> Int {
            fileCount(in: node.userInfoValue(.fileCompletedCountKey)) ?? 0
        }
        /// `node.fileSummary.fileCompletedCount`. Not API: ProgressTree's.
        public static func _progressTreeSummary(of node: ProgressNode) -> Int { node.fileSummary.fileCompletedCount }
    }
}
