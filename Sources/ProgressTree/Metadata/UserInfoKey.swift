extension ProgressNode {
    /// A key of `userInfo`, as Foundation's `ProgressUserInfoKey`. The keys Foundation defines are provided as
    /// constants with Foundation's raw values, so values keyed by them mean the same thing in both.
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct UserInfoKey: RawRepresentable, Hashable, Sendable {
        /// The key's string, for example `"NSProgressThroughputKey"`.
        public let rawValue: String
        /// Creates a key from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a key from its string.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The estimated time remaining, in seconds (a `Double`). Same storage as `estimatedTimeRemaining`.
        public static let estimatedTimeRemainingKey = UserInfoKey("NSProgressEstimatedTimeRemainingKey")
        /// The throughput in bytes per second (an `Int`). Same storage as `throughput`.
        public static let throughputKey = UserInfoKey("NSProgressThroughputKey")
        /// What is being done to the file (a `ProgressNode.FileOperationKind`). Same storage as
        /// `fileOperationKind`.
        public static let fileOperationKindKey = UserInfoKey("NSProgressFileOperationKindKey")
        /// The file being worked on (a `URL`). Same storage as `fileURL`.
        public static let fileURLKey = UserInfoKey("NSProgressFileURLKey")
        /// The number of files in the work (an `Int`). Same storage as `fileTotalCount`.
        public static let fileTotalCountKey = UserInfoKey("NSProgressFileTotalCountKey")
        /// The number of files done (an `Int`). Same storage as `fileCompletedCount`.
        public static let fileCompletedCountKey = UserInfoKey("NSProgressFileCompletedCountKey")
    }
}

/// `ProgressNode.UserInfoKey` under Foundation's name, so that code ported from Foundation compiles
/// (`[ProgressUserInfoKey: any Sendable]`). In a file that also imports Foundation, which declares a type
/// of that name, import ProgressTreeFoundation too, or write `ProgressNode.UserInfoKey` (see
/// `Docs/Migrating.md`).
public typealias ProgressUserInfoKey = ProgressNode.UserInfoKey
