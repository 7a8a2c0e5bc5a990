import Dispatch
import ProgressTreePlatform

/// The clock and timer the presentation helpers run on: what time it is, and "run this later".
///
/// `LabelPacer` never reads the system clock or creates timers itself; it asks its scheduler. The library
/// provides `DispatchPresentationScheduler`, which runs actions on a `DispatchQueue`. A test can supply a
/// scheduler whose time only moves when the test says so, making every pacing decision exact and repeatable.
///
/// ## Requirements for an implementation
/// - `now` is monotonic: it never goes backwards.
/// - `schedule(after:_:)` runs each action exactly once, no earlier than `delay` after the call, and runs
///   the actions of one scheduler **one at a time** (serially). Actions due at the same time run in the order
///   they were scheduled.
/// - Both may be called from any thread, including from inside a running action.
///
/// ## Thread safety
/// Conforming types are `Sendable` and must be safe to use from any thread.
public protocol PresentationScheduler: Sendable {
    /// The current time of this scheduler, on the `ContinuousClock` time line.
    ///
    /// - Complexity: O(1).
    var now: ContinuousClock.Instant { get }

    /// Runs `action` once, serially with this scheduler's other actions, when `delay` has passed.
    ///
    /// A `delay` of `.zero` or less means "as soon as possible", still asynchronously (never inside this call).
    ///
    /// - Complexity: O(1) for the call (implementations may use O(log n) for a timer heap).
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void)
}

/// A `PresentationScheduler` that runs actions on a `DispatchQueue`, timed with `ContinuousClock`.
///
/// Actions run one at a time even when `queue` is concurrent: they go through a private serial queue that
/// targets `queue`, so they still run on (and with the quality of service of) the queue you chose.
///
/// > Important: On Linux nothing runs the main queue unless the program does (`dispatchMain()`, or an
/// > `async` `main`). Use a queue of your own in a command-line tool that does neither.
///
/// ## Thread safety
/// Immutable and `Sendable`; call it from any thread.
public struct DispatchPresentationScheduler: PresentationScheduler {
    /// The serial queue the actions run on; it targets the queue given to `init(queue:)`.
    public let queue: DispatchQueue

    /// Creates a scheduler that runs its actions, one at a time, on `queue`.
    ///
    /// - Complexity: O(1).
    public init(queue: DispatchQueue) {
        self.queue = DispatchQueue(label: "ProgressTree.presentation", target: queue)
    }

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { ContinuousClock.now }

    /// Runs `action` on the queue after `delay` (at once when `delay <= .zero`).
    ///
    /// - Complexity: O(1).
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        if delay <= .zero {
            queue.async(execute: action)
        } else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(delay.roundedUpNanoseconds), execute: action)
        }
    }
}

extension Duration {
    /// This duration in whole nanoseconds, rounded up (so a timer never fires early), saturating at `Int.max`.
    var roundedUpNanoseconds: Int {
        let (quotient, remainder) = totalAttoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let nanoseconds = remainder > 0 ? quotient + 1 : quotient
        return nanoseconds > Int128(Int.max) ? Int.max : Int(nanoseconds)
    }
}
