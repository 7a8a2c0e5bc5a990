import Dispatch
import ProgressTree
import ProgressTreeStreaming
import Synchronization
import ProgressTreePlatform

/// Shows a `ProgressNode` tree in a terminal: live bars that redraw in place, plain lines for logs, or
/// JSON lines for other programs.
///
/// ```swift
/// let renderer = TerminalRenderer(album)
/// renderer.start()
/// try await importPhotos(into: album)
/// renderer.stop()          // draws the final frame and restores the cursor
/// ```
///
/// The renderer draws from its own timer at a bounded rate and reads the tree only then: it adds nothing
/// to the code that updates the nodes. It skips frames that would not change the screen, and waits
/// `Options.initialDelay` before the first live frame so that quick work never flashes.
///
/// Conventions: writes to standard error by default; `auto` mode is `live` on a terminal and `plain`
/// otherwise (also when `TERM=dumb`); `NO_COLOR` removes colour only; the width follows the terminal
/// (read at every frame, and a frame is drawn at once on `SIGWINCH`); the cursor is hidden while live
/// and restored by `stop()`, and on Ctrl-C, `SIGTERM` and `SIGHUP` unless the program handles those signals
/// itself; Ctrl-Z restores it before the process stops, and `fg` draws the live area anew. Printed messages
/// and labels never write control characters. In live mode the root's progress also drives the terminal's
/// tab or taskbar indicator (`OSC 9;4`; see `Options.showsTaskbarProgress`).
///
/// Thread safety: every method may be called from any thread. Frames are drawn under the renderer's own
/// lock, one at a time; lock order is renderer, then the library's locks (a tree's domain lock, then one
/// node lock), never the reverse: nothing in the library calls a renderer under its locks.
///
/// User code that runs under the renderer's lock: the `TerminalOutput` passed in (`write`, `size()`), the
/// `ProgressClock` (`now`), the words of a summary shown with `show(_:_:)` and its property's functions,
/// and the `deinit` of anything held only by a finished node, which the renderer
/// releases while it draws (its handlers, its metadata). Such code may read and update nodes (that is the
/// lock order above), but must not call this renderer (`print`, `drawFrame`, `start`, `stop`, `run`): its
/// lock is not recursive, and the call would trap; nor wait for a thread that is calling it.
public final class TerminalRenderer: Sendable {
    /// How progress is shown.
    public enum Mode: String, Sendable, CaseIterable {
        /// `live` on an interactive terminal (and `TERM` is not `dumb`), `plain` otherwise.
        case auto
        /// Bars redrawn in place.
        case live
        /// Lines for logs: when a node starts, finishes, is cancelled or paused, and every 10% or few
        /// seconds in between. No escape codes.
        case plain
        /// One JSON object per line for each node whose line changed: the wire format of
        /// `Docs/WireFormat.md`, by its rules for writers (as `ProgressPublisher`), which
        /// `ProgressNode.mount` reads.
        case json
        /// Nothing.
        case none
    }

    /// How the renderer behaves.
    public struct Options: Sendable {
        /// Frames per second of the timer (live, and how often plain and json look for changes).
        public var framesPerSecond: Double = 15
        /// Time before the first live frame: work that ends sooner shows only its final frame.
        public var initialDelay: Duration = .milliseconds(200)
        /// How many finished children of a node stay on screen (as one line each, their own children
        /// collapsed); older ones disappear. 0 hides finished children at once.
        public var keptFinishedChildren = 3
        /// Colour: `nil` follows the conventions (on in live mode unless `NO_COLOR` is set).
        public var colors: Bool? = nil
        /// Plain mode: a progress line each time a node crosses another such fraction.
        public var plainStep = 0.1
        /// Plain mode: a progress line at least this often while a node moves.
        public var plainInterval: Duration = .seconds(5)
        /// Plain and json modes: the deepest level reported (0 = the root only); the nodes below it are only
        /// counted, in their ancestors' lines (`failedBelow`, `cancelledBelow`, the counts). `nil` (the
        /// default): each mode's own, 1 in plain mode (the root and its children), the whole tree in json
        /// mode (a program reading it wants every node; a frame writes only the lines that changed).
        public var logDepth: Int? = nil
        /// Plain and json modes: how many children of one node have lines at a time, the first of its
        /// unfinished children in the order they were added. The next ones get lines as those finish; a
        /// child that finishes before its turn gets none and is counted in its parent's line (its units,
        /// its files), one that fails still gets its line with the reason. So a frame and `stop()` cost
        /// the same at 100,000 children as at 100, and the log stays readable. `nil` (the default): each
        /// mode's own, 10 in plain mode, 32 in json mode. At least 1.
        public var loggedChildren: Int? = nil
        /// Whether the renderer draws from its own timer. When `false`, call `drawFrame()` yourself.
        public var drawsOnTimer = true
        /// The terminal size to assume when the output does not report one.
        public var fallbackSize = TerminalSize(columns: 80, rows: 24)
        /// Live mode: whether the root's progress also drives the terminal's own progress indicator (in the
        /// tab or taskbar) with `OSC 9;4`: the percentage, indeterminate, paused, error when something
        /// failed, cleared by `stop()`. Only on a terminal and never with `TERM=dumb`; terminals that do
        /// not know the sequence ignore it (see `Docs/Terminal.md` for which ones show it).
        public var showsTaskbarProgress = true
        /// Live mode: a line under the tree while the work runs, such as the keys to press; the final
        /// frame leaves it out, so it does not stay on screen after the program ends.
        public var hint: String?

