#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import CProgressTreePlatform
import Synchronization

/// Signals: the handlers the terminal sets to give the screen back (Ctrl-C, Ctrl-Z and their kind), the
/// default actions it hands on, `SIGPIPE` ignored so that a reader gone away is a failed write rather than
/// the end of the process, and signals sent to processes.
///
/// The functions marked async-signal-safe call only functions that POSIX lists as such (signal-safety(7)),
/// so signal handlers may use them.
package enum Signals {
    package typealias Handler = @convention(c) (Int32) -> Void

    package static let interrupt = SIGINT
    package static let terminate = SIGTERM
    package static let hangUp = SIGHUP
    package static let terminalStop = SIGTSTP
    package static let continueIfStopped = SIGCONT
    package static let windowChange = SIGWINCH
    package static let brokenPipe = SIGPIPE

    /// Sets `handler` for `signalNumber` if the signal has its default action, and returns whether it
    /// did: a program that handles (or ignores) the signal itself keeps its handling.
    package static func setHandlerIfDefault(_ signalNumber: Int32, _ handler: Handler) -> Bool {
        guard progresstree_signal_has_default_action(signalNumber) == 1 else { return false }
        signal(signalNumber, handler)
        return true
    }

    /// Sets `handler` for `signalNumber`. Async-signal-safe.
    package static func setHandler(_ signalNumber: Int32, _ handler: Handler) {
        signal(signalNumber, handler)
    }

    /// Gives `signalNumber` its default action again. Async-signal-safe.
    package static func setDefaultAction(_ signalNumber: Int32) {
        signal(signalNumber, SIG_DFL)
    }

    /// Gives `signalNumber` its default action, unblocks it and raises it: the process ends or stops here
    /// (a stopped process returns from this call when continued). Async-signal-safe.
    package static func takeDefaultAction(_ signalNumber: Int32) {
        signal(signalNumber, SIG_DFL)
        // A handler runs with its signal blocked: unblocked, the raised signal acts now rather than when
        // the handler returns.
        progresstree_unblock_signal(signalNumber)
        raise(signalNumber)
    }

    /// Whether `ignoreBrokenPipe()` set `SIGPIPE` to be ignored: `ChildProcess.spawn` gives the programs it
    /// starts the default action back.
    static let ignoredBrokenPipe = Atomic<Bool>(false)

    /// Sets `SIGPIPE` to be ignored if it has its default action (which would end the process when a pipe's
    /// reader goes away); a handler the program installed is kept.
    package static func ignoreBrokenPipe() {
        if setHandlerIfDefault(SIGPIPE, SIG_IGN) { ignoredBrokenPipe.store(true, ordering: .relaxed) }
    }

    /// Sends `signalNumber` to process `pid`.
    package static func send(_ signalNumber: Int32, to pid: Int32) {
        _ = kill(pid, signalNumber)
    }
}
