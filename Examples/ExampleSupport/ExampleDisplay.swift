import Foundation
import ProgressTree
import ProgressTreeTerminal
import Synchronization

/// What every example that shows a tree sets up around its work: a `TerminalRenderer` for the root, a
/// key reader while live, and the signals (`InterruptHandler`): Ctrl-C cancels the root; a second Ctrl-C,
/// `SIGTERM` and `SIGHUP` stop the display and exit at once (130, 143, 129).
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
    private let interrupts: InterruptHandler
    /// Set when Ctrl-C cancelled the root (`exitStatusAfterCancelling`).
    private let interruption: Interruption

    /// - Parameters:
    ///   - cleanUp: before the display stops on a second Ctrl-C, `SIGTERM` or `SIGHUP` (then the
    ///     renderer and the key reader stop, and `exit` is called).
    ///   - exit: ends the process with the status given (`exit(3)` by default).
    public init(
        _ root: ProgressNode, mode: TerminalRenderer.Mode, keys: Keys,
        cleanUp: @escaping @Sendable () -> Void = {},
        exit: (@Sendable (_ status: Int32) -> Never)? = nil
    ) {
        var options = TerminalRenderer.Options()
        let keyReader = TerminalKeyReader()  // nil when standard input is not a terminal
        if keyReader != nil {
            switch keys {
            case .ignored: break
            case .pauseResumeCancel: options.hint = "Keys: p pause · r resume · c cancel · Ctrl-C cancel"
            case .cancel: options.hint = "Keys: c cancel · Ctrl-C cancel"
            }
        }
        let output = mode == .json ? FileDescriptorOutput.standardOutput : .standardError
        let renderer = TerminalRenderer(root, mode: mode, options: options, output: output)
        let liveKeys = renderer.mode == .live ? keyReader : nil
        let interruption = Interruption()
        let onInterrupt: @Sendable () -> Void = {
            interruption.happened.store(true, ordering: .relaxed)
            root.cancel()
        }
        let stopShowing: @Sendable () -> Void = {
            cleanUp()
            renderer.stop()
            liveKeys?.stop()
        }
        if let exit {
            interrupts = InterruptHandler(onInterrupt: onInterrupt, cleanUp: stopShowing, exit: exit)
        } else {
            interrupts = InterruptHandler(onInterrupt: onInterrupt, cleanUp: stopShowing)
        }
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
        self.interruption = interruption
    }

    /// The exit status of a program whose root was cancelled: 130 when Ctrl-C cancelled it, as a shell
    /// reports Ctrl-C; `ExitStatus.cancelled` (3) when a key (`c`) or the parent process that mounted this
    /// one did, since no signal was received.
    public var exitStatusAfterCancelling: Int32 {
        // Relaxed: read after the cancellation it caused was seen, on the thread that saw it.
        interruption.happened.load(ordering: .relaxed)
            ? InterruptHandler.ExitStatus.interrupted : InterruptHandler.ExitStatus.cancelled
    }

    /// Whether the display shows the outcome to a person (live or plain mode): a program need not repeat
    /// an error the tree already shows with its reason.
    public var showsOutcome: Bool { renderer.mode == .live || renderer.mode == .plain }

    /// Writes a line of the program's results: on standard output (standard error in json mode, where
    /// standard output holds only the JSON lines), control characters shown as spaces (paths come from
    /// outside), and, with `wraps` (prose), wrapped at spaces to the width of the terminal it goes to, if
    /// it goes to one, so that no word is split at the edge. A table's line is written whole.
    public func report(_ line: String, wraps: Bool = true) {
        let output = resultOutput
        let text = TerminalText.printable(line)
        let columns = wraps ? output.size()?.columns : nil
        let lines = columns.map { Self.wrapped(text, toColumns: max(20, $0 - 1)) } ?? [text]
        FileHandle(fileDescriptor: output.descriptor, closeOnDealloc: false)
            .write(Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Where `report` writes: standard output, or standard error in json mode.
    private var resultOutput: FileDescriptorOutput {
        renderer.mode == .json ? FileDescriptorOutput.standardError : .standardOutput
    }

    /// The width of the terminal the results go to, or `nil` when they do not go to a terminal (a file, a
    /// pipe): a table wider than it would be wrapped by the terminal in the middle of its cells.
    public var reportColumns: Int? { resultOutput.size()?.columns }

    /// Stops drawing (the final frame stays), restores the terminal's mode, and gives the signals back
    /// their default action.
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

/// Whether Ctrl-C cancelled the root: set by the interrupt handler, read for the exit status.
private final class Interruption: Sendable {
    let happened = Atomic<Bool>(false)
}
