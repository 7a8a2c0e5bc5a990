import ProgressTree
import ProgressTreeTerminal
import Synchronization

/// The lines file-copy prints above the live area, one per file started, paced by a `LabelPacer` so that a
/// folder of thousands of small files does not scroll by as a blur: the pacer drops the labels that would
/// fall behind, and the history says what it dropped, so every file is accounted for. When the pacer
/// shows file 8 after file 4, "  5–7/8  3 more files (450 KB)" comes first.
final class FileHistory: Sendable {
    private struct Started {
        let number: Int
        let label: String
        let size: Int64
    }

    private struct State {
        var started: [Started] = []
        /// The number of the last file whose line was printed (or accounted for by a "more files" line).
        var printed = 0
        /// How many files the copy has: known once SOURCE was searched.
        var fileCount = 0
    }

    private let state = Mutex(State())

    /// How many files the copy has; set once SOURCE was searched, before the first file starts.
    var fileCount: Int {
        get { state.withLock { $0.fileCount } }
        set { state.withLock { $0.fileCount = newValue } }
    }

    /// The line of file `number` (1-based) of `path`, `size` bytes: "   3/8  sub/medium.bin  (20 MB)".
    func label(number: Int, path: String, size: Int64) -> String {
        let fileCount = self.fileCount
        let digits = ProgressFormat.count(fileCount).count
        let position = ProgressFormat.count(number)
        return "  " + String(repeating: " ", count: max(0, digits - position.count)) + position + "/"
            + ProgressFormat.count(fileCount) + "  " + TerminalText.printable(path) + "  (" + Self.bytes(size) + ")"
    }

    /// Records that file `number` started, with its line.
    func started(number: Int, label: String, size: Int64) {
        state.withLock { $0.started.append(Started(number: number, label: label, size: size)) }
    }

    /// The lines to print when the pacer shows `label`: a line for the files started since the last one
    /// printed and not shown (the file's own line when it is one), then the label's; nothing for a label
    /// already accounted for.
    func lines(showing label: String) -> [String] {
        state.withLock { state in
            guard let shown = state.started.last(where: { $0.label == label }), shown.number > state.printed else { return [] }
            let skipped = state.started.filter { $0.number > state.printed && $0.number < shown.number }
            state.printed = shown.number
            let more = skipped.count == 1 ? [skipped[0].label] : skipped.isEmpty ? [] : [moreFiles(skipped, of: state.fileCount)]
            return more + [label]
        }
    }

    /// The lines for the files started after the last one printed: when the copy ends, the pacer may not
    /// have shown the last labels.
    func remainingLines() -> [String] {
        state.withLock { state in
            let rest = state.started.filter { $0.number > state.printed }
            state.printed = state.started.last?.number ?? state.printed
            guard let last = rest.last else { return [] }
            return rest.count == 1 ? [last.label] : [moreFiles(rest, of: state.fileCount)]
        }
    }

    /// "  5–7/8  3 more files (450 KB)".
    private func moreFiles(_ files: [Started], of fileCount: Int) -> String {
        let first = files.first!.number
        let last = files.last!.number
        let range = first == last ? ProgressFormat.count(first) : "\(ProgressFormat.count(first))–\(ProgressFormat.count(last))"
        let count = files.count == 1 ? "1 more file" : "\(ProgressFormat.count(files.count)) more files"
        return "  \(range)/\(ProgressFormat.count(fileCount))  \(count) (\(Self.bytes(files.reduce(0) { $0 + $1.size })))"
    }

    /// A byte count as the summaries say it ("0 bytes" for nothing).
    static func bytes(_ count: Int64) -> String {
        count == 0 ? "0 bytes" : ProgressFormat.byteCount(count)
    }
}
