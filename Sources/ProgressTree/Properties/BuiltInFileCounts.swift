// The file counts as properties: the built-in file summary (Summaries/) is kept by the engine that keeps
// custom property summaries, and these two types let a program read and set its counts as it does its own
// properties (`node[ProgressNode.FileTotalCount.self] = 3`, `root.summary(of: ProgressNode.FileTotalCount.self)`).
// They are answered from the file metadata and `fileSummary`, not from property entries: one storage, the
// one `fileTotalCount` and `userInfo` read.

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
    }

    /// The user-info key behind a built-in property, if `property` is one.
    @inline(__always)
    static func builtInFileCountKey<Property: ProgressProperty>(_ property: Property.Type) -> UserInfoKey? {
        let id = ObjectIdentifier(property)
        if id == ObjectIdentifier(FileTotalCount.self) { return .fileTotalCountKey }
        if id == ObjectIdentifier(FileCompletedCount.self) { return .fileCompletedCountKey }
        return nil
    }

    /// A built-in property's value on this node.
    func builtInFileCount(_ key: UserInfoKey) -> Int { Self.fileCount(in: userInfoValue(key)) ?? 0 }

    /// A built-in property's summary over this node's subtree.
    func builtInFileCountSummary(_ key: UserInfoKey) -> Int {
        let files = fileSummary
        return key == .fileTotalCountKey ? files.fileTotalCount : files.fileCompletedCount
    }
}
