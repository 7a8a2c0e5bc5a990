extension ProgressNode {
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
