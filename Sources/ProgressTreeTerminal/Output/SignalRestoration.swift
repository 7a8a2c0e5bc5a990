import ProgressTree
import ProgressTreePlatform
import Synchronization

/// Gives the terminal back in a usable state when a signal ends or stops the process while a live
/// renderer (or `TerminalCursor`) has hidden the cursor, or `TerminalKeyReader` has changed the terminal's
/// mode.
///
/// - `SIGINT` (Ctrl-C), `SIGTERM`, `SIGHUP`: erase the hint under the live tree (`Options.hint`: its keys
///   no longer work), show the cursor, clear the taskbar progress (`OSC 9;4`) if a renderer set it,
///   restore the mode, then let the signal take its default action (the shell reports 130, 143, 129).
/// - `SIGTSTP` (Ctrl-Z): erase the live area (the shell writes where it was), show the cursor, clear the
///   taskbar progress, restore the mode, then stop. On `SIGCONT` (`fg`) after such a stop: key mode again
///   (only in the foreground: a background process may not change the terminal), the cursor hidden again,
///   and `continuations` counts one more, so a live renderer draws its area anew below what the shell
///   printed meanwhile.
///
/// A handler never writes while a renderer writes a frame (`ScreenOwnership`): a signal that arrives then
/// waits for the frame to be written and recorded, and the renderer acts on it (`endDrawing`). Otherwise
/// the handler would erase the lines it last heard of while the frame on screen differs (lines printed
/// above it lost), and the frame would go on moving up over what the shell printed while the process was
/// stopped.
///
/// The handlers leave `errno` as they found it, and are async-signal-safe: they read and write atomics and
/// call `write(2)`, `tcsetattr(2)`, `tcgetpgrp(2)`, `getpgrp(2)`, `signal(2)`, `sigprocmask(2)` and
/// `raise(2)` (through `Platform`).
/// Handlers are installed only for signals whose disposition is the default, so a program that handles
/// SIGINT itself (`TerminalInterrupts`, or its own handling) keeps it and stops the renderer itself.
///
/// Memory ordering. A handler runs on whichever thread the kernel picks, between any two instructions,
/// and knows what is on the terminal only from these atomics. What it must agree with is the order of the
/// renderer's stores and the renderer's `write(2)` calls to the terminal (and `raise(SIGSTOP)`), which no
/// acquire/release pairing can express: a system call is not a memory operation. So the stores that must
/// be visible to every thread before the next bytes reach the terminal are sequentially consistent, whose
/// full barrier makes each visible before the system call after it starts: the descriptor whose cursor is
/// hidden (`cursorHidden`, and -1 in `cursorRestored`), a taskbar progress about to be shown, the lines of
/// the live area just written, the screen's owner, and `isSuspended` before the process stops. These are
/// load-bearing. Every other access is relaxed: the handlers' `exchange`s are read-modify-writes, which
/// read the latest value whatever their ordering and let exactly one handler act; the handlers' loads
/// read values those barriers already made visible, and no ordering could tie a load to the moment a
/// signal arrives; the renderer's loads of `hiddenCursorDescriptor` read what its own `start()` stored;
/// `cursorRestored`'s other stores are guarded by the descriptor, so any mix of old and new values is
/// harmless; and `continuations` is a counter compared for change that publishes no other memory (what
/// the handler did to the terminal is I/O).
enum SignalRestoration {
    /// The descriptor whose cursor is hidden, or -1.
    private static let hiddenCursorDescriptor = Atomic<Int32>(-1)
    /// Set by the `SIGTSTP` handler, cleared by the `SIGCONT` handler that follows.
    private static let isSuspended = Atomic<Bool>(false)
    /// How many times the process continued after a stop by `SIGTSTP`.
    static let continuations = Atomic<Int>(0)
    /// The lines of the live area on the hidden cursor's terminal, above the cursor; 0 when there is none
    /// (before the first frame, and after the final one, which stays on screen).
    private static let liveAreaLines = Atomic<Int>(0)
    /// The lines at the bottom of the live area that only mean something while the program runs (the
    /// hint with its keys): erased when a signal ends the process.
    private static let transientLines = Atomic<Int>(0)
    /// Whether a renderer or a handler writes to the hidden cursor's terminal now.
    private static let screen = ScreenOwnership()
    /// Whether the hidden cursor's terminal shows a taskbar progress (`OSC 9;4`) that a renderer set: true
    /// from before such a sequence is written until after the one that clears it.
    private static let taskbarProgressShown = Atomic<Bool>(false)
    private static let installed = Lock<Set<Int32>>([])

