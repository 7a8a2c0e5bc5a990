import ProgressTree
import ProgressTreeTerminal

/// What every example that shows a tree sets up around its work: a `TerminalRenderer` for the root, a
/// key reader while live, and the signals, handled by the library (`TerminalRenderer.handleInterrupts`):
/// Ctrl-C cancels the root; a second Ctrl-C, `SIGTERM` and `SIGHUP` stop the display and exit at once
/// (130, 143, 129).
///
/// Where each stream goes: progress on standard error, results (the summary, a table) on standard output,
/// so `example > result.txt` keeps only the results and `example 2>&1 | cat` logs both as plain lines.
/// In json mode the JSON lines are the program's output: they go to standard output, alone, and the
/// results to standard error, so `example --progress json | jq` reads them.
public final class ExampleDisplay: Sendable {
    /// The keys an example reads while live.
    public enum Keys: Sendable {
        /// None to press, but a key reader keeps what is typed from being echoed over the live area.
        case ignored
        /// `p` pauses the root, `r` resumes it, `c` cancels it; a hint under the tree says so.
        case pauseResumeCancel
        /// `c` cancels the root, for work that cannot pause; a hint under the tree says so.
        case cancel
    }

    /// The renderer that shows the root; examples print their messages through it (`print(_:)`).
    public let renderer: TerminalRenderer
    private let keys: TerminalKeyReader?
    private let interrupts: TerminalInterrupts

    /// The exit status of a program whose work a key (`c`) or the parent process that mounted it
    /// cancelled: no signal was received, so not 128 + a signal's number, which a shell reads as "ended by
    /// that signal".
    public static let cancelledExitStatus: Int32 = 3

    /// - Parameters:
    ///   - cleanUp: before the display stops on a second Ctrl-C, `SIGTERM` or `SIGHUP` (then the
    ///     renderer and the key reader stop, and the process exits).
    public init(
        _ root: ProgressNode, mode: TerminalRenderer.Mode, keys: Keys, cleanUp: @escaping @Sendable () -> Void = {}
    ) {
        var options = TerminalRenderer.Options()
        let keyReader = TerminalKeyReader()  // nil when standard input is not a terminal
        if keyReader != nil {
            switch keys {
            case .ignored: break
            case .pauseResumeCancel:
                options.hint = "Keys: p pause · r resume · c cancel · Ctrl-C cancel"
                options.pausedHint = "Paused. Keys: r resume · c cancel · Ctrl-C cancel"
            case .cancel: options.hint = "Keys: c cancel · Ctrl-C cancel"
            }
        }
        let output = mode == .json ? FileDescriptorOutput.standardOutput : .standardError
        let renderer = TerminalRenderer(root, mode: mode, options: options, output: output)
        let liveKeys = renderer.mode == .live ? keyReader : nil
        interrupts = renderer.handleInterrupts(cleanUp: cleanUp)
        switch keys {
        case .ignored:
            liveKeys?.start { _ in }
        case .pauseResumeCancel:
            liveKeys?.start { key in
                switch key {
                case "p": root.pause()
                case "r": root.resume()
                case "c": root.cancel()
                default: break
                }
            }
        case .cancel:
            liveKeys?.start { key in if key == "c" { root.cancel() } }
        }
        self.renderer = renderer
        self.keys = liveKeys
    }

    /// The exit status of a program whose root was cancelled: 130 when Ctrl-C cancelled it, as a shell
    /// reports Ctrl-C (`TerminalInterrupts.interruptedExitStatus`); `cancelledExitStatus` (3) when a key
    /// (`c`) or the parent process that mounted this one did, since no signal was received.
    public var exitStatusAfterCancelling: Int32 {
        interrupts.wasInterrupted ? TerminalInterrupts.interruptedExitStatus : Self.cancelledExitStatus
    }

    /// Whether the display shows the outcome to a person (live, plain or accessible mode): a program need
    /// not repeat an error the tree already shows with its reason.
    public var showsOutcome: Bool { [.live, .plain, .accessible].contains(renderer.mode) }

    /// Writes a line of the program's results: on standard output (standard error in json mode, where
    /// standard output holds only the JSON lines), control characters shown as spaces (paths come from
    /// outside), and, with `wraps` (prose), wrapped at spaces to the width of the terminal it goes to, if
    /// it goes to one, so that no word is split at the edge, and ending with a full stop in accessible
    /// mode (a sentence for a screen reader). A table's line is written whole.
    public func report(_ line: String, wraps: Bool = true) {
        let output = resultOutput
        var text = TerminalText.printable(line)
        // Prose read by a screen reader ends as a sentence does.
        if wraps, renderer.mode == .accessible, let last = text.last, !".!?".contains(last) { text += "." }
        let columns = wraps ? output.size()?.columns : nil
        let lines = columns.map { Self.wrapped(text, toColumns: max(20, $0 - 1)) } ?? [text]
        // Dropped, not fatal, when the reader is gone (Ctrl-C ended `cat` in `example | cat`).
        output.write(lines.map { $0 + "\n" }.joined())
    }

    /// Where `report` writes: standard output, or standard error in json mode.
    private var resultOutput: FileDescriptorOutput {
        renderer.mode == .json ? FileDescriptorOutput.standardError : .standardOutput
    }

    /// The width of the terminal the results go to, or `nil` when they do not go to a terminal (a file, a
    /// pipe): a table wider than it would be wrapped by the terminal in the middle of its cells.
    public var reportColumns: Int? { resultOutput.size()?.columns }

    /// Stops drawing (the final frame stays), restores the terminal's mode, and gives the signals back
    /// their default action (a Ctrl-C while the program writes its results ends it, with 130).
    public func stop() {
        renderer.stop()
        keys?.stop()
        interrupts.stop()
    }
}

extension ExampleDisplay {
    /// `text` in lines of at most `columns` display columns, broken at spaces (the spaces within a line
    /// kept: a table's columns stay aligned); a word longer than a line (a long path) is broken where the
    /// line ends.
    public static func wrapped(_ text: String, toColumns columns: Int) -> [String] {
        guard DisplayWidth.of(text) > columns else { return [text] }
        var lines: [String] = []
        var line = ""
        var started = false
        for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
            let candidate = started ? line + " " + word : word
            if DisplayWidth.of(candidate) <= columns {
                line = candidate
                started = true
                continue
            }
            if started { lines.append(line) }
            var rest = word
            while DisplayWidth.of(rest) > columns {
                var head = ""
                while let next = rest.first, DisplayWidth.of(head + String(next)) <= columns {
                    head.append(next)
                    rest.removeFirst()
                }
                lines.append(head)
            }
            line = rest
            started = true
        }
        lines.append(line)
        return lines
    }
}
