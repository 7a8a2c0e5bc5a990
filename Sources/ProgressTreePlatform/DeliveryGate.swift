import Synchronization

/// The gate every user handler of the package passes through: observation handlers
/// (`ObservationRegistration`) and `LabelPacer` handlers (ProgressTreePresentation).
///
/// A delivery runs the handler under the gate's lock, after checking that the gate is open; `close()` shuts
/// the gate and then waits for a delivery already running. So once `close()` returns, no delivery starts,
/// and none is running — unless waiting could never end:
///
/// - `close()` called from inside this gate's own delivery, on its thread, returns at once (the delivery
///   that called it finishes afterwards);
/// - `close()` whose wait would close a cycle — the running delivery is itself waiting, directly or through
///   other gates, for a gate whose delivery this thread runs (two handlers closing each other's gates) —
///   returns at once too. Of the handlers in such a cycle, only the last to call `close()` skips its wait;
///   the others wait until it returns and its delivery ends.
///
/// ## Invariant
/// The one fact the gate keeps about its handler is `runner`: the thread running a delivery of this gate,
/// or 0. It is set under the gate's lock before the handler starts and cleared before the lock is released,
/// so while it names a thread, that thread is inside this gate's delivery. It is a thread, not a task-local
/// flag: a task started in a handler (`Task {}` inherits task-locals) runs elsewhere, so its `close()` waits
/// for the handler like any other thread's.
///
/// Threads about to wait register in `WaitGraph` (one process-wide lock, taken only by `close()`), and the
/// cycle check and the registration happen under that lock together: of two threads closing each other's
/// gates, the second to register finds the first's registration and skips.
///
/// ## Lock order
/// delivery gate → (user code: refresh domain → node) and delivery gate → LabelPacer state. A handler may
/// take any lock of the library, so no lock of the library is held when a delivery starts or when `close()`
/// waits. A handler may wait for another gate (`close()` from a handler): gate → gate, made cycle-free by
/// the rule above. `WaitGraph`'s lock is a leaf: nothing is taken while it is held.
package final class DeliveryGate<Guarded>: Sendable {
    private let closed = Atomic<Bool>(false)
    /// The thread running a delivery of this gate, or 0 (see "Invariant").
    ///
    /// Relaxed suffices: it is written by that thread inside the gate's lock, and read for the cycle check
    /// under `WaitGraph`'s lock. A thread that waits stores its own runner before it takes `WaitGraph`'s lock,
    /// so the thread that registers after it sees that store (lock release → acquire); a stale value read for
    /// a thread that is not waiting only makes the reader wait on the gate's lock, which that thread releases.
    fileprivate let runner = Atomic<UInt>(0)
    /// Held for the whole delivery; guards what the deliveries share (the last value delivered, ...).
    /// Declared last: with an empty `Guarded` (`LabelPacer`'s gate) the guarded value has no bytes, and
    /// ThreadSanitizer reports the handler's `inout` access to it at the address that follows the mutex,
    /// which must not be another field's (it would be reported as racing with that field's atomics).
    private let lock: Lock<Guarded>

    package init(_ guarded: sending Guarded) {
        lock = Lock(guarded)
    }

    /// Whether `close()` was called.
    ///
    /// Acquiring: a delivery that finds the gate closed skips; the flag carries no other data.
    package var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Whether the calling thread is inside a delivery of this gate (see "Invariant").
    package var isDeliveringOnCurrentThread: Bool {
        runner.load(ordering: .relaxed) == currentThreadIdentifier()
    }

    /// Runs `body` — the handler call and the bookkeeping that goes with it — under the gate, unless the gate
    /// is closed; returns `nil` then.
    package func deliver<Result>(_ body: (inout sending Guarded) -> sending Result) -> sending Result? {
        lock.withLock { guarded -> sending Result? in
            // Checked under the lock: `close()` sets the flag before taking the lock to wait, so a delivery
            // that passes this check either finishes before `close()` returns or is the one it skips.
            guard !closed.load(ordering: .acquiring) else { return nil }
            runner.store(currentThreadIdentifier(), ordering: .relaxed)
            defer { runner.store(0, ordering: .relaxed) }
            return body(&guarded)
        }
    }

    /// Reads or changes the guarded state outside a delivery (never from inside one of this gate: the lock
    /// is not recursive).
    package func withGuarded<Result>(_ body: (inout sending Guarded) -> sending Result) -> sending Result {
        lock.withLock(body)
    }

    /// Closes the gate: no delivery starts after this returns. Waits for a delivery already running, except
    /// from inside it or when waiting would close a cycle of handlers (see the type's documentation).
    ///
    /// - Returns: `true` for the call that closed the gate, `false` when it was closed already.
    @discardableResult
    package func close() -> Bool {
        // Releasing pairs with the acquiring loads in `deliver` and `isClosed`.
        let first = !closed.exchange(true, ordering: .acquiringAndReleasing)
        let me = currentThreadIdentifier()
        guard WaitGraph.register(me, waitingFor: self) else { return first }
        lock.withLock { _ in }  // wait for a delivery that passed its check before the flag was set
        WaitGraph.unregister(me)
        return first
    }
}

/// Which thread waits for which gate, for the cycle check of `DeliveryGate.close()`.
private enum WaitGraph {
    /// For each waiting thread, how to read the runner of the gate it waits for.
    private static let waits = Lock<[UInt: @Sendable () -> UInt]>([:])

    /// Records that `thread` is about to wait for `gate`, unless that wait could never end: `gate`'s
    /// delivery runs on `thread`, or on a thread that waits (through other gates) for a delivery running
    /// on `thread`. Returns whether `thread` may wait.
    static func register<Guarded>(_ thread: UInt, waitingFor gate: DeliveryGate<Guarded>) -> Bool {
        waits.withLock { waits in
            var runner = gate.runner.load(ordering: .relaxed)
            var steps = 0
            while runner != 0, steps <= waits.count {
                if runner == thread { return false }
                guard let next = waits[runner] else { break }
                runner = next()
                steps += 1
            }
            waits[thread] = { [gate] in gate.runner.load(ordering: .relaxed) }
            return true
        }
    }

    static func unregister(_ thread: UInt) {
        waits.withLock { _ = $0.removeValue(forKey: thread) }
    }
}

/// An identifier of the calling thread, unique among the threads alive; never 0.
private func currentThreadIdentifier() -> UInt { CurrentThread.identifier }
