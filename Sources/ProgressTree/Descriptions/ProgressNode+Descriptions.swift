#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ProgressNode {
    /// A sentence describing the work, for display: by default "30% completed", or for a `.file` node
    /// "Copying 10 files…" / "Downloading “photo.jpg”…". **(Foundation)**
    ///
    /// Setting a string replaces the default; setting `nil` restores it. Declared `String!` as in
    /// Foundation so that migrating code compiles unchanged: reading never gives `nil`. (As with any
    /// implicitly unwrapped value, string interpolation sees an optional: write
    /// `"\(node.localizedDescription!)"` or assign it to a `String` first.)
    ///
    /// The default, in English on every platform (shapes in `Docs/Descriptions.md`):
    /// - a failed node: "Failed: " and its failure's description ("Failed: the archive is not answering");
    /// - generic node: "30% completed" from `fractionCompleted` (so it includes the children's partial
    ///   work); **"" when the node is indeterminate**, as in Apple's Foundation — there is no percentage to
    ///   give, and a user interface shows an indeterminate indicator instead;
    /// - a node that describes files — of kind `.file`, or with a `fileOperationKind` (a root over file
    ///   nodes, whose own units are not bytes): the verb of `fileOperationKind` ("Processing" if unset),
    ///   then the file's name from `fileURL`, else the number of files (`fileTotalCount`, set or summed
    ///   over the subtree), else just "files": "Copying “photo.jpg”…", "Copying 9 files…", "Copying files…".
    ///
    /// Thread safety: any thread. Observable (`observe(\.localizedDescription, …)`): changes of the counts,
    /// the subtree and the metadata notify. Complexity: that of `fractionCompleted`, plus that of
    /// `fileSummary` for a `.file` node without a URL or file count.
    public var localizedDescription: String! {
        get {
            let (override, kind) = state.withLock { ($0.metadata.localizedDescriptionOverride, $0.metadata.kind) }
            if let override { return override }
            if let failure = failureDescription { return DescriptionStrings.failed(failure) }
            return DescriptionFormatter.main(mainDescriptionInput(kind: kind))
        }
        set { setDescriptionOverride(\.localizedDescriptionOverride, to: newValue) }
    }

    /// A second, more detailed line: by default "16 of 42" or, for a node that describes files,
    /// "123 KB of 789.1 MB" / "3 of 10 files", followed by the throughput and the time remaining when
    /// known: "1.61 GB of 3.22 GB (2 KB/s) — 2 minutes remaining". **(Foundation)**
    ///
    /// For files, bytes are shown when the size of every file is known (`FileSummary.hasCompleteByteCounts`)
    /// and `fileCompletedCount` was not set; otherwise file counts, when known.
    ///
    /// Setting a string replaces the default; setting `nil` restores it (`String!` as in Foundation: reading
    /// never gives `nil`).
    ///
    /// Reading it samples the throughput and time-remaining estimators (see `throughput`,
    /// `estimatedTimeRemaining`): a renderer that shows it on each frame keeps the estimates fresh. A
    /// finished, cancelled or failed node shows no estimated rate or time remaining (values set are still
    /// shown); an indeterminate generic node shows only the time remaining and throughput if they were set,
    /// else "".
    /// Values set out of range (negative, not finite, a throughput below 1 byte per second, a time over 100
    /// years) are left out rather than shown.
    ///
    /// Thread safety: any thread; observable. Complexity: that of `fileSummary`.
    public var localizedAdditionalDescription: String! {
        get { additionalDescriptionOverride ?? DescriptionFormatter.additional(additionalDescriptionInput()) }
        set { setDescriptionOverride(\.localizedAdditionalDescriptionOverride, to: newValue) }
    }

    /// Sets a description override (`nil`: the default again) and announces the change.
    private func setDescriptionOverride(_ override: WritableKeyPath<Metadata, String?>, to value: String?) {
        let parent = state.withLock { state in
            state.metadata[keyPath: override] = value
            return parentUnderOwnLock(state)
        }
        metadataChanged(affectsFiles: false, parent: parent)
    }

    func mainDescriptionInput(kind: Kind?) -> DescriptionFormatter.MainInput {
        var input = DescriptionFormatter.MainInput(
            kind: kind, fraction: fractionCompleted,
            isIndeterminate: FractionMath.isIndeterminate(completed: completedUnitCount, total: totalUnitCount))
        input.fileOperationKind = fileOperationKind
        if DescriptionFormatter.describesFiles(kind: kind, operation: input.fileOperationKind) {
            input.fileName = Self.displayName(of: fileURL)
            if input.fileName == nil { input.fileTotalCount = fileTotalCount }
        }
        return input
    }

    func additionalDescriptionInput() -> DescriptionFormatter.AdditionalInput {
        let fraction = fractionCompleted
        let completed = completedUnitCount
        let total = totalUnitCount
        let subtree = subtreeFiles()
        let (kind, stored) = state.withLock { ($0.metadata.kind, $0.metadata.userInfo) }
        let storedTotal = Self.fileCount(in: stored[.fileTotalCountKey])
        let storedCompleted = Self.fileCount(in: stored[.fileCompletedCountKey])
        let hasStoredThroughput = stored[.throughputKey] != nil
        let hasStoredRemaining = stored[.estimatedTimeRemainingKey] != nil
        let finished = FractionMath.isFinished(completed: completed, total: total)

        // Values set win (even unusable ones, which show nothing); estimates fill in the rest.
        var throughput = Self.storedNumber(stored[.throughputKey]).flatMap(Self.roundedInt)
        var remaining = Self.storedNumber(stored[.estimatedTimeRemainingKey])
        if !hasStoredThroughput || !hasStoredRemaining {
            let estimates = sampleEstimates(
                EstimationInput(fraction: fraction, completed: completed, total: total, files: subtree.summary))
            if !hasStoredThroughput { throughput = estimates.bytesPerSecond.flatMap(Self.roundedInt) }
            if !hasStoredRemaining, !finished { remaining = estimates.secondsRemaining }
        }
        return DescriptionFormatter.AdditionalInput(
            kind: kind, fileOperationKind: Self.operationKind(in: stored[.fileOperationKindKey]),
            completedUnitCount: completed, totalUnitCount: total,
            isIndeterminate: FractionMath.isIndeterminate(completed: completed, total: total),
            isFinished: finished, files: subtree.summary,
            fileTotalCount: storedTotal ?? (subtree.hasFilesBelow ? subtree.summary.fileTotalCount : nil),
            fileCompletedCount: storedCompleted ?? (subtree.hasFilesBelow ? subtree.summary.fileCompletedCount : nil),
            countsFilesExplicitly: storedCompleted != nil,
            throughput: throughput, timeRemaining: remaining)
    }

    /// The name to show for a file: the last path component of `url`, or `nil` when it has none worth
    /// showing (no path, or only "/").
    static func displayName(of url: URL?) -> String? {
        guard let name = url?.lastPathComponent, !name.isEmpty, name != "/" else { return nil }
        return name
    }
}
