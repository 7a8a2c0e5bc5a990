import Dispatch
import Foundation
import Synchronization

/// The signals that end an example, handled the same way by every example:
///
/// | signal | what happens | exit status |
/// |---|---|---|
/// | Ctrl-C (`SIGINT`) | `onInterrupt` (cancel the work: the program ends as it chooses, with 130) | 130 |
/// | a second Ctrl-C | `cleanUp`, then exit at once | 130 |
/// | `SIGTERM` (kill, timeout) | `cleanUp`, then exit at once | 143 |
/// | `SIGHUP` (the terminal closed) | `cleanUp`, then exit at once | 129 |
///
/// 128 + the signal's number, as a shell reports a program ended by that signal. The signals are handled
/// on a dispatch queue instead of by their default action, so `cleanUp` may do anything: stop the
/// renderer (which restores the cursor), restore the terminal mode, remove a partial file.
public final class InterruptHandler: Sendable {
    /// Exit statuses shared by the examples.
    public enum ExitStatus {
        public static let interrupted: Int32 = 130
        public static let terminated: Int32 = 143
        public static let hungUp: Int32 = 129
    }

    private let sources: Mutex<[any DispatchSourceSignal]>
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// - Parameters:
    ///   - onInterrupt: the first Ctrl-C.
    ///   - cleanUp: before exiting on a second Ctrl-C, `SIGTERM` or `SIGHUP`.
    ///   - exit: ends the process with the status given (`exit(3)` by default).
    public init(
        onInterrupt: @escaping @Sendable () -> Void,
        cleanUp: @escaping @Sendable () -> Void = {},
        exit: @escaping @Sendable (_ status: Int32) -> Never = { Foundation.exit($0) }
    ) {
        let interrupts = Atomic<Int>(0)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in Self.signals {
            signal(signalNumber, SIG_IGN)  // handled by the source below instead
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                if signalNumber == SIGINT, interrupts.add(1, ordering: .relaxed).newValue == 1 {
                    onInterrupt()
                    return
                }
                cleanUp()
                exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
        self.sources = Mutex(sources)
    }

    /// Stops handling the signals: they take their default action again.
    public func stop() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources = []
        }
        for signalNumber in Self.signals { signal(signalNumber, SIG_DFL) }
    }
}
