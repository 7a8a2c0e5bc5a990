/// Every English word and pattern of the default descriptions, in one table: localizing the library means
/// replacing this file (or making each entry look its pattern up in a strings table).
///
/// Patterns take already formatted pieces (numbers, byte counts, durations), so word order is decided here
/// and nowhere else. Typographic characters are Apple's: curly quotes `“ ”`, the ellipsis `…` and the em
/// dash `—`.
enum DescriptionStrings {
    // MARK: localizedDescription

    /// "30% completed"
    static func percentCompleted(_ percent: String) -> String { "\(percent) completed" }

    /// "Downloading “photo.jpg”…"
    static func operation(_ verb: String, onFileNamed name: String) -> String { "\(verb) “\(name)”…" }

    /// "Copying 10 files…", "Copying 1 file…"
    static func operation(_ verb: String, onFileCount count: String, plural: Bool) -> String {
        "\(verb) \(count) \(plural ? "files" : "file")…"
    }

    /// "Copying files…" (the number of files is not known)
    static func operationOnFiles(_ verb: String) -> String { "\(verb) files…" }

    /// "Failed: the archive is not answering": a failed node, with its failure's description.
    static func failed(_ reason: String) -> String { "Failed: \(reason)" }

    /// The verb of a file operation; "Processing" for operations this table does not know.
    static func verb(for operation: ProgressNode.FileOperationKind?) -> String {
        switch operation {
        case .downloading?: "Downloading"
        case .decompressingAfterDownloading?: "Decompressing"
        case .receiving?: "Receiving"
        case .copying?: "Copying"
        case .uploading?: "Uploading"
        case .duplicating?: "Duplicating"
        default: "Processing"
        }
    }

    // MARK: localizedAdditionalDescription

    /// "16 of 42", "123 KB of 789.1 MB"
    static func amount(_ completed: String, of total: String) -> String { "\(completed) of \(total)" }

    /// "3 of 10 files", "0 of 1 file"
    static func files(_ completed: String, of total: String, plural: Bool) -> String {
        "\(completed) of \(total) \(plural ? "files" : "file")"
    }

    /// "123 KB of 789.1 MB (2 KB/s)"
    static func amount(_ amount: String, withRate rate: String) -> String { "\(amount) (\(rate))" }

    /// "123 KB of 789.1 MB — 2 minutes remaining"
    static func amount(_ amount: String, withTimeRemaining remaining: String) -> String {
        "\(amount) — \(remaining)"
    }

    /// "1 minute remaining (1 KB/s)": time remaining and rate with no amount to show.
    static func timeRemaining(_ remaining: String, withRate rate: String) -> String { "\(remaining) (\(rate))" }

    // MARK: Units

    /// "2 KB/s"
    static func perSecond(_ amount: String) -> String { "\(amount)/s" }

    /// "2 minutes remaining", "1 second remaining"
    static func remaining(_ count: Int, _ unit: TimeUnit) -> String {
        "\(ProgressFormat.count(count)) \(unit.rawValue)\(count == 1 ? "" : "s") remaining"
    }

    /// The units of `remaining(_:_:)`, by their singular words.
    enum TimeUnit: String {
        case second, minute, hour, day
    }

    /// "Zero KB": how the file-size formatter shows 0 bytes, as Apple's does.
    static let zeroBytes = "Zero KB"
    /// "1 byte", "999 bytes"
    static func bytes(_ count: String, plural: Bool) -> String { "\(count) \(plural ? "bytes" : "byte")" }
    /// The decimal units above bytes, in order: 10³, 10⁶, 10⁹, 10¹², 10¹⁵, 10¹⁸ bytes.
    static let byteUnits = ["KB", "MB", "GB", "TB", "PB", "EB"]
    /// "123 KB"
    static func byteAmount(_ number: String, unit: String) -> String { "\(number) \(unit)" }

    /// "30%"
    static func percent(_ number: String) -> String { "\(number)%" }
    /// The grouping separator of large numbers: "1,234,567".
    static let groupingSeparator = ","
    /// The decimal separator: "789.1".
    static let decimalSeparator = "."
    /// The minus sign of negative numbers.
    static let minusSign = "-"
}
