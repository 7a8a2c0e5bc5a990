/// Builds the default `localizedDescription` and `localizedAdditionalDescription` from the facts about a
/// node, read beforehand. Pure: which shape appears when is decided here, the words come from
/// `DescriptionStrings`, the numbers from `ProgressFormat`. The table of shapes is in
/// `Docs/Descriptions.md`.
enum DescriptionFormatter {
    /// What the main description needs.
    struct MainInput {
        var kind: ProgressNode.Kind?
        var fraction: Double
        var isIndeterminate: Bool
        var fileOperationKind: ProgressNode.FileOperationKind?
        /// The name of `fileURL` (its last path component), if it has a usable one.
        var fileName: String?
        /// `fileTotalCount` as the node reports it (set, or its subtree's).
        var fileTotalCount: Int?
    }

    /// What the additional description needs.
    struct AdditionalInput {
        var kind: ProgressNode.Kind?
        var fileOperationKind: ProgressNode.FileOperationKind?
        var completedUnitCount: Int64
        var totalUnitCount: Int64
        var isIndeterminate: Bool
        var isFinished: Bool
        /// The subtree's files and bytes.
        var files: ProgressNode.FileSummary
        /// `fileTotalCount` / `fileCompletedCount` as the node reports them (set, or its subtree's).
        var fileTotalCount: Int?
        var fileCompletedCount: Int?
        /// Whether `fileCompletedCount` was set on the node (then files are counted instead of bytes).
        var countsFilesExplicitly: Bool
        /// Bytes per second (set, or estimated while the work runs).
        var throughput: Int?
        /// Seconds (set, or estimated while the work runs).
        var timeRemaining: Double?
    }

    /// "30% completed"; "Copying 10 files…"; "Downloading “photo.jpg”…"; "" for an indeterminate generic node.
    static func main(_ input: MainInput) -> String {
        if describesFiles(kind: input.kind, operation: input.fileOperationKind) {
            let verb = DescriptionStrings.verb(for: input.fileOperationKind)
            if let name = input.fileName { return DescriptionStrings.operation(verb, onFileNamed: name) }
            if let count = input.fileTotalCount, count >= 0 {
                return DescriptionStrings.operation(verb, onFileCount: ProgressFormat.count(count), plural: count != 1)
            }
            return DescriptionStrings.operationOnFiles(verb)
        }
        if input.isIndeterminate { return "" }
        return DescriptionStrings.percentCompleted(ProgressFormat.percent(input.fraction))
    }

    /// "16 of 42"; "3 of 10 files"; "123 KB of 789.1 MB"; "1.61 GB of 3.22 GB (2 KB/s) — 2 minutes remaining";
    /// "1 minute remaining (1 KB/s)"; "" when there is nothing to show.
    static func additional(_ input: AdditionalInput) -> String {
        let rate = input.throughput.flatMap(ProgressFormat.throughput)
        let remaining = input.timeRemaining.flatMap(ProgressFormat.timeRemaining)
        guard let amount = amount(input) else {
            guard let remaining else { return rate ?? "" }
            return rate.map { DescriptionStrings.timeRemaining(remaining, withRate: $0) } ?? remaining
        }
        var text = amount
        if let rate { text = DescriptionStrings.amount(text, withRate: rate) }
        if let remaining { text = DescriptionStrings.amount(text, withTimeRemaining: remaining) }
        return text
    }

    /// Whether a node is described in terms of files: it is of kind `.file`, or says what it does to files
    /// (an aggregating root that is not itself a file: its units are not bytes).
    static func describesFiles(kind: ProgressNode.Kind?, operation: ProgressNode.FileOperationKind?) -> Bool {
        kind == .file || operation != nil
    }

    /// The counts part: files or bytes for a node that describes files, unit counts otherwise; `nil` when
    /// unknown.
    /// - Parameter forDisplay: the completed bytes as a display beside the total wants them
    ///   (`ProgressFormat.completedByteCount(_:of:)`) rather than as Apple's description has them.
    static func amount(_ input: AdditionalInput, forDisplay: Bool = false) -> String? {
        if describesFiles(kind: input.kind, operation: input.fileOperationKind) {
            let fileCount = input.fileTotalCount.map { total in
                let completed = max(0, input.fileCompletedCount ?? input.files.fileCompletedCount)
                return DescriptionStrings.files(
                    ProgressFormat.count(completed), of: ProgressFormat.count(total), plural: total != 1)
            }
            // Files are counted when the number done was set or not every size is known; else bytes.
            if let fileCount, input.countsFilesExplicitly || !input.files.hasCompleteByteCounts { return fileCount }
            if input.files.hasCompleteByteCounts {
                let completed = input.files.completedByteCount
                let total = input.files.totalByteCount
                return DescriptionStrings.amount(
                    forDisplay
                        ? ProgressFormat.completedByteCount(completed, of: total) : ProgressFormat.byteCount(completed),
                    of: ProgressFormat.byteCount(total))
            }
            // Nothing known about the files yet (a root before its first file): the unit counts below, so
            // that a determinate node never describes itself with an empty line.
        }
        if input.isIndeterminate { return nil }
        return DescriptionStrings.amount(
            ProgressFormat.count(input.completedUnitCount), of: ProgressFormat.count(input.totalUnitCount))
    }
}