        /// The default options; change its properties to customize them.
        public init() {}
    }

    private let root: ProgressNode
    /// The mode in effect (`auto` resolved against the output and the environment; `.none` while
    /// publishing to a parent process, see `isPublishing`).
    public let mode: Mode

    /// Whether the renderer publishes the tree to the parent process that started this one instead of
    /// drawing: `PROGRESSTREE_FD` in the environment named a descriptor (see `Docs/Mounting.md`).
    public var isPublishing: Bool { publisher != nil }
    private let options: Options
    private let output: any TerminalOutput
    private let clock: any ProgressClock
    /// `Options.showsTaskbarProgress`, in live mode, on a terminal, and `TERM` is not `dumb`.
    private let drivesTaskbar: Bool
    private let state: Lock<RendererState>
    /// Set when a parent process mounts this program's tree (`PROGRESSTREE_FD`): the renderer then
    /// publishes the tree to it instead of drawing.
    private let publisher: ProgressPublisher?
    private let queue = DispatchQueue(label: "ProgressTreeTerminal.renderer")

    /// Creates a renderer for the tree below `root`. Nothing is drawn before `start()` (or `drawFrame()`).
    ///
    /// - Parameters:
    ///   - root: the node whose tree is shown, itself as the first line.
    ///   - mode: how to show progress; `auto` by default.
    ///   - layout: what each line shows and how (columns, bar, colours); `TerminalLayout.default` by default.
    ///   - options: how often and how soon it draws, what it keeps on screen, colour (see `Options`).
    ///   - output: where to write; standard error by default. Tests pass an output of their own.
    ///   - clock: the time source for the initial delay, spinners and plain-mode intervals.
    ///   - environment: the variables to honour (`NO_COLOR`, `TERM`, `PROGRESSTREE_FD`); the process
    ///     environment when `nil` (then `PROGRESSTREE_FD` is removed from it once taken).
    public init(
        _ root: ProgressNode,
        mode: Mode = .auto,
        layout: TerminalLayout = .default,
        options: Options = Options(),
        output: any TerminalOutput = FileDescriptorOutput.standardError,
        clock: any ProgressClock = SystemProgressClock(),
        environment: [String: String]? = nil
    ) {
        func variable(_ name: String) -> String? {
            if let environment { return environment[name] }
            return ProcessEnvironment.value(name)
        }
        var resolved: Mode
        let isCapableTerminal = output.isTerminal && variable("TERM") != "dumb"
        if mode == .auto {
            resolved = isCapableTerminal ? .live : .plain
        } else {
            resolved = mode
        }
        // A parent process that mounts this program's tree named a descriptor to publish to: publish there
        // instead of drawing (nothing is drawn, `mode` is `.none`).
        var publisher: ProgressPublisher?
        if mode != .none, let value = variable(ProgressPublisher.environmentVariable) {
            if environment == nil { ProcessEnvironment.unset(ProgressPublisher.environmentVariable) }
            var publisherOptions = ProgressPublisher.Options()
            publisherOptions.publishesOnTimer = options.drawsOnTimer
            publisher = ProgressPublisher.publishing(root, onDescriptorsNamedBy: value, options: publisherOptions)
            if publisher != nil { resolved = .none }
        }
        self.publisher = publisher
        self.drivesTaskbar = options.showsTaskbarProgress && resolved == .live && isCapableTerminal
        self.root = root
        self.mode = resolved
        self.options = options
        self.output = output
        self.clock = clock
        let noColor = !(variable("NO_COLOR") ?? "").isEmpty
        let colors = options.colors ?? (resolved == .live && !noColor)
        self.state = Lock(
            RendererState(
                mirror: TreeMemory(root: root, keptFinishedChildren: options.keptFinishedChildren),
                layout: LiveFrameLayout(layout: layout, colors: colors),
                plain: PlainLogComposer(
                    step: options.plainStep, interval: options.plainInterval, maximumDepth: options.plainLogDepth),
                json: JSONLineComposer(
                    root: root, maximumDepth: options.logDepth ?? .max,
                    maximumNamedChildren: options.loggedChildren ?? Options.jsonLoggedChildren)))
    }

