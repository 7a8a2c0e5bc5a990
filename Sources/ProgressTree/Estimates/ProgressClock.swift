import Synchronization
import ProgressTreePlatform

/// The time source of the throughput and time-remaining estimates.
///
/// Estimates read the clock only when somebody reads them (never when work advances), so a clock can be
/// as slow or as fake as a test needs. Inject one with `ProgressNode.estimationClock`; use
/// `ManualProgressClock` to make estimates exact in tests.
///
/// Requirements: `now` never decreases, and is measured from an origin that stays fixed for the life of
/// the clock. Readers may call it from any thread.
public protocol ProgressClock: Sendable {
    /// The current time, as the time elapsed since the clock's fixed origin.
    var now: Duration { get }
}

/// The real clock: monotonic time that keeps running while the machine sleeps (`ContinuousClock`).
///
/// Thread safety: stateless; `Sendable`. Complexity: one clock read.
public struct SystemProgressClock: ProgressClock {
    private static let origin = ContinuousClock.now

    /// Creates the system clock.
    public init() {}

    /// The time elapsed since the first use of the system clock in this process.
    public var now: Duration { Self.origin.duration(to: .now) }
}

extension ProgressClock where Self == SystemProgressClock {
    /// The real clock, the default of every node.
    public static var system: SystemProgressClock { SystemProgressClock() }
}

/// A clock that moves only when told to: exact, repeatable estimates in tests and previews.
///
/// ```swift
/// let clock = ManualProgressClock()
/// node.estimationClock = clock
/// node.completedUnitCount = 100
/// _ = node.throughput           // first sample
/// clock.advance(by: .seconds(1))
/// node.completedUnitCount = 200
/// node.throughput               // 100 (bytes per second)
/// ```
///
/// Thread safety: `Sendable`; the time is kept in a `Mutex`. Complexity: O(1) per call.
public final class ManualProgressClock: ProgressClock {
    private let time: Lock<Duration>

    /// Creates a clock that reads `start` until it is advanced.
    public init(start: Duration = .zero) {
        time = Lock(start)
    }

    /// The current time.
    public var now: Duration { time.withLock { $0 } }

    /// Moves the clock forward by `interval`. A negative interval is ignored: a clock never goes back.
    public func advance(by interval: Duration) {
        guard interval > .zero else { return }
        time.withLock { $0 += interval }
    }
}

extension Duration {
    /// The duration in seconds as a `Double` (attosecond precision is more than an estimate or a timer
    /// needs); the package's other modules use it too.
    package var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
