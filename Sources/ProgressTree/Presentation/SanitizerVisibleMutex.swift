import Synchronization

/// A `Mutex` whose ordering ThreadSanitizer can see.
///
/// On Linux `Synchronization.Mutex` locks with raw futex system calls, which ThreadSanitizer does not
/// intercept: it then reports every pair of critical sections run on different threads as a data race,
/// although the mutex orders them. Here each critical section also begins with an acquiring load of an
/// atomic counter and ends with a releasing increment of it. Those atomics are compiled into this module (so
/// ThreadSanitizer instruments them) and, because the mutex already orders the critical sections, each
/// section's load reads the previous section's increment: the happens-before edge the mutex provides becomes
/// visible. The cost is two uncontended atomic operations per critical section.
///
/// Thread safety: `Sendable`; as `Mutex`. The body must not lock the same mutex again (not re-entrant).
struct SanitizerVisibleMutex<Value: Sendable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>
    private let order = Atomic<UInt>(0)

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// - Complexity: O(1) plus `body`.
    borrowing func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { value in
            _ = order.load(ordering: .acquiring)
            defer { order.wrappingAdd(1, ordering: .releasing) }
            return body(&value)
        }
    }
}
