#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Cancels the work on the first Ctrl-C; a second one calls `onSecondInterrupt`, which exits at once.
final class InterruptHandler: Sendable {
    private let source: Mutex<(any DispatchSourceSignal)?>

    init(onInterrupt: @escaping @Sendable () -> Void, onSecondInterrupt: @escaping @Sendable () -> Never) {
        signal(SIGINT, SIG_IGN)  // handled below, on a queue, instead of by the default action
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let count = Atomic<Int>(0)
        source.setEventHandler {
            if count.add(1, ordering: .relaxed).newValue > 1 { onSecondInterrupt() }
            onInterrupt()
        }
        source.resume()
        self.source = Mutex(source)
    }

    func stop() {
        source.withLock { $0?.cancel() }
        signal(SIGINT, SIG_DFL)
    }
}