    static func cursorHidden(on descriptor: Int32) {
        hiddenCursorDescriptor.store(descriptor, ordering: .sequentiallyConsistent)
        installHandlers()
    }

    static func cursorRestored() {
        hiddenCursorDescriptor.store(-1, ordering: .sequentiallyConsistent)
        liveAreaLines.store(0, ordering: .relaxed)
        transientLines.store(0, ordering: .relaxed)
        taskbarProgressShown.store(false, ordering: .relaxed)
    }

    /// A renderer is about to write a taskbar progress that shows something (`shown`), or has written the
    /// one that clears it, on `descriptor`.
    static func taskbarProgress(shown: Bool, on descriptor: Int32) {
        guard descriptor == hiddenCursorDescriptor.load(ordering: .relaxed) else { return }
        taskbarProgressShown.store(shown, ordering: .sequentiallyConsistent)
    }

    /// Writes `OSC 9;4;0;0` (cleared) if a renderer's taskbar progress is shown. Async-signal-safe.
    private static func clearTaskbarProgress(on descriptor: Int32) {
        guard taskbarProgressShown.exchange(false, ordering: .relaxed) else { return }
        let sequence: StaticString = "\u{1B}]9;4;0;0\u{07}"
        FileDescriptor.writeAll(
            descriptor, UnsafeRawBufferPointer(start: sequence.utf8Start, count: sequence.utf8CodeUnitCount))
    }

    /// A live frame of `lines` lines was written on `descriptor`, the last `transient` of them a hint; the
    /// cursor rests below it.
    static func liveAreaDrawn(lines: Int, transient: Int = 0, on descriptor: Int32) {
        guard descriptor == hiddenCursorDescriptor.load(ordering: .relaxed) else { return }
        transientLines.store(min(transient, lines), ordering: .sequentiallyConsistent)
        liveAreaLines.store(lines, ordering: .sequentiallyConsistent)
    }

    /// Runs `draw`, which writes a frame to `descriptor` and records it, while no handler writes there (see
    /// `ScreenOwnership`); then acts on a signal that arrived meanwhile (the process may stop in this call,
    /// and return when continued, or end). Outputs other than the hidden cursor's terminal just draw.
    static func drawing<Result>(on descriptor: Int32?, _ draw: () -> Result) -> Result {
        guard let descriptor, descriptor == hiddenCursorDescriptor.load(ordering: .relaxed) else { return draw() }
        while !screen.tryBeginDrawing() { CurrentThread.yield() }
        let result = draw()
        if let signalNumber = screen.endDrawing() {
            act(on: signalNumber)
            screen.endHandling()
        }
        return result
    }

    /// Before the process exits on a signal that ordinary code handled (`TerminalInterrupts`): what the
    /// termination handlers do, without the signal's default action (the caller exits).
    static func restoreBeforeExit() {
        while !screen.tryBeginDrawing() { CurrentThread.yield() }
        restoreBeforeTermination()
        if let signalNumber = screen.endDrawing() {
            act(on: signalNumber)
            screen.endHandling()
        }
    }

    /// Moves up over the live area and clears to the end of the screen. Async-signal-safe.
    private static func clearLiveArea(on descriptor: Int32) {
        let lines = liveAreaLines.exchange(0, ordering: .relaxed)
        transientLines.store(0, ordering: .relaxed)
        clearLines(lines, on: descriptor)
    }

    /// Moves up over the hint at the bottom of the live area and clears to the end of the screen: the
    /// tree stays. Returns whether there was one. Async-signal-safe.
    private static func clearTransientLines(on descriptor: Int32) -> Bool {
        let lines = transientLines.exchange(0, ordering: .relaxed)
        guard lines > 0 else { return false }
        liveAreaLines.store(0, ordering: .relaxed)
        clearLines(lines, on: descriptor)
        return true
    }

    /// Moves up `lines` lines and clears to the end of the screen, with `write(2)` only: the number is
    /// written digit by digit. Async-signal-safe.
    private static func clearLines(_ lines: Int, on descriptor: Int32) {
        guard lines > 0 else { return }
        let start: StaticString = "\r\u{1B}["
        let end: StaticString = "A\u{1B}[J"
        let digits: StaticString = "0123456789"
        FileDescriptor.writeAll(
            descriptor, UnsafeRawBufferPointer(start: start.utf8Start, count: start.utf8CodeUnitCount))
        var divisor = 1
        while divisor <= lines / 10 { divisor *= 10 }
        while divisor > 0 {
            let digit = (lines / divisor) % 10
            FileDescriptor.writeAll(descriptor, UnsafeRawBufferPointer(start: digits.utf8Start + digit, count: 1))
            divisor /= 10
        }
        FileDescriptor.writeAll(descriptor, UnsafeRawBufferPointer(start: end.utf8Start, count: end.utf8CodeUnitCount))
    }

