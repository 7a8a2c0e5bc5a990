#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Cancels the work on the first Ctrl-C; a second one calls `onSecondInterrupt` (by default: exit at once
/// with status 130).
///
/// SIGINT is handled on a dispatch queue instead of by its default action, so the program can stop
/// cleanly: cancel its `ProgressNode`, let the renderer draw its final frame and print a summary.
public final class InterruptHandler: Sendable {
    private let source: Mutex<(any DispatchSourceSignal)?>

    public init(
        onInterrupt: @escaping @Sendable () -> Void,
        onSecondInterrupt: @escaping @Sendable () -> Never = { exit(130) }
    ) {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let count = Atomic<Int>(0)
        source.setEventHandler {
            if count.add(1, ordering: .relaxed).newValue > 1 { onSecondInterrupt() }
            onInterrupt()
        }
        source.resume()
        self.source = Mutex(source)
    }

    /// Stops handling SIGINT: Ctrl-C takes its default action again.
    public func stop() {
        source.withLock { $0?.cancel() }
        signal(SIGINT, SIG_DFL)
    }
}
