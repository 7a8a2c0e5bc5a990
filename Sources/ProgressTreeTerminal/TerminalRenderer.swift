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
/// Conventions: writes to standard error by default; `auto` mode is `accessible` when the person said they
/// use a screen reader (`ACCESSIBLE` set to anything but `0`, `false`, `no` or empty), else `live` on a
/// terminal and `plain` otherwise (also when `TERM=dumb`); `NO_COLOR` removes colour only; the width follows the terminal
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
/// lock order above), and may call `print(_:)` (its lines are shown with the next frame) and `drawFrame()`
/// (nothing: a frame is being drawn); any other call of this renderer there (`start`, `stop`, `run`,
/// `show`, `handleInterrupts`) stops the program with a message that names it, and so would waiting there
/// for a thread that is calling the renderer.
///
/// Lifetime: one run. `start()` begins it (again: nothing), `stop()` ends it with the final frame (again:
/// nothing); `stop()` on a renderer that never started nor drew a frame writes nothing; `start()` after
/// `stop()` is a programming error (a precondition failure that says so): make a new renderer.
public final class TerminalRenderer: Sendable {
    /// How progress is shown.
    public enum Mode: String, Sendable, CaseIterable {
        /// `accessible` when the environment says the person uses a screen reader (`ACCESSIBLE` set to
        /// anything but `0`, `false`, `no` or empty); otherwise `live` on an interactive terminal (and
        /// `TERM` is not `dumb`), `plain` otherwise.
        case auto
        /// Bars redrawn in place.
        case live
        /// Lines for logs: when a node starts, finishes, is cancelled or paused, and every 10% or few
        /// seconds in between. No escape codes.
        case plain
        /// Sentences for a person who listens through a screen reader: no cursor movement, no redraw, no
        /// glyph or colour that carries meaning. A start sentence; then a sentence when the root crosses
        /// another quarter (`Options.accessibleStep`) or, if it moved, every `Options.accessibleInterval`
        /// (10 s), naming what changed ("Importing 12 photos: 50 percent, 6 of 12, about 20 seconds
        /// left."); a sentence when it is paused or resumed; every failure with its reason ("IMG_0007.jpg
        /// failed: connection reset."); the outcome last ("Importing 12 photos finished: 12 of 12, 2
        /// failed."). Printed messages and log records are lines of their own, as in plain mode.
        case accessible
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
        /// Accessible mode: a progress sentence each time the root crosses another such fraction (a quarter).
        public var accessibleStep = 0.25
        /// Accessible mode: a progress sentence when this much time passed since the last sentence about the
        /// root, if it moved (an indeterminate root: "still working after …", each time).
        public var accessibleInterval: Duration = .seconds(10)
        /// Plain, accessible and json modes: the deepest level reported (0 = the root only); the nodes below
        /// it are only counted, in their ancestors' lines (`failedBelow`, `cancelledBelow`, the counts).
        /// `nil` (the default): each mode's own, 1 in plain mode (the root and its children), the whole tree
        /// in accessible mode (whose failures it names: it says nothing else of nodes below the root) and
        /// in json mode (a program reading it wants every node; a frame writes only the lines that
        /// changed).
        public var logDepth: Int? = nil
        /// Plain, accessible and json modes: how many children of one node have lines at a time, the first of its
        /// unfinished children in the order they were added. The next ones get lines as those finish; a
        /// child that finishes before its turn gets none and is counted in its parent's line (its units,
        /// its files), one that fails still gets its line with the reason. So a frame and `stop()` cost
        /// the same at 100,000 children as at 100, and the log stays readable. `nil` (the default): each
        /// mode's own, 10 in plain and accessible modes, 32 in json mode. At least 1.
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
        /// frame leaves it out, so it does not stay on screen after the program ends (nor when a signal
        /// ends the program, see `Docs/Terminal.md`).
        public var hint: String?
        /// Live mode: the hint while the root is paused, whose keys differ ("r resume" rather than "p
        /// pause"); `nil` shows `hint` then too.
        public var pausedHint: String?

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
    /// The thread drawing under `state`'s lock, or 0: a call of the renderer from code it runs while it
    /// draws is told apart from a call by another thread (which waits for the lock).
    private let drawingThread = Atomic<UInt>(0)
    /// Lines printed from code the renderer runs while it draws (its lock is held): shown with the next
    /// frame, or written after the final one.
    private let printedWhileDrawing = Lock<[String]>([])
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
    ///   - environment: the variables to honour (`ACCESSIBLE`, `NO_COLOR`, `TERM`, `PROGRESSTREE_FD`); the
    ///     process environment when `nil` (then `PROGRESSTREE_FD` is removed from it once taken).
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
            resolved =
                Self.screenReaderRequested(variable(Self.accessibleVariable))
                ? .accessible : isCapableTerminal ? .live : .plain
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
                accessible: AccessibleLineComposer(step: options.accessibleStep, interval: options.accessibleInterval),
                json: JSONLineComposer(
                    root: root, maximumDepth: options.logDepth ?? .max,
                    maximumNamedChildren: options.loggedChildren ?? Options.jsonLoggedChildren)))
    }

    deinit {
        stopTimerSources()
    }

    // MARK: Running

    /// Starts drawing (from the timer, unless `Options.drawsOnTimer` is `false`); json mode writes the
    /// root's first line at once, and accessible mode its start sentence. Calling it again does nothing.
    ///
    /// - Precondition: `stop()` was not called: a renderer shows one run of its tree (make a new one for
    ///   another).
    public func start() {
        preconditionNotDrawing("start()")
        let begin = locked { state -> Bool in
            precondition(
                !state.isStopped,
                "TerminalRenderer.start(): called after stop(); a renderer shows one run of its tree, so "
                    + "make a new TerminalRenderer for another")
            guard !state.isStarted else { return false }
            state.isStarted = true
            if state.startTime == nil { state.startTime = clock.now }
            return true
        }
        if begin, let publisher { publisher.start() }
        guard begin, mode != .none else { return }
        // The root's first line at once, as a publisher's: its children that fail before the first tick
        // are then named below it (a node is named only below one whose last line is not final). The
        // start sentence at once, too: the person hears that the work began.
        if mode == .json || mode == .accessible { draw(final: false) }
        if mode == .live, let descriptor = output.fileDescriptor {
            SignalRestoration.cursorHidden(on: descriptor)
        }
        guard options.drawsOnTimer else { return }
        let interval = max(1.0 / max(options.framesPerSecond, 0.1), 0.001)
        locked { state in
            // Created and kept under the lock: the sources never leave it.
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
            timer.setEventHandler { [weak self] in self?.timerTick() }
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
    /// plain lines, sentences or json lines, and the lines printed that waited for a frame. Calling it
    /// again does nothing, and so does calling it on a renderer that neither started nor drew a frame
    /// (`drawFrame()`): there is nothing to end.
    public func stop() {
        preconditionNotDrawing("stop()")
        publisher?.finish()
        stopTimerSources()
        let hasRun = locked { state -> Bool in
            guard !state.isStarted, !state.hasDrawn else { return true }
            state.isStopped = true
            return false
        }
        guard hasRun else { return }
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

    /// Handles Ctrl-C, `SIGTERM` and `SIGHUP` for this program, as `TerminalInterrupts` describes: the
    /// first Ctrl-C cancels the root, and the program ends its work (and calls `exitIfInterrupted()` on the
    /// value returned, which exits with 130); a second Ctrl-C, `SIGTERM` or `SIGHUP` runs `cleanUp`, stops
    /// this renderer (the final frame, the cursor shown, the terminal mode of a `TerminalKeyReader`
    /// restored) and exits at once with 130, 143 or 129. While it is installed, a write to a pipe whose
    /// reader is gone fails instead of ending the program with status 141 (`program 2>&1 | cat`
    /// interrupted still ends with 130).
    ///
    /// ```swift
    /// let renderer = TerminalRenderer(album)
    /// let interrupts = renderer.handleInterrupts { partialFile.remove() }
    /// try await renderer.run { try await importPhotos(into: album) }
    /// print(album.isCancelled ? "Cancelled." : "Imported.")
    /// interrupts.exitIfInterrupted()
    /// ```
    ///
    /// The renderer keeps the handling until the process ends or `TerminalInterrupts.stop()` is called; a
    /// later call replaces it.
    @discardableResult
    public func handleInterrupts(cleanUp: @escaping @Sendable () -> Void = {}) -> TerminalInterrupts {
        preconditionNotDrawing("handleInterrupts(cleanUp:)")
        let root = self.root
        let interrupts = TerminalInterrupts(
            onInterrupt: { root.cancel() },
            cleanUp: { [weak self] in
                cleanUp()
                self?.stop()
            })
        locked { $0.interrupts = interrupts }
        return interrupts
    }

    /// Prints `message` above the live area (or as lines, in plain and accessible modes), so messages and
    /// progress do not mix. Before the first live frame (during `Options.initialDelay`) and after `stop()`,
    /// it is written below what is on screen: there is no live area to keep below it. While publishing to
    /// a parent process (`isPublishing`), it is written to the output as lines, where that parent reads
    /// them and shows them in turn. Ignored in json and none modes otherwise.
    ///
    /// In live mode the message is drawn at once when no frame was drawn within the last frame interval
    /// (`1 / Options.framesPerSecond`), and otherwise with the timer's next frame, with every message
    /// printed meanwhile: a program that prints hundreds of lines a second costs no more frames than the
    /// frame rate, and each line waits at most about one interval (`stop()` writes those still waiting).
    /// Without the timer (`Options.drawsOnTimer` is `false`), nothing else would draw them: the message is
    /// drawn at once.
    ///
    /// The message may come from outside (a file name): it is split into lines at its line breaks (one
    /// final line break is dropped), and other control characters are shown as spaces, so it never moves
    /// the cursor, changes colours or breaks the live area.
    public func print(_ message: String) {
        printLines(Self.printableLines(message))
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
        printLines(Self.printableLines("[\(line.mountName)] " + line.text), drawsWhenDue: false)
    }

    /// Prints `lines` as the mode says; with `drawsWhenDue`, draws a frame now when one is due (see
    /// `write`).
    private func printLines(_ lines: [String], drawsWhenDue: Bool = true) {
        if isDrawingOnThisThread {
            // From code the renderer runs while it draws: the lock is ours already.
            printedWhileDrawing.withLock { $0.append(contentsOf: lines) }
            return
        }
        if write(lines), drawsWhenDue { draw(final: false) }
    }

    /// Writes printed `lines` as the mode says; `true` when they wait for a frame to draw them above the
    /// live area, and that frame is due now (none was drawn within the frame interval).
    private func write(_ lines: [String]) -> Bool {
        switch mode {
        case .live:
            return locked { state in
                // Written under the lock, so a frame never starts between the check and the write.
                guard state.live.hasDrawn, !state.isStopped else {
                    output.write(lines.map { $0 + "\n" }.joined())
                    return false
                }
                state.printed.append(contentsOf: lines)
                // Without the timer, no frame would come for them: drawn now.
                guard options.drawsOnTimer, let last = state.lastFrameTime else { return true }
                return clock.now - last >= options.frameInterval
            }
        case .plain, .accessible:
            locked { _ in output.write(lines.map { $0 + "\n" }.joined()) }
        case .none where isPublishing:
            locked { _ in output.write(lines.map { $0 + "\n" }.joined()) }
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
    /// Importing 12 photos: 6 of 12, 2 skipped"), and to each other line the words of that node's own
    /// summary (its subtree's), in place of the property's `name=value` when the property crosses the wire:
    /// one property, one spelling. Accessible mode says it in the root's sentences. The json mode and a
    /// renderer that publishes to a parent process show nothing: the wire format carries the properties
    /// themselves (`Docs/WireFormat.md`).
    ///
    /// `text` returns `nil` (or `""`) to show nothing, for example while the count is 0. Its text is shown
    /// as given, control characters as spaces. Call it once per property, before `start()` or at any time
    /// after (from the next frame on); summaries shown together are separated by " · ", in the order given.
    ///
    /// The summary is read when a frame is drawn, under the renderer's lock: `text` and the property's
    /// functions run there (see the thread safety notes of `TerminalRenderer`). A frame then costs one
    /// `ProgressNode.summary(of:)` of the root per summary shown (plain mode: of each node it writes a line
    /// for).
    public func show<Property: ProgressProperty>(
        _ property: Property.Type, _ text: @escaping @Sendable (Property.Summary) -> String?
    ) {
        preconditionNotDrawing("show(_:_:)")
        locked { $0.shownSummaries.append(ShownSummaryOf<Property>(wording: text)) }
    }

    /// What the renderer left out of what it wrote so far.
    public struct Diagnostics: Sendable, Equatable {
        /// Values of `WireProgressProperty` properties that could not be written: a value that is not
        /// `ProgressWireValue.isCrossable` (a number that is not finite, an integer beyond ±(2^53 − 1)), or a
        /// property with an empty `wireName`. Counted once for each line written without it (json and plain
        /// modes; plain lines say so: "1 property value left out"); while publishing to a parent process,
        /// the publisher's count (`ProgressPublisher.Diagnostics`).
        public var skippedProperties = 0

        /// Nothing left out.
        public init() {}
    }

    /// What the renderer left out of what it wrote so far (see `Diagnostics`).
    public var diagnostics: Diagnostics {
        if let publisher {
            var diagnostics = Diagnostics()
            diagnostics.skippedProperties = publisher.diagnostics.skippedProperties
            return diagnostics
        }
        preconditionNotDrawing("diagnostics")
        return locked { $0.diagnostics }
    }

    /// `message` as lines without control characters.
    static func printableLines(_ message: String) -> [String] {
        var lines = message.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { LabelSanitizer.sanitized(String($0)) }
    }

    /// Draws one frame now, if anything changed: what the timer does at each tick. Call it yourself when
    /// `Options.drawsOnTimer` is `false` (for example in tests with a manual clock). Called from code the
    /// renderer runs while it draws, it does nothing: a frame is being drawn.
    public func drawFrame() {
        guard !isDrawingOnThisThread else { return }
        publisher?.publishChanges()
        draw(final: false)
    }

    /// The timer's tick: a frame, unless one was written less than half a frame interval ago (printed lines
    /// drew it, just before a tick that came late): frames stay one per interval.
    func timerTick() {
        let recent = locked { state -> Bool in
            guard let last = state.lastFrameTime else { return false }
            return clock.now - last < options.frameInterval / 2
        }
        if !recent { drawFrame() }
    }

    // MARK: The renderer's lock

    /// Runs `body` under the renderer's lock, recording the thread that holds it.
    private func locked<Result>(_ body: (inout sending RendererState) -> sending Result) -> sending Result {
        state.withLock { state in
            // Releasing and acquiring: a thread reads its own identifier only while it holds the lock (a
            // thread that held it before cleared it before unlocking).
            drawingThread.store(CurrentThread.identifier, ordering: .releasing)
            defer { drawingThread.store(0, ordering: .releasing) }
            return body(&state)
        }
    }

    /// Whether this thread holds the renderer's lock: the caller is code the renderer runs while it draws.
    private var isDrawingOnThisThread: Bool {
        drawingThread.load(ordering: .acquiring) == CurrentThread.identifier
    }

    /// Stops the program with a message naming `call` when it comes from code the renderer runs while it
    /// draws: its lock is not recursive, and `Mutex` would trap with a message that names neither.
    private func preconditionNotDrawing(_ call: String, file: StaticString = #fileID, line: UInt = #line) {
        precondition(
            !isDrawingOnThisThread,
            "TerminalRenderer.\(call): called while this renderer draws, from code it runs then (the words "
                + "given to show(_:_:), its TerminalOutput or ProgressClock, or the deinit of what a finished "
                + "node held); call it from elsewhere (print(_:) and drawFrame() may be called there)",
            file: file, line: line)
    }

    // MARK: Drawing

    /// One frame through the pipeline, under the renderer's lock: capture (`TreeMemory`, `NodeReader`),
    /// layout (`LiveFrameLayout` and `LineFormatter`; plain lines and sentences are laid out by their
    /// composers), compose (`LiveFrameComposer`, `TaskbarProgressComposer`, `PlainLogComposer`,
    /// `AccessibleLineComposer`), write (`output`, and `SignalRestoration` told what is on screen). Json mode
    /// captures and composes in `JSONLineComposer`, whose `WireTreeWalker` (shared with `ProgressPublisher`)
    /// decides which nodes get a line.
    private func draw(final: Bool) {
        locked { state in
            guard !state.isStopped, mode != .none else { return }
            if final { state.isStopped = true }
            state.hasDrawn = true
            drawLocked(&state, final: final)
            // Lines printed by code the frame ran: with the next frame, or, after the final one, below it.
            let late = printedWhileDrawing.withLock { lines in
                defer { lines = [] }
                return lines
            }
            guard !late.isEmpty else { return }
            if mode == .live && !final && state.live.hasDrawn {
                state.printed.append(contentsOf: late)
            } else if mode != .json {
                output.write(late.map { $0 + "\n" }.joined())
            }
        }
    }

    private func drawLocked(_ state: inout sending RendererState, final: Bool) {
        let now = clock.now
        let startTime = state.startTime ?? now
        state.startTime = startTime
        let elapsed = now - startTime
        if mode == .json {
            // Capture and compose in one: the composer's `WireTreeWalker` decides which nodes get a line.
            let (lines, skipped) = state.json.lines(ending: final, now: elapsed)
            state.diagnostics.skippedProperties += skipped
            if !lines.isEmpty { output.write(lines.joined(separator: "\n") + "\n") }
            return
        }
        // Read at every frame (one ioctl), so the width follows the terminal also when frames are
        // drawn by hand and no SIGWINCH source exists.
        let size = output.size() ?? options.fallbackSize
        // Capture. Live frames read only the lines that fit (the rest are counted for "+N more"); logs
        // read only the levels they report. The hint needs a row of its own besides a line of the tree
        // and the cursor's.
        let summaries = state.shownSummaries
        let capture: TreeMemory.Capture
        // Live: the rows that fit, less the hint's row while a hint may show.
        let hasHint = !final && size.rows > 2 && (options.hint != nil || options.pausedHint != nil)
        let capacity = max(1, size.rows - 1 - (hasHint ? 1 : 0))
        switch mode {
        case .live:
            capture = state.mirror.update(rowLimit: capacity, childLimit: capacity, reservesMoreLine: true) {
                node, depth, _ in
                NodeReader.content(of: node, depth: depth, summaries: summaries)
            }
        case .accessible:
            capture = state.mirror.update(
                depthLimit: options.logDepth ?? .max, childLimit: options.plainLoggedChildren,
                reportsCollapsedChildren: true, reportsDepartedFailures: true
            ) { node, depth, _ in
                NodeReader.content(of: node, depth: depth, summaries: summaries)
            }
        default:
            capture = state.mirror.update(
                depthLimit: options.plainLogDepth, childLimit: options.plainLoggedChildren,
                reportsCollapsedChildren: true, reportsDepartedFailures: true
            ) { node, depth, _ in
                NodeReader.content(
                    of: node, depth: depth, readsProperties: true, summaries: summaries, summariesAtEveryDepth: true)
            }
        }
        state.tick += 1
        switch mode {
        case .live:
            drawLive(&state, capture: capture, size: size, capacity: capacity, now: now, elapsed: elapsed, final: final)
        case .plain:
            let worded = Set(summaries.compactMap(\.wireName))
            var lines = state.plain.lines(for: capture.rows, now: elapsed, wordedProperties: worded)
            state.diagnostics.skippedProperties += lines.skippedProperties
            if final, let root = capture.root, !OutcomeSummary.repeatsRootLine(root),
                let summary = OutcomeSummary.text(for: root)
            {
                lines.lines.append(summary)
            }
            if !lines.lines.isEmpty { output.write(lines.lines.joined(separator: "\n") + "\n") }
        case .accessible:
            let lines = state.accessible.lines(for: capture.rows, root: capture.root, now: elapsed, final: final)
            if !lines.isEmpty { output.write(lines.joined(separator: "\n") + "\n") }
        case .auto, .json, .none:
            break
        }
    }

    private func drawLive(
        _ state: inout sending RendererState, capture: TreeMemory.Capture, size: TerminalSize, capacity: Int,
        now: Duration,
        elapsed: Duration, final: Bool
    ) {
        if !final && !state.live.hasDrawn && elapsed < options.initialDelay { return }
        let paused = capture.root?.status == .paused
        let hintText = !final && size.rows > 2 ? (paused ? options.pausedHint ?? options.hint : options.hint) : nil
        let hint = hintText.map(LabelSanitizer.sanitized)
        // Written while no signal handler writes to the terminal, and acted on after (`ScreenOwnership`).
        SignalRestoration.drawing(on: output.fileDescriptor) {
            let continuations = SignalRestoration.continuations.load(ordering: .relaxed)
            if continuations != state.continuations {
                // Back from Ctrl-Z: the shell wrote below the old area, which is now scrollback, and the
                // handler cleared the taskbar progress.
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
            // The signal handlers clear a taskbar progress that is shown: they learn of one before it is
            // written, and of its clearing after.
            let clearsTaskbar = taskbar == ANSI.taskbarProgress(.cleared)
            if !taskbar.isEmpty, !clearsTaskbar, let descriptor = output.fileDescriptor {
                SignalRestoration.taskbarProgress(shown: true, on: descriptor)
            }
            if let bytes = state.live.compose(lines: lines, printed: printed, size: size, final: final) {
                output.write(bytes + taskbar)
                state.lastFrameTime = now
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
    }

    private func stopTimerSources() {
        // `cancel()` does not wait for a running handler, so it is safe under the lock the handler takes.
        locked { state in
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
    var accessible: AccessibleLineComposer
    var json: JSONLineComposer
    var isStarted = false
    var isStopped = false
    /// Whether a frame was drawn (started, or `drawFrame()`): `stop()` then has a final frame to draw.
    var hasDrawn = false
    var startTime: Duration?
    /// When the last live frame was written (the renderer's clock): printed lines wait for a frame when
    /// one was written less than a frame interval ago.
    var lastFrameTime: Duration?
    var tick = 0
    var printed: [String] = []
    var diagnostics = TerminalRenderer.Diagnostics()
    /// The signal handling `handleInterrupts` installed, kept while the renderer lives.
    var interrupts: TerminalInterrupts?
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
    /// The time between two frames of the timer: `1 / framesPerSecond`, at least 1 ms.
    var frameInterval: Duration {
        .nanoseconds(Int64((max(1.0 / max(framesPerSecond, 0.1), 0.001) * 1e9).rounded()))
    }
}

extension TerminalRenderer {
    /// Whether the environment asks for accessible mode: `ACCESSIBLE` set to anything but `0`, `false`,
    /// `no` (in any case) or empty, the convention of command-line tools (a screen reader cannot be
    /// detected, so the person says so). `auto` mode follows it; a program that writes its own progress
    /// without a renderer can follow it too.
    ///
    /// - Parameter environment: the variables to read; the process environment when `nil`.
    public static func isAccessibleModeRequested(environment: [String: String]? = nil) -> Bool {
        screenReaderRequested(
            environment.map { $0[accessibleVariable] } ?? ProcessEnvironment.value(accessibleVariable))
    }

    /// The variable in which a person says they use a screen reader (`auto` mode is then `accessible`), as
    /// clack and other command-line tools read it: a screen reader cannot be detected.
    static let accessibleVariable = "ACCESSIBLE"

    /// Whether `value` of `ACCESSIBLE` asks for accessible mode: set to anything but `0`, `false`, `no`
    /// (in any case) or empty.
    static func screenReaderRequested(_ value: String?) -> Bool {
        guard let value else { return false }
        let word = value.trimmingSpaces.lowercased()
        return !["", "0", "false", "no"].contains(word)
    }
}

extension String {
    /// The text without the spaces (and tabs, line breaks) around it.
    fileprivate var trimmingSpaces: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
