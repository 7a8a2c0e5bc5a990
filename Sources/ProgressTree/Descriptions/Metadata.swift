/// The descriptive data of a node, guarded by the node's lock.
///
/// Everything a user sets through `userInfo`, `setUserInfoObject(_:forKey:)` and the typed properties
/// (`fileURL`, `throughput`, …) lives in the one `userInfo` dictionary, so the keys and the typed
/// properties always agree. `kind` and the description overrides are separate fields, as in Foundation
/// (they have no user-info key).
///
/// Kept small and free of reference counts beyond the dictionary, because every node carries one and
/// creating nodes is on the path of short-lived work: the rarely used parts live in `MetadataExtras`,
/// allocated the first time one of them is set, a file child finishes, or an estimate is read.
struct Metadata {
    var userInfo: [ProgressNode.UserInfoKey: any Sendable] = [:]
    /// `kind` without a reference count: 0 for `nil`, 1 for `.file`, 2 for another kind (kept in `extras`).
    private var kindCode: UInt8 = 0
    /// The rarely used parts; `nil` until first needed.
    private(set) var extras: MetadataExtras?

    /// The extras, allocated on first use.
    mutating func extrasForWriting() -> MetadataExtras {
        if let extras { return extras }
        let created = MetadataExtras()
        extras = created
        return created
    }

    var kind: ProgressNode.Kind? {
        get {
            switch kindCode {
            case 0: nil
            case 1: .file
            default: extras?.customKind
            }
        }
        set {
            switch newValue {
            case nil: kindCode = 0
            case .file?: kindCode = 1
            case let custom?:
                kindCode = 2
                extrasForWriting().customKind = custom
            }
        }
    }

    /// Whether the node is of kind `.file`, without building a `Kind`.
    var isFile: Bool { kindCode == 1 }

    /// The files and bytes of children that finished and were released by this node, folded in when each
    /// finished (see `ProgressNode.FileSummary`). Finished children are not retained to keep this total.
    var finishedChildren: ProgressNode.FileSummary {
        extras?.finishedChildren ?? ProgressNode.FileSummary()
    }

    /// Set by `localizedDescription = …`; `nil` means "use the default".
    var localizedDescriptionOverride: String? {
        get { extras?.localizedDescriptionOverride }
        set {
            if newValue == nil && extras == nil { return }
            extrasForWriting().localizedDescriptionOverride = newValue
        }
    }

    /// Set by `localizedAdditionalDescription = …`; `nil` means "use the default".
    var localizedAdditionalDescriptionOverride: String? {
        get { extras?.localizedAdditionalDescriptionOverride }
        set {
            if newValue == nil && extras == nil { return }
            extrasForWriting().localizedAdditionalDescriptionOverride = newValue
        }
    }

    /// `true` when nothing here can contribute to a parent's `FileSummary`: the node is no file, announces
    /// no file counts and has folded no files. Checked without walking anything.
    var contributesNoFiles: Bool {
        !isFile && (extras?.finishedChildren.isEmpty ?? true)
            && (userInfo.isEmpty
                || (userInfo[.fileTotalCountKey] == nil && userInfo[.fileCompletedCountKey] == nil))
    }
}

/// The rarely used part of a node's `Metadata`: description overrides, the files of finished children,
/// a kind other than `.file`, and the throughput and time-remaining estimators with the clock they read.
/// A reference type so that `Metadata` stays small (creating a node copies it); it is only ever reached
/// under the node's lock and never leaves it.
final class MetadataExtras {
    var customKind: ProgressNode.Kind?
    /// See `Metadata.finishedChildren`.
    var finishedChildren = ProgressNode.FileSummary()
    var localizedDescriptionOverride: String?
    var localizedAdditionalDescriptionOverride: String?
    /// The clock of the estimates; `nil` uses the nearest ancestor's (see `ProgressNode.estimationClock`).
    var clock: (any ProgressClock)?
    /// Completed bytes of the subtree's files (`FileSummary.completedByteCount`): `throughput`.
    var bytes = ThroughputEstimator()
    /// Completed work in the node's own units, `fractionCompleted × totalUnitCount` (which includes the
    /// partial work of children and does not jump when the total is re-weighted): `estimatedTimeRemaining`.
    var work = ThroughputEstimator()
}

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

    /// What kind of work a node stands for, as Foundation's `ProgressKind`. It selects the wording of the
    /// default descriptions: a node of kind `.file` counts bytes and describes files ("Copying 10 files…",
    /// "123 KB of 789.1 MB").
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct Kind: RawRepresentable, Hashable, Sendable {
        /// The kind's string, Foundation's raw value for the kinds Foundation defines.
        public let rawValue: String
        /// Creates a kind from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a kind from its string, as Foundation's `ProgressKind(_:)`.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Work on files, counted in bytes: `totalUnitCount` and `completedUnitCount` are byte counts.
        public static let file = Kind(rawValue: "NSProgressKindFile")
    }

    /// What is being done to a file, as Foundation's `Progress.FileOperationKind`: the verb of the default
    /// `localizedDescription` of a `.file` node ("Downloading “photo.jpg”…").
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct FileOperationKind: RawRepresentable, Hashable, Sendable {
        /// The operation's string, Foundation's raw value for the operations Foundation defines.
        public let rawValue: String
        /// Creates an operation kind from its string. Kinds this library does not know are described with
        /// the verb "Processing".
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates an operation kind from its string, as Foundation's `Progress.FileOperationKind(_:)`.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The file is being downloaded.
        public static let downloading = FileOperationKind(rawValue: "NSProgressFileOperationKindDownloading")
        /// The file is being decompressed after a download.
        public static let decompressingAfterDownloading = FileOperationKind(
            rawValue: "NSProgressFileOperationKindDecompressingAfterDownloading")
        /// The file is being received (for example over AirDrop).
        public static let receiving = FileOperationKind(rawValue: "NSProgressFileOperationKindReceiving")
        /// The file is being copied.
        public static let copying = FileOperationKind(rawValue: "NSProgressFileOperationKindCopying")
        /// The file is being uploaded.
        public static let uploading = FileOperationKind(rawValue: "NSProgressFileOperationKindUploading")
        /// The file is being duplicated.
        public static let duplicating = FileOperationKind(rawValue: "NSProgressFileOperationKindDuplicating")
    }
}
