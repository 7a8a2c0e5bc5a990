extension ProgressNode {
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
}