    deinit {
        stopTimerSources()
    }

    // MARK: Running

    /// Starts drawing (from the timer, unless `Options.drawsOnTimer` is `false`); json mode writes the
    /// root's first line at once. Calling it again does nothing.
    public func start() {
        let begin = state.withLock { state -> Bool in
            guard !state.isStarted else { return false }
            state.isStarted = true
            if state.startTime == nil { state.startTime = clock.now }
            return true
        }
        if begin, let publisher { publisher.start() }
        guard begin, mode != .none else { return }
        // The root's first line at once, as a publisher's: its children that fail before the first tick
        // are then named below it (a node is named only below one whose last line is not final).
        if mode == .json { draw(final: false) }
        if mode == .live, let descriptor = output.fileDescriptor {
            SignalRestoration.cursorHidden(on: descriptor)
        }
        guard options.drawsOnTimer else { return }
        let interval = max(1.0 / max(options.framesPerSecond, 0.1), 0.001)
        state.withLock { state in
            // Created and kept under the lock: the sources never leave it.
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
            timer.setEventHandler { [weak self] in self?.drawFrame() }
            timer.resume()
            state.timer = timer
            if mode == .live {
                let resize = DispatchSource.makeSignalSource(signal: Signals.windowChange, queue: queue)
                // Each frame reads the size anyway: this only redraws at once after a resize.
                resize.setEventHandler { [weak self] in self?.drawFrame() }
                resize.resume()
                state.resizeSource = resize
            }
        }
    }

    /// Stops drawing: draws the final frame (left on screen), restores the cursor, and writes the last
    /// plain or json lines. Calling it again does nothing.
    public func stop() {
        publisher?.finish()
        stopTimerSources()
        draw(final: true)
        if mode == .live { SignalRestoration.cursorRestored() }
    }

    /// Starts the renderer, runs `work`, and stops the renderer when `work` returns or throws.
    public func run<Result>(
        isolation: isolated (any Actor)? = #isolation, _ work: () async throws -> Result
    ) async rethrows -> Result {
        start()
        defer { stop() }
        return try await work()
    }

    /// Prints `message` above the live area (or as lines, in plain mode), so messages and progress do not
    /// mix. Before the first live frame (during `Options.initialDelay`) and after `stop()`, it is written
    /// below what is on screen: there is no live area to keep below it. While publishing to a parent
    /// process (`isPublishing`), it is written to the output as lines, where that parent reads them and
    /// shows them in turn. Ignored in json and none modes otherwise.
    ///
    /// The message may come from outside (a file name): it is split into lines at its line breaks (one
    /// final line break is dropped), and other control characters are shown as spaces, so it never moves
    /// the cursor, changes colours or breaks the live area.
    public func print(_ message: String) {
        if write(Self.printableLines(message)) { draw(final: false) }
    }

    /// Prints a line that a program mounted with `mountProcess` wrote, prefixed with the mount's name,
    /// as `print(_:)` does: `[worker 2] no date in IMG_0007.jpg`. Pass it as the mount's output handler:
    ///
    /// ```swift
    /// let worker = try album.mountProcess(path: tool, pendingUnitCount: 4, name: "worker 2",
    ///                                     outputLines: renderer.print)
    /// ```
    ///
    /// In live mode the line is drawn above the live area with the next frame (a program that prints a
    /// lot costs one frame per frame interval, not one per line).
    public func print(_ line: ProgressMount.OutputLine) {
        _ = write(Self.printableLines("[\(line.mountName)] " + line.text))
    }

    /// Writes printed `lines` as the mode says; `true` when they wait for a frame to draw them above the
    /// live area.
    private func write(_ lines: [String]) -> Bool {
        switch mode {
        case .live:
            return state.withLock { state in
                // Written under the lock, so a frame never starts between the check and the write.
                guard state.live.hasDrawn, !state.isStopped else {
                    output.write(lines.map { $0 + "\n" }.joined())
                    return false
                }
                state.printed.append(contentsOf: lines)
                return true
            }
        case .plain:
            state.withLock { _ in output.write(lines.map { $0 + "\n" }.joined()) }
        case .none where isPublishing:
            state.withLock { _ in output.write(lines.map { $0 + "\n" }.joined()) }
        case .auto, .json, .none:
            break
        }
        return false
    }

