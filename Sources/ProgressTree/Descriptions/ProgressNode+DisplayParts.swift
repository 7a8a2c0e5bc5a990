// The parts of a node's descriptions, separately, for displays that lay them out in columns (the
// terminal renderer of this package). `package`: not public API.

extension ProgressNode {
    /// What a tree display labels this node with: a description set by the user, or the default of a file
    /// node ("Downloading “photo.jpg”…"), also once failed (a display shows the failure apart); `nil` for a
    /// generic node, whose default ("30% completed") only repeats the percentage.
    ///
    /// - Complexity: O(1), unless a file node has neither a URL nor a file count (then a subtree summary).
    package var displayLabel: String? {
        let (override, kind) = state.withLock { ($0.metadata.localizedDescriptionOverride, $0.metadata.kind) }
        if let override { return override }
        return kind == .file ? DescriptionFormatter.main(mainDescriptionInput(kind: kind)) : nil
    }

    /// The parts of `localizedAdditionalDescription`: the amount ("4.5 MB of 9 MB", "3 of 10 files",
    /// "16 of 42"; a display's bytes: "0 bytes of 2 MB", and short of the total never shown as the total),
    /// the throughput in bytes per second and the seconds remaining (set or estimated).
    package struct DisplayDetails: Sendable, Equatable {
        package var amount: String?
        package var bytesPerSecond: Int?
        package var secondsRemaining: Double?
    }

    /// This node's `DisplayDetails`. A user-set `localizedAdditionalDescription` is the amount, without
    /// rates. Samples the estimators, as reading `localizedAdditionalDescription` does.
    ///
    /// - Complexity: that of `localizedAdditionalDescription` (O(changes below this node since the last
    ///   read of its file summary)).
    package var displayDetails: DisplayDetails {
        if let override = additionalDescriptionOverride { return DisplayDetails(amount: override) }
        let input = additionalDescriptionInput()
        return DisplayDetails(
            amount: DescriptionFormatter.amount(input, forDisplay: true),
            bytesPerSecond: input.throughput.flatMap { $0 > 0 ? $0 : nil },
            secondsRemaining: input.isFinished ? nil : input.timeRemaining)
    }

    /// The `localizedAdditionalDescription` set by the user, if any. O(1).
    package var additionalDescriptionOverride: String? {
        state.withLock { $0.metadata.localizedAdditionalDescriptionOverride }
    }

    /// Whether this node describes files (it is of kind `.file` or says what it does to files): only
    /// then do its details differ from its unit counts in ways worth a subtree walk. O(1).
    package var describesFiles: Bool {
        state.withLock { $0.metadata.kind == .file || $0.metadata.userInfo[.fileOperationKindKey] != nil }
    }
}
