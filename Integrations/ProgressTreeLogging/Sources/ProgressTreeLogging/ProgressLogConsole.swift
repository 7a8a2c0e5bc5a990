import ProgressTreeTerminal
import Synchronization

/// Where the records of `ProgressLogHandler`s go: the `TerminalRenderer` that shows the progress, or a
/// plain output while there is none.
///
/// swift-log's `LoggingSystem.bootstrap` can be called once per process, usually before any renderer
/// exists. Bootstrap with handlers that share one console, and attach each renderer to it while it runs:
///
/// ```swift
/// let console = ProgressLogConsole()
/// LoggingSystem.bootstrap { ProgressLogHandler(label: $0, console: console) }
/// // …
/// let renderer = TerminalRenderer(album)
/// console.renderer = renderer
/// try await renderer.run { try await importPhotos(into: album) }
/// ```
///
/// Where a record goes, by the attached renderer's `TerminalRenderer/mode`:
/// - `live`, `plain` and `accessible`, and a renderer that publishes to a parent process: through
///   `TerminalRenderer/print(_:)`, the renderer's one way to its output. In live mode the record is drawn
///   above the live area and the area is redrawn below it, at once when no frame was drawn within the
///   renderer's frame interval, else with the next frame, together with the records logged meanwhile;
///   before the first frame and after `stop()` it is written below what is on screen, as plain lines. In
///   plain and accessible modes it is a line of its own, written before `log` returns.
/// - `json` and `none`: to `fallback`, never to the renderer's output, whose lines stay JSON only. Give
///   a json-mode renderer an output other than `fallback` (the examples write JSON to standard output and
///   everything else to standard error).
/// - No renderer attached (the default): to `fallback`.
///
/// Every record is written whole. In live mode a burst of records costs no more frames than the renderer's
/// frame rate (810 records in 24 s draw at most one frame per frame interval, not one per record), and a
/// record waits at most about one frame interval; `TerminalRenderer/stop()` writes those still waiting,
/// so a record logged before the renderer stops is not lost (call `stop()`, or `run`, before the program
/// exits). Elsewhere, when `log` returns, its line is in the output.
///
/// One console and any number of handlers may write over the same renderer: the renderer's lock orders
/// their lines, and no line is split by another or by a frame. Writing to the renderer's output by any
/// other way (a second handler writing to standard error itself, `print` to the same terminal) still
/// tears the live area: that is what this type is for.
///
/// Thread safety: every method may be called from any thread, also from code the renderer runs while it
/// draws (its `TerminalOutput`, the words of `TerminalRenderer/show(_:_:)`): such a record is written with
/// the next frame.
public final class ProgressLogConsole: Sendable {
    private let attached: Mutex<TerminalRenderer?>
    /// Serializes the fallback writes of every console of the process, so that records written from
    /// several threads, through several consoles to the same standard error, never interleave (a write
    /// longer than a pipe's atomic size could otherwise be split by another).
    private static let fallbackLock = Mutex(())
    /// Where records go while no renderer is attached, or the renderer's mode is `json` or `none`.
    public let fallback: any TerminalOutput

    /// A console that prints through `renderer`, or to `fallback` while none is attached.
    ///
    /// - Parameters:
    ///   - renderer: the renderer that shows the progress; attach or change it later with `renderer`.
    ///   - fallback: where records go without a renderer, or beside one in json or none mode; standard
    ///     error by default.
    public init(
        renderer: TerminalRenderer? = nil, fallback: any TerminalOutput = FileDescriptorOutput.standardError
    ) {
        self.attached = Mutex(renderer)
        self.fallback = fallback
    }

    /// The renderer records are printed through, or `nil` for none. Set it when a renderer starts and
    /// back to `nil` (or leave it: a stopped renderer writes records as plain lines) when it is gone.
    public var renderer: TerminalRenderer? {
        get { attached.withLock { $0 } }
        set { attached.withLock { $0 = newValue } }
    }

    /// Writes `lines` (already printable, without line breaks) where the attached renderer's mode says.
    func write(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        // The renderer is read, then used outside this lock: its `print` takes the renderer's own lock.
        let renderer = attached.withLock { $0 }
        if let renderer, [.live, .plain, .accessible].contains(renderer.mode) || renderer.isPublishing {
            renderer.print(lines.joined(separator: "\n"))
            return
        }
        let text = lines.map { $0 + "\n" }.joined()
        Self.fallbackLock.withLock { _ in fallback.write(text) }
    }
}