    /// Shows the summary of your own property (`ProgressProperty`) over the tree on the root's line, after
    /// its label, in the words `text` gives it: one line of code.
    ///
    /// ```swift
    /// renderer.show(PhotosSkipped.self) { $0 == 0 ? nil : "\($0) skipped" }
    /// // • Importing 12 photos · 2 skipped  ████████▎░░░░░░░  52% 6 of 12  3.7 MB/s  5s
    /// ```
    ///
    /// Live mode shows it in the label column, after the name and before a count of failures ("Importing
    /// 12 photos · 2 skipped · 1 failed"). It comes after the name's readable part
    /// (`TerminalLayout.minimumLabelWidth`): the name is cut to leave it room when it can keep that part,
    /// and otherwise the summary gives way, whole (a count cut in the middle would say another number), as
    /// the counts do on a narrow terminal. Plain mode adds it to the root's lines after the counts ("[ 50%]
    /// Importing 12 photos: 6 of 12, 2 skipped"). The json mode and a renderer that publishes to a parent process show
    /// nothing: the wire format carries the properties themselves (`Docs/WireFormat.md`).
    ///
    /// `text` returns `nil` (or `""`) to show nothing, for example while the count is 0. Its text is shown
    /// as given, control characters as spaces. Call it once per property, before `start()` or at any time
    /// after (from the next frame on); summaries shown together are separated by " · ", in the order given.
    ///
    /// The summary is read from the root when a frame is drawn, under the renderer's lock: `text` and the
    /// property's functions run there (see the thread safety notes of `TerminalRenderer`), so they must not
    /// call the renderer. A frame then costs one `ProgressNode.summary(of:)` of the root per summary shown.
    public func show<Property: ProgressProperty>(
        _ property: Property.Type, _ text: @escaping @Sendable (Property.Summary) -> String?
    ) {
        state.withLock { $0.shownSummaries.append(ShownSummaryOf<Property>(wording: text)) }
    }

    /// `message` as lines without control characters.
    static func printableLines(_ message: String) -> [String] {
        var lines = message.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { LabelSanitizer.sanitized(String($0)) }
    }

    /// Draws one frame now, if anything changed: what the timer does at each tick. Call it yourself when
    /// `Options.drawsOnTimer` is `false` (for example in tests with a manual clock).
    public func drawFrame() {
        publisher?.publishChanges()
        draw(final: false)
    }

    // MARK: Drawing

