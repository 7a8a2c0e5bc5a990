import Dispatch
import Foundation

/// Runs `body` on a new thread; returns whether it returned within `seconds` (a hang stays on its thread).
func returnsInTime(seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done.wait(timeout: .now() + seconds) == .success
}
