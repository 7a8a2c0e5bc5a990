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
/// 128 + the signal's number, as a shell reports a program ended by that signal. A signal handler only
/// writes the signal's number to a pipe (async-signal-safe, and in place before `init` returns, so no
/// signal is lost); the handling runs on a dispatch queue, so `cleanUp` may do anything: stop the renderer
/// (which restores the cursor), restore the terminal mode, remove a partial file. One handler at a time.
public final class InterruptHandler: Sendable {
    /// Exit statuses shared by the examples.
    public enum ExitStatus {
        /// The work was cancelled by a key (`c`) or by the parent process that mounted it: no signal was
        /// received, so not 128 + a signal's number, which a shell reads as "ended by that signal".
        public static let cancelled: Int32 = 3
        /// Ctrl-C (`SIGINT`): cancelled, or ended at once on a second Ctrl-C.
        public static let interrupted: Int32 = 130
        /// `SIGTERM` (kill, a timeout): 128 + 15.
        public static let terminated: Int32 = 143
        /// `SIGHUP` (the terminal closed): 128 + 1.
        public static let hungUp: Int32 = 129
    }

    /// The pipe's write end, for the signal handler; -1 when no handler is installed.
    ///
    /// Both stores are sequentially consistent, and that is load-bearing: the handler may run on any thread,
    /// and must find the descriptor before `signal(2)` installs it, and -1 before the source's cancel
    /// handler closes the pipe (a closed descriptor may be reused by an unrelated file). No acquire/release
    /// pairing orders a store before a system call; a sequentially consistent store's full barrier makes
    /// it visible to every thread first. The handler's load is relaxed: no ordering could tie it to the
    /// moment the signal arrives, and it reads a value those barriers have made visible.
    fileprivate static let pipeInput = Atomic<Int32>(-1)
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    private let source: Mutex<any DispatchSourceRead>

    /// - Parameters:
    ///   - onInterrupt: the first Ctrl-C.
    ///   - cleanUp: before exiting on a second Ctrl-C, `SIGTERM` or `SIGHUP`.
    ///   - exit: ends the process with the status given (`exit(3)` by default).
    public init(
        onInterrupt: @escaping @Sendable () -> Void,
        cleanUp: @escaping @Sendable () -> Void = {},
        exit: @escaping @Sendable (_ status: Int32) -> Never = { Foundation.exit($0) }
    ) {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "no pipe for signals")
        let (output, input) = (ends[0], ends[1])
        for end in [output, input] {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)  // the handler never blocks
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        let interrupts = Atomic<Int>(0)
        let source = DispatchSource.makeReadSource(fileDescriptor: output, queue: .global())
        source.setEventHandler {
            var byte: UInt8 = 0
            while read(output, &byte, 1) == 1 {
                let signalNumber = Int32(byte)
                if signalNumber == SIGINT, interrupts.add(1, ordering: .relaxed).newValue == 1 {
                    onInterrupt()
                    continue
                }
                cleanUp()
                exit(128 + signalNumber)
            }
        }
        source.setCancelHandler {
            close(output)
            close(input)
        }
        source.resume()
        self.source = Mutex(source)
        Self.pipeInput.store(input, ordering: .sequentiallyConsistent)
        for signalNumber in Self.signals { signal(signalNumber, forwardSignal) }
    }

    /// Stops handling the signals: they take their default action again.
    public func stop() {
        for signalNumber in Self.signals { signal(signalNumber, SIG_DFL) }
        Self.pipeInput.store(-1, ordering: .sequentiallyConsistent)
        source.withLock { $0.cancel() }
    }
}

/// The signal handler: the signal's number into the pipe. Async-signal-safe (an atomic load, `write(2)`),
/// and `errno` is left as the interrupted code had it.
private func forwardSignal(_ signalNumber: Int32) {
    let savedErrno = errno
    defer { errno = savedErrno }
    let input = InterruptHandler.pipeInput.load(ordering: .relaxed)
    guard input >= 0 else { return }
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(input, &byte, 1)
}
