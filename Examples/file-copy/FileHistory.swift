import ProgressTree
import ProgressTreeTerminal
import ProgressTreePlatform

/// The lines file-copy prints above the live area, paced by a `LabelPacer` so that a folder of thousands of
/// small files does not scroll by as a blur. The pacer drops the labels that would fall behind, and the
/// history says what it dropped, so every file is accounted for: when the pacer shows file 8 after file 4,
/// "  5–7/8  3 more files (450 KB)" comes first.
///
/// A file's start costs one uncontended lock and two additions: the history keeps running totals, never a
/// line per file (a copy of 100,000 small files would otherwise build 100,000 strings nobody reads). Only
/// the files offered to the pacer (a few a second) get a line.
final class FileHistory: Sendable {
    /// A file offered to the pacer: its line, and the bytes of the files started before it.
    private struct Offered {
        let number: Int
        let label: String
        let bytesBefore: Int64
        let size: Int64
    }

    private struct State {
        /// The files offered to the pacer and not yet printed or passed, oldest first (a few at most: the
        /// pacer shows or drops them within its display time).
        var offered: [Offered] = []
        /// The number of the last file whose line was printed (or accounted for by a "more files" line).
        var printed = 0
        /// The bytes of files 1 through `printed`.
        var bytesPrinted: Int64 = 0
        /// The number of the last file started, and the bytes of files 1 through it.
        var lastStarted = 0
        var bytesStarted: Int64 = 0
        /// When a small file was last offered.
        var lastOffer: ContinuousClock.Instant?
        /// How many files the copy has: known once SOURCE was searched.
        var fileCount = 0
    }

    /// A small file (under one chunk, 1 MiB) is offered at most this often: the pacer shows at most one
    /// name in a fifth of its display time anyway, and each offer is a hand-off to its queue, which costs
    /// more than copying a small file. A bigger file is always offered: it may stay on screen a while.
    private let offerInterval: Duration

    /// `Lock`, not `Mutex`: ThreadSanitizer sees its critical sections (CI runs the examples under it).
    private let state = Lock(State())

    init(offerInterval: Duration = .milliseconds(50)) {
        self.offerInterval = offerInterval
    }

    /// How many files the copy has; set once SOURCE was searched, before the first file starts.
    var fileCount: Int {
        get { state.withLock { $0.fileCount } }
        set { state.withLock { $0.fileCount = newValue } }
    }

    /// The line of file `number` (1-based) of `path`, `size` bytes: "    3/8  sub/medium.bin  (20 MB)".
    func label(number: Int, path: String, size: Int64) -> String {
        "  " + Self.aligned(ProgressFormat.count(number), of: fileCount) + "/" + ProgressFormat.count(fileCount)
            + "  " + TerminalText.printable(path) + "  (" + Self.bytes(size) + ")"
    }

    /// `position` (a file number, or a range "5–7") right-aligned to the width of the widest range of
    /// `fileCount` files, so that the "/" and what follows it keep their column on every line, whatever
    /// the numbers ("  3–9/2,003" and "  3–831/2,003" start their words at the same column).
    static func aligned(_ position: String, of fileCount: Int) -> String {
        let digits = ProgressFormat.count(fileCount).count
        let width = 2 * digits + 1  // "2,002–2,003"
        return String(repeating: " ", count: max(0, width - position.count)) + position
    }

    /// Records that file `number` of `size` bytes started (files start in order); returns whether to offer
    /// its line to the pacer now (then call `offered(number:label:)` before sending it).
    func started(number: Int, size: Int64) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            let bytesBefore = state.bytesStarted
            state.lastStarted = number
            state.bytesStarted += size
            guard size < 1 << 20 else {
                state.offered.append(Offered(number: number, label: "", bytesBefore: bytesBefore, size: size))
                return true
            }
            guard state.lastOffer.map({ now - $0 >= offerInterval }) ?? true else { return false }
            state.lastOffer = now
            state.offered.append(Offered(number: number, label: "", bytesBefore: bytesBefore, size: size))
            return true
        }
    }

    /// Gives file `number`, just started and to be offered, its line.
    func offered(number: Int, label: String) {
        state.withLock { state in
            guard let index = state.offered.lastIndex(where: { $0.number == number }) else { return }
            let entry = state.offered[index]
            state.offered[index] = Offered(
                number: number, label: label, bytesBefore: entry.bytesBefore, size: entry.size)
        }
    }

    /// The lines to print when the pacer shows `label`: a line for the files started since the last one
    /// printed and not shown (the file's own line when it is one that was offered), then the label's;
    /// nothing for a label already accounted for.
    func lines(showing label: String) -> [String] {
        state.withLock { state in
            guard let shown = state.offered.last(where: { $0.label == label }), shown.number > state.printed else {
                return []
            }
            let skippedCount = shown.number - state.printed - 1
            let skippedBytes = shown.bytesBefore - state.bytesPrinted
            var lines: [String] = []
            if skippedCount == 1, let skipped = state.offered.first(where: { $0.number == shown.number - 1 }) {
                lines.append(skipped.label)
            } else if skippedCount > 0 {
                lines.append(
                    moreFiles(first: state.printed + 1, count: skippedCount, bytes: skippedBytes, of: state.fileCount))
            }
            state.printed = shown.number
            state.bytesPrinted = shown.bytesBefore + shown.size
            state.offered.removeAll { $0.number <= shown.number }
            return lines + [label]
        }
    }

    /// The lines for the files started after the last one printed: when the copy ends, the pacer may not
    /// have shown the last labels.
    func remainingLines() -> [String] {
        state.withLock { state in
            let count = state.lastStarted - state.printed
            guard count > 0 else { return [] }
            let last = state.offered.last(where: { $0.number == state.lastStarted })
            let lines =
                count == 1 && last != nil
                ? [last!.label]
                : [
                    moreFiles(
                        first: state.printed + 1, count: count, bytes: state.bytesStarted - state.bytesPrinted,
                        of: state.fileCount)
                ]
            state.printed = state.lastStarted
            state.bytesPrinted = state.bytesStarted
            state.offered.removeAll()
            return lines
        }
    }

    /// "  5–7/8  3 more files (450 KB)", the range aligned as the labels' numbers are.
    private func moreFiles(first: Int, count: Int, bytes: Int64, of fileCount: Int) -> String {
        let last = first + count - 1
        let range =
            first == last ? ProgressFormat.count(first) : "\(ProgressFormat.count(first))–\(ProgressFormat.count(last))"
        let files = count == 1 ? "1 more file" : "\(ProgressFormat.count(count)) more files"
        return
            "  \(Self.aligned(range, of: fileCount))/\(ProgressFormat.count(fileCount))  \(files) (\(Self.bytes(bytes)))"
    }

    /// A byte count as the summaries say it ("0 bytes" for nothing).
    static func bytes(_ count: Int64) -> String {
        count == 0 ? "0 bytes" : ProgressFormat.byteCount(count)
    }
}