    /// Installs the handlers, each where its signal's disposition is the default.
    static func installHandlers() {
        installed.withLock { installed in
            let handlers: [(Int32, Signals.Handler)] = [
                (Signals.interrupt, restoreAndReraise),
                (Signals.terminate, restoreAndReraise),
                (Signals.hangUp, restoreAndReraise),
                (Signals.terminalStop, restoreAndStop),
                (Signals.continueIfStopped, continueAfterStop),
            ]
            for (signalNumber, handler) in handlers where !installed.contains(signalNumber) {
                if Signals.setHandlerIfDefault(signalNumber, handler) { installed.insert(signalNumber) }
            }
        }
    }

    private static func showCursor() {
        let descriptor = hiddenCursorDescriptor.load(ordering: .relaxed)
        guard descriptor >= 0 else { return }
        let sequence: StaticString = "\u{1B}[?2026l\u{1B}[0m\u{1B}[?25h"
        FileDescriptor.writeAll(
            descriptor, UnsafeRawBufferPointer(start: sequence.utf8Start, count: sequence.utf8CodeUnitCount))
    }

    /// A handler's signal: acted on now, or left to the renderer writing a frame (`ScreenOwnership`).
    /// Async-signal-safe.
    fileprivate static func handle(_ signalNumber: Int32) {
        switch screen.signalArrived(signalNumber) {
        case .deferred:
            return
        case .actForced:
            act(on: signalNumber)
        case .actOwning:
            act(on: signalNumber)  // returns after a stop, when the process continues
            screen.endHandling()
        }
    }

    /// What the handler of `signalNumber` does: stop (Ctrl-Z), or end the process. Async-signal-safe.
    private static func act(on signalNumber: Int32) {
        if signalNumber == Signals.terminalStop {
            stop(signalNumber)
        } else {
            restoreBeforeTermination()
            Signals.takeDefaultAction(signalNumber)
        }
    }

    /// What the `SIGINT`, `SIGTERM` and `SIGHUP` handlers do before the signal's default action: the hint
    /// under the live tree erased (or a line break after the tree), the cursor shown, the taskbar progress
    /// cleared, the terminal's mode restored. Async-signal-safe.
    static func restoreBeforeTermination() {
        let descriptor = hiddenCursorDescriptor.load(ordering: .relaxed)
        let erasedHint = descriptor >= 0 && clearTransientLines(on: descriptor)
        showCursor()
        if descriptor >= 0 {
            if !erasedHint {
                let newline: StaticString = "\n"
                FileDescriptor.writeAll(descriptor, UnsafeRawBufferPointer(start: newline.utf8Start, count: 1))
            }
            clearTaskbarProgress(on: descriptor)
        }
        TerminalModeRestoration.restore()
    }

    private static func stop(_ signalNumber: Int32) {
        let descriptor = hiddenCursorDescriptor.load(ordering: .relaxed)
        if descriptor >= 0 { clearLiveArea(on: descriptor) }
        showCursor()
        if descriptor >= 0 { clearTaskbarProgress(on: descriptor) }
        TerminalModeRestoration.suspend()
        isSuspended.store(true, ordering: .sequentiallyConsistent)
        Signals.takeDefaultAction(signalNumber)  // stops here; returns when continued
        Signals.setHandler(signalNumber, restoreAndStop)  // for the next Ctrl-Z
        // The kernel discards the stop of an orphaned process group: no SIGCONT follows, so continue here
        // (nothing happens if the SIGCONT handler already did).
        continued()
    }

    fileprivate static func continued() {
        guard isSuspended.exchange(false, ordering: .relaxed) else { return }  // not our stop
        TerminalModeRestoration.resume()
        let descriptor = hiddenCursorDescriptor.load(ordering: .relaxed)
        if descriptor >= 0 {
            let hide: StaticString = "\u{1B}[?25l"
            FileDescriptor.writeAll(
                descriptor, UnsafeRawBufferPointer(start: hide.utf8Start, count: hide.utf8CodeUnitCount))
        }
        continuations.add(1, ordering: .relaxed)
    }
}

private func restoreAndReraise(_ signalNumber: Int32) {
    ErrorNumber.preserving { SignalRestoration.handle(signalNumber) }
}

private func restoreAndStop(_ signalNumber: Int32) {
    ErrorNumber.preserving { SignalRestoration.handle(signalNumber) }
}

private func continueAfterStop(_ signalNumber: Int32) {
    ErrorNumber.preserving { SignalRestoration.continued() }
}
