import Dispatch
import Synchronization
import ProgressTreePlatform

/// The waits for one observation's last delivery (`ProgressObservation.waitForLastDelivery`), and the facts
/// about its deliveries they wait on.
///
/// ## Invariant
/// A wait is over when no delivery is running and either the observation has ended (invalidated, or its
/// node gone: nothing can be delivered any more) or the last delivery that ran found the node in a final
/// state and no delivery is pending. A delivery marks itself running (`deliveryStarts`) before it clears
/// its pending mark, and records what it found (`deliveryEnded`) after its handler returned; so a waiter
/// that finds the pending mark clear also finds the delivery that cleared it running, or its record.
///
/// Each waiter checks the condition itself, on its own thread, and anything that may change it wakes the
/// waiters to check again. The check loads the pending mark under this lock, after whatever happened before
/// the wait began: a change that returned before the check has signalled, so its delivery is pending,
/// running, or has recorded what it read.
///
/// ## Lock order
/// A leaf: taken by deliveries (outside the delivery gate), `invalidate()`, a node's `deinit` and waiters,
/// with no other lock taken inside. Waiters are woken after it is released.
final class LastDeliveryWaits: Sendable {
    private struct State {
        var isDeliveryRunning = false
        /// Whether the last delivery that read the node found it finished, cancelled or failed.
        var lastDeliveryFoundFinal = false
        /// Invalidated, or the node went away.
        var hasEnded = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0

        func isOver(deliveryPending: Bool) -> Bool {
            !isDeliveryRunning && (hasEnded || (lastDeliveryFoundFinal && !deliveryPending))
        }
    }

    private enum Waiter {
        /// Resumed with `false`: woken to check again.
        case task(CheckedContinuation<Bool, Never>)
        case thread(DispatchSemaphore)

        func wake() {
            switch self {
            case .task(let continuation): continuation.resume(returning: false)
            case .thread(let semaphore): semaphore.signal()
            }
        }
    }

    private let state = Lock(State())

    // MARK: What the deliveries and the observation tell

    /// Called by a delivery before it clears the pending mark.
    func deliveryStarts() {
        state.withLock { $0.isDeliveryRunning = true }
    }

    /// Called by a delivery when it is over: `foundFinal` says whether it read the node in a final state, or
    /// is `nil` when it read nothing (it was deferred, or the observation was closed).
    func deliveryEnded(foundFinal: Bool?) {
        updateAndWake { state in
            state.isDeliveryRunning = false
            if let foundFinal { state.lastDeliveryFoundFinal = foundFinal }
        }
    }

    /// Called when nothing can be delivered any more: the observation was invalidated or its node went away.
    func observationEnded() {
        updateAndWake { $0.hasEnded = true }
    }

    /// Applies `update` under the lock, and wakes every waiter after it, to check again.
    private func updateAndWake(_ update: (inout State) -> Void) {
        let woken = state.withLock { state in
            update(&state)
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.wake() }
    }

    // MARK: Waiting

    /// How many waiters are registered, waiting to be woken (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Returns when the wait is over (see "Invariant") or the calling task is cancelled. `isDeliveryPending`
    /// loads the observation's pending mark.
    func wait(isDeliveryPending: () -> Bool) async {
        let id = newWaiter()
        while !Task.isCancelled {
            let isOver = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let answer: Bool? = state.withLock { state in
                        if state.isOver(deliveryPending: isDeliveryPending()) { return true }
                        // Checked under the lock the cancellation handler takes: cancelled before this point,
                        // the waiter is not registered; after it, the handler finds it and wakes it.
                        if Task.isCancelled { return false }
                        state.waiters[id] = .task(continuation)
                        return nil
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.wake()
            }
            if isOver { return }
        }
    }

    /// Returns `true` when the wait is over (see "Invariant"), `false` when `timeout` passed first.
    /// `isDeliveryPending` loads the observation's pending mark.
    func wait(timeout: Duration, isDeliveryPending: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(timeout.nanosecondsForDispatch)
        let semaphore = DispatchSemaphore(value: 0)
        let id = newWaiter()
        while true {
            let isOver = state.withLock { state in
                if state.isOver(deliveryPending: isDeliveryPending()) { return true }
                state.waiters[id] = .thread(semaphore)
                return false
            }
            if isOver { return true }
            if semaphore.wait(timeout: deadline) == .timedOut {
                return state.withLock { state in
                    // A wake that came after the timeout leaves the semaphore signalled: it is not used again.
                    state.waiters.removeValue(forKey: id)
                    return state.isOver(deliveryPending: isDeliveryPending())
                }
            }
        }
    }

    private func newWaiter() -> UInt64 {
        state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
    }
}
