#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ProgressTree
import Synchronization

/// Restores the cursor (and the terminal mode changed by `TerminalKeyReader`) when the process is interrupted (Ctrl-C) or terminated while a live renderer has
/// hidden it, then lets the signal take its default action.
///
/// The handler is async-signal-safe: it reads two atomics, writes a constant byte sequence with `write(2)`,
/// restores the default disposition with `signal(2)` and re-raises. Handlers are installed only for
/// signals whose disposition is the default, so a program that handles SIGINT itself (for example to
/// cancel its work) keeps its own handling and stops the renderer itself.
enum SignalRestoration {
    /// The descriptor whose cursor is hidden, or -1.
    private static let hiddenCursorDescriptor = Atomic<Int32>(-1)
    private static let installed = Lock<Set<Int32>>([])

    static func cursorHidden(on descriptor: Int32) {
        hiddenCursorDescriptor.store(descriptor, ordering: .sequentiallyConsistent)
        installHandlers()
    }

    /// Installs the handler for SIGINT and SIGTERM where their disposition is the default.
    static func installHandlers() {
        installed.withLock { installed in
            for signalNumber in [SIGINT, SIGTERM] where !installed.contains(signalNumber) {
                let previous = signal(signalNumber, restoreCursorAndReraise)
                // SIG_DFL is the null handler on every POSIX system Swift runs on.
                if unsafeBitCast(previous, to: Int.self) != 0 {
                    signal(signalNumber, previous)  // the program handles it: leave it alone
                } else {
                    installed.insert(signalNumber)
                }
            }
        }
    }

    static func cursorRestored() {
        hiddenCursorDescriptor.store(-1, ordering: .sequentiallyConsistent)
    }

    fileprivate static func handle(_ signalNumber: Int32) {
        let descriptor = hiddenCursorDescriptor.load(ordering: .sequentiallyConsistent)
        if descriptor >= 0 {
            let sequence: StaticString = "\u{1B}[?2026l\u{1B}[0m\u{1B}[?25h\n"
            _ = write(descriptor, sequence.utf8Start, sequence.utf8CodeUnitCount)
        }
        TerminalModeRestoration.restore()
        signal(signalNumber, SIG_DFL)
        raise(signalNumber)
    }
}

private func restoreCursorAndReraise(_ signalNumber: Int32) {
    SignalRestoration.handle(signalNumber)
}
