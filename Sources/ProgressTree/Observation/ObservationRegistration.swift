import Dispatch
import Synchronization
import ProgressTreePlatform

/// One observation of one node: the coalescing delivery machine behind `observe(_:on:...)`.
///
/// A change signals it on the updating thread (`signal()`: one atomic exchange, and a `queue.async` only
/// when no delivery is pending). The delivery, on the observer's queue, marks itself no longer pending,
/// brings the node up to date, reads the value and calls the handler if the value differs from the last
/// one delivered. Because the pending mark is cleared before the read, a change made after the read
/// always schedules another delivery: the last value is never lost.
///
/// Each delivery also tells `waits` whether it found the node final, for `waitForLastDelivery`.
final class ObservationRegistration<Value: Equatable & Sendable>: ChangeSignalReceiver, RegisteredObservation {
    /// Assigned once, in `init`, and only read afterwards: no access races with a write (a weak load is
    /// itself safe from any thread).
    nonisolated(unsafe) private weak var node: ProgressNode?
    private let read: @Sendable (ProgressNode) -> Value
    /// Serial, targeting the user's queue: handlers of one observation never overlap, even when the user's
    /// queue is concurrent.
    private let queue: DispatchQueue
    private let minimumInterval: Duration
    private let handler: @Sendable (ProgressNode, ProgressNode.Change<Value>) -> Void

    /// Starts `true`, standing for the first delivery, which `start` schedules once the baseline is
    /// recorded. Until then a change must not schedule a delivery of its own: such a delivery could run
    /// before the baseline is recorded, report the value as new with `oldValue == nil` although
    /// `.initial` was not asked for, and then be overwritten by the older baseline, so that a later return
    /// to the baseline value would be skipped as equal and the observer left with a stale value.
    private let isDeliveryPending = Atomic<Bool>(true)
    /// Runs the handler; closed by `invalidate()`. Guards what the deliveries share, so that under
    /// `--sanitize=thread` the handler's accesses are ordered with the next handler's and with `invalidate()`.
    private let gate = DeliveryGate<DeliveryState>(DeliveryState())
    /// The waits for the last delivery, and what the deliveries found.
    private let waits = LastDeliveryWaits()

    private struct DeliveryState {
        /// The last value delivered, or the baseline read at registration; `nil` before either (a `Value`
        /// that is itself optional is wrapped: `.some(nil)` is a value).
        var lastValue: Value?
        var lastDeliveryTime: DispatchTime?
    }

    init(
        node: ProgressNode, read: @escaping @Sendable (ProgressNode) -> Value, queue: DispatchQueue,
        minimumInterval: Duration, handler: @escaping @Sendable (ProgressNode, ProgressNode.Change<Value>) -> Void
    ) {
        self.node = node
        self.read = read
        self.queue = DispatchQueue(label: "ProgressTree.observation", target: queue)
        self.minimumInterval = minimumInterval
        self.handler = handler
    }

    /// Records the baseline (without `.initial`), then schedules the first delivery.
    func start(initial: Bool) {
        if !initial, let node {
            _ = node.refresh()
            let baseline = read(node)
            gate.withGuarded { $0.lastValue = baseline }
        }
        // With `.initial` this delivers the current value. Without it, it delivers a change made while the
        // baseline was read (whose signal found this delivery pending), or nothing if the value is equal.
        let node = self.node
        queue.async { self.deliver(keeping: node) }
    }

    /// Schedules a delivery unless one is pending. The scheduled delivery holds the node strongly (only
    /// this registration holds it weakly), so that a node let go right after its last change — a finished
    /// child, which its parent releases — still delivers that change: the last value is always delivered.
    func signal() {
        if gate.isClosed { return }
        if !isDeliveryPending.exchange(true, ordering: .acquiringAndReleasing) {
            let node = self.node
            queue.async { self.deliver(keeping: node) }
        }
    }

    private func deliver(keeping node: ProgressNode?) {
        waits.deliveryStarts()  // before the pending mark is cleared (see `LastDeliveryWaits`)
        var foundFinal: Bool?
        defer { waits.deliveryEnded(foundFinal: foundFinal) }
        // Cleared before the node is refreshed and read: a change made after the read finds the flag clear
        // and schedules another delivery. Sequentially consistent, and load-bearing: this is a store followed
        // by reads of the node (its dirty bit is an atomic), against the updater's write of the node followed
        // by the exchange in `signal()`; release/acquire alone would let both sides miss each other's write
        // (the delivery reading the old value while the signal still finds the flag set).
        isDeliveryPending.store(false, ordering: .sequentiallyConsistent)
        guard !gate.isClosed, let node else { return }
        if let wait = remainingThrottle() {
            if !isDeliveryPending.exchange(true, ordering: .acquiringAndReleasing) {
                queue.asyncAfter(deadline: .now() + wait) { self.deliver(keeping: node) }
            }
            return
        }
        _ = node.refresh()  // clears the node's dirty bit before the read: later changes signal again
        // Read before the value: found final here, the value read next is the final one (final outcomes are
        // permanent). A change that makes the node final after this look signals again (see above).
        let isFinal = node.hasFinalOutcome
        let value = read(node)
        gate.deliver { state in
            if let lastValue = state.lastValue, lastValue == value { return }
            let change = ProgressNode.Change(oldValue: state.lastValue, newValue: value)
            state.lastValue = value
            state.lastDeliveryTime = .now()
            handler(node, change)
        }
        foundFinal = isFinal
    }

    /// How long to wait before the next delivery may run, or `nil` if it may run now.
    private func remainingThrottle() -> DispatchTimeInterval? {
        guard minimumInterval > .zero,
            let last = gate.withGuarded({ $0.lastDeliveryTime })
        else { return nil }
        // Intervals are capped at 100 years, so the arithmetic below can never overflow.
        let intervalNanoseconds = UInt64(minimumInterval.nanosecondsForDispatch)
        let elapsed = DispatchTime.now().uptimeNanoseconds &- last.uptimeNanoseconds
        guard elapsed < intervalNanoseconds else { return nil }
        return .nanoseconds(Int(intervalNanoseconds - elapsed))
    }

    /// Closes the gate (see `DeliveryGate.close()` for when it waits for a running handler) and removes the
    /// observation from the node, so that changes stop signalling it. Every call removes it (a no-op after
    /// the first), so whichever call returns, the node no longer holds this observation.
    func invalidate() {
        gate.close()
        stopSignalling()
        waits.observationEnded()
    }

    /// Nothing can be delivered any more: a scheduled delivery holds the node, so none is scheduled.
    func observedNodeWentAway() {
        waits.observationEnded()
    }

    func waitForLastDelivery() async {
        await waits.wait { isDeliveryPending.load(ordering: .sequentiallyConsistent) }
    }

    var waiterCount: Int { waits.waiterCount }

    func waitForLastDelivery(timeout: Duration) -> Bool {
        // From inside this observation's handler the wait could never end: the next delivery, and the end
        // of this one, come after the handler returns.
        if gate.isDeliveringOnCurrentThread { return false }
        return waits.wait(timeout: timeout) { isDeliveryPending.load(ordering: .sequentiallyConsistent) }
    }

    /// Removes the observation from the node's observers; idempotent. The gate stays as it is.
    func stopSignalling() {
        node?.removeChangeReceiver(self)
    }
}
