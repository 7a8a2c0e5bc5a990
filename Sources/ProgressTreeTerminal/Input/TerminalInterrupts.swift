import ProgressTreePlatform
import Synchronization

/// Ctrl-C, `SIGTERM` and `SIGHUP` handled as a person at a terminal expects of a program that shows
/// progress: the first Ctrl-C asks the work to stop and lets the program end it properly; a second one,
/// or a signal that means "end now", ends the program at once with the terminal given back.
///
/// Most programs get this with one call, `TerminalRenderer.handleInterrupts(cleanUp:)`, which cancels
/// the renderer's root on the first Ctrl-C and stops the renderer before exiting:
///
/// ```swift
/// let renderer = TerminalRenderer(album)
/// let interrupts = renderer.handleInterrupts()
/// try await renderer.run { try await importPhotos(into: album) }   // ends early once cancelled
/// interrupts.exitIfInterrupted()                                   // 130 after Ctrl-C
/// ```
///
/// | signal | what happens | exit status |
/// |---|---|---|
/// | Ctrl-C (`SIGINT`), the first | `onInterrupt` (cancel the work); the program ends it as it chooses, and `exitIfInterrupted()` then exits | 130 |
/// | a second Ctrl-C | `cleanUp`, the terminal given back, exit at once | 130 |
/// | `SIGTERM` (`kill`, `timeout`) | the same | 143 |
/// | `SIGHUP` (the terminal closed) | the same | 129 |
///
/// 128 + the signal's number, as a shell reports a program ended by that signal. "The terminal given
/// back": after `cleanUp`, the cursor is shown and a terminal mode changed by `TerminalKeyReader` is
/// restored (a renderer's `stop()`, which `handleInterrupts` puts in `cleanUp`, does both for its output).
///
/// While installed, `SIGPIPE` is ignored (unless the program set its own handling): Ctrl-C reaches every
/// process of a pipeline, so in `program 2>&1 | cat` the reader is gone by the time the program writes
/// its last lines. A write to that pipe then fails (and is dropped) instead of ending the program with
/// status 141: the program still ends with 130.
///
/// The signal handlers only write the signal's number to a pipe (async-signal-safe, and in place before
/// `init` returns, so no signal is lost); `onInterrupt` and `cleanUp` run on a queue of their own, one
/// signal at a time, so they may do anything: cancel nodes, stop a renderer, remove a partial file. One
/// `TerminalInterrupts` at a time in a process: a newer one takes the signals over.
///
/// Thread safety: every member may be used from any thread.
public final class TerminalInterrupts: Sendable {
    /// The exit status after Ctrl-C (`SIGINT`): 128 + 2.
    public static let interruptedExitStatus: Int32 = 130
    /// The exit status after `SIGTERM`: 128 + 15.
    public static let terminatedExitStatus: Int32 = 143
    /// The exit status after `SIGHUP`: 128 + 1.
    public static let hungUpExitStatus: Int32 = 129

    private let forwarding: SignalForwarding?
    private let interrupts: Interrupts

    /// Handles Ctrl-C, `SIGTERM` and `SIGHUP` from now on, as the type describes.
    ///
    /// - Parameters:
    ///   - onInterrupt: the first Ctrl-C: ask the work to stop (cancel its root). The program then ends as
    ///     it chooses, and calls `exitIfInterrupted()` at its end.
    ///   - cleanUp: before the process exits on a second Ctrl-C, `SIGTERM` or `SIGHUP`: stop a renderer
    ///     (`handleInterrupts` does), remove a partial file, end helper processes. The process exits when it
    ///     returns.
    public convenience init(
        onInterrupt: @escaping @Sendable () -> Void, cleanUp: @escaping @Sendable () -> Void = {}
    ) {
        self.init(onInterrupt: onInterrupt, cleanUp: cleanUp, exit: { CurrentProcess.exit($0) })
    }

    /// As the public initializer, with the exit replaced (tests).
    init(
        onInterrupt: @escaping @Sendable () -> Void, cleanUp: @escaping @Sendable () -> Void,
        exit: @escaping @Sendable (_ status: Int32) -> Void
    ) {
        let interrupts = Interrupts()
        self.interrupts = interrupts
        Signals.ignoreBrokenPipe()
        forwarding = try? SignalForwarding([Signals.interrupt, Signals.terminate, Signals.hangUp]) { signalNumber in
            switch interrupts.received(signalNumber) {
            case .interruptWork:
                onInterrupt()
            case .exit(let status):
                cleanUp()
                SignalRestoration.restoreBeforeExit()
                exit(status)
            }
        }
    }

    /// Whether Ctrl-C was pressed since this handling was installed: the work was asked to stop by a
    /// person, and the program should end with `interruptedExitStatus` (130).
    public var wasInterrupted: Bool { interrupts.wasInterrupted }

    /// Ends the process with `interruptedExitStatus` (130) if Ctrl-C was pressed; returns otherwise. Call
    /// it where the program ends, after it printed what it has to say (a summary of what was done).
    public func exitIfInterrupted() {
        if wasInterrupted { CurrentProcess.exit(Self.interruptedExitStatus) }
    }

    /// Stops handling the signals: they take their default action again (`SIGPIPE` stays ignored: the
    /// program may still be writing to a pipe whose reader Ctrl-C ended). Calling it again does nothing.
    public func stop() {
        forwarding?.stop()
    }

    deinit {
        forwarding?.stop()
    }
}

/// What the signals received so far ask for: a pure state machine (`TerminalInterrupts` acts).
final class Interrupts: Sendable {
    enum Action: Equatable {
        /// The first Ctrl-C: ask the work to stop.
        case interruptWork
        /// End the process now with this status.
        case exit(Int32)
    }

    private let interruptCount = Atomic<Int>(0)

    /// The action for `signalNumber`, received now.
    func received(_ signalNumber: Int32) -> Action {
        if signalNumber == Signals.interrupt, interruptCount.add(1, ordering: .relaxed).newValue == 1 {
            return .interruptWork
        }
        return .exit(128 + signalNumber)
    }

    /// Whether Ctrl-C was received. Relaxed: read after the cancellation it caused was seen (which a
    /// lock ordered), or to decide an exit status, where a Ctrl-C racing the read may count either way.
    var wasInterrupted: Bool { interruptCount.load(ordering: .relaxed) > 0 }
}