    /// One frame through the pipeline, under the renderer's lock: capture (`TreeMemory`, `NodeReader`),
    /// layout (`LiveFrameLayout` and `LineFormatter`; plain lines are laid out by their composer), compose
    /// (`LiveFrameComposer`, `TaskbarProgressComposer`, `PlainLogComposer`), write (`output`, and
    /// `SignalRestoration` told what is on screen). Json mode captures and composes in `JSONLineComposer`,
    /// whose `WireTreeWalker` (shared with `ProgressPublisher`) decides which nodes get a line.
    private func draw(final: Bool) {
        state.withLock { state in
            guard !state.isStopped, mode != .none else { return }
            if final { state.isStopped = true }
            let now = clock.now
            let startTime = state.startTime ?? now
            state.startTime = startTime
            let elapsed = now - startTime
            if mode == .json {
                // Capture and compose in one: the composer's `WireTreeWalker` decides which nodes get a line.
                let lines = state.json.lines(ending: final, now: elapsed)
                if !lines.isEmpty { output.write(lines.joined(separator: "\n") + "\n") }
                return
            }
            // Read at every frame (one ioctl), so the width follows the terminal also when frames are
            // drawn by hand and no SIGWINCH source exists.
            let size = output.size() ?? options.fallbackSize
            // Capture. Live frames read only the lines that fit (the rest are counted for "+N more"); logs
            // read only the levels they report. The hint needs a row of its own besides a line of the tree
            // and the cursor's.
            let hint = mode == .live && !final && size.rows > 2 ? options.hint.map(LabelSanitizer.sanitized) : nil
            let capacity = max(1, size.rows - 1 - (hint == nil ? 0 : 1))
            let summaries = state.shownSummaries
            let capture =
                mode == .live
                ? state.mirror.update(rowLimit: capacity, childLimit: capacity, reservesMoreLine: true) {
                    node, depth, _ in
                    NodeReader.content(of: node, depth: depth, summaries: summaries)
                }
                : state.mirror.update(
                    depthLimit: options.plainLogDepth, childLimit: options.plainLoggedChildren,
                    reportsCollapsedChildren: true, reportsDepartedFailures: true
                ) {
                    node, depth, _ in
                    NodeReader.content(of: node, depth: depth, readsProperties: true, summaries: summaries)
                }
            state.tick += 1
            switch mode {
            case .live:
                if !final && !state.live.hasDrawn && elapsed < options.initialDelay { return }
                // Written while no signal handler writes to the terminal, and acted on after
                // (`ScreenOwnership`).
                SignalRestoration.drawing(on: output.fileDescriptor) {
                    let continuations = SignalRestoration.continuations.load(ordering: .relaxed)
                    if continuations != state.continuations {
                        // Back from Ctrl-Z: the shell wrote below the old area, which is now scrollback, and
                        // the handler cleared the taskbar progress.
                        state.continuations = continuations
                        state.live.startOnNewScreen()
                        state.taskbar.forget()
                    }
                    // Layout.
                    let lines = state.layout.lines(
                        for: capture, size: size, capacity: capacity, tick: state.tick, final: final, hint: hint)
                    // Compose and write.
                    let printed = state.printed
                    state.printed = []
                    let taskbar = drivesTaskbar ? state.taskbar.update(root: capture.root, final: final) : ""
                    // The signal handlers clear a taskbar progress that is shown: they learn of one before it
                    // is written, and of its clearing after.
                    let clearsTaskbar = taskbar == ANSI.taskbarProgress(.cleared)
                    if !taskbar.isEmpty, !clearsTaskbar, let descriptor = output.fileDescriptor {
                        SignalRestoration.taskbarProgress(shown: true, on: descriptor)
                    }
                    if let bytes = state.live.compose(lines: lines, printed: printed, size: size, final: final) {
                        output.write(bytes + taskbar)
                        if let descriptor = output.fileDescriptor {
                            SignalRestoration.liveAreaDrawn(
                                lines: final ? 0 : state.live.previousLines.count, transient: hint == nil ? 0 : 1,
                                on: descriptor)
                        }
                    } else if !taskbar.isEmpty {
                        output.write(taskbar)
                    }
                    if clearsTaskbar, let descriptor = output.fileDescriptor {
                        SignalRestoration.taskbarProgress(shown: false, on: descriptor)
                    }
                }
            case .plain:
                var lines = state.plain.lines(for: capture.rows, now: elapsed)
                if final, let root = capture.root, !OutcomeSummary.repeatsRootLine(root),
                    let summary = OutcomeSummary.text(for: root)
                {
                    lines.append(summary)
                }
                if !lines.isEmpty { output.write(lines.joined(separator: "\n") + "\n") }
            case .auto, .json, .none:
                break
            }
        }
    }

    private func stopTimerSources() {
        // `cancel()` does not wait for a running handler, so it is safe under the lock the handler takes.
        state.withLock { state in
            state.timer?.cancel()
            state.resizeSource?.cancel()
            state.timer = nil
            state.resizeSource = nil
        }
    }
}

/// The renderer's mutable state, guarded by its lock: one value per stage of the pipeline.
struct RendererState {
    /// Capture: the tree between frames.
    var mirror: TreeMemory
    /// Layout of live frames (and the column plan they keep).
    var layout: LiveFrameLayout
    /// Compose: the bytes that replace the live area, the taskbar progress, the log lines.
    var live = LiveFrameComposer()
    var taskbar = TaskbarProgressComposer()
    var plain: PlainLogComposer
    var json: JSONLineComposer
    var isStarted = false
    var isStopped = false
    var startTime: Duration?
    var tick = 0
    var printed: [String] = []
    /// The summaries the root's line shows (`show(_:_:)`), in the order they were added.
    var shownSummaries: [any ShownSummary] = []
    /// `SignalRestoration.continuations` when the last live frame was drawn.
    var continuations = SignalRestoration.continuations.load(ordering: .relaxed)
    var timer: (any DispatchSourceTimer)?
    var resizeSource: (any DispatchSourceSignal)?
}

extension TerminalRenderer.Options {
    /// Plain mode's deepest level: `logDepth`, 1 when not set.
    var plainLogDepth: Int { logDepth ?? 1 }
    /// Plain mode's children with lines at a time: `loggedChildren`, 10 when not set.
    var plainLoggedChildren: Int { max(1, loggedChildren ?? 10) }
    /// Json mode's default `loggedChildren`.
    static let jsonLoggedChildren = 32
}
