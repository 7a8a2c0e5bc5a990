import Dispatch

extension ProgressNode {
    /// A change delivered to an observer.
    public struct Change<Value: Sendable>: Sendable {
        /// The value delivered before this one to the same observer: the value at registration when the
        /// observation did not ask for `.initial`; `nil` on the `.initial` delivery.
        public let oldValue: Value?
        /// The current value.
        public let newValue: Value
    }

    /// Options of `observe(_:on:options:minimumInterval:changeHandler:)`.
    ///
    /// Key-value observing's option names are accepted, so that `options: [.initial, .new]` compiles as it
    /// is: `.new` and `.old` change nothing (every `Change` carries `newValue`, and `oldValue` except on the
    /// `.initial` delivery); `.prior` is unavailable (a delivery always follows the change it reports).
    public struct ObservationOptions: OptionSet, Sendable {
        /// The bits of the options.
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Deliver the current value at once (on the observer's queue), with `oldValue == nil`.
        public static let initial = ObservationOptions(rawValue: 1 << 0)
        /// Key-value observing's `.new`: accepted, no effect; `Change.newValue` is always there.
        public static let new = ObservationOptions(rawValue: 1 << 1)
        /// Key-value observing's `.old`: accepted, no effect; `Change.oldValue` is there on every delivery
        /// but the `.initial` one.
        public static let old = ObservationOptions(rawValue: 1 << 2)
        /// Key-value observing's `.prior` has no equivalent: deliveries are coalesced and always follow the
        /// change, whose `Change.oldValue` is the value delivered before it.
        @available(
            *, unavailable,
            message: "deliveries follow the change; read change.oldValue instead of a prior notification"
        )
        public static var prior: ObservationOptions { ObservationOptions(rawValue: 1 << 3) }
    }

    /// Calls `changeHandler` on `queue` when the value at `keyPath` changes.
    ///
    /// Any readable property with an `Equatable & Sendable` value can be observed, including values derived
    /// from the subtree (`fractionCompleted`, `isFinished`, descriptions): a change anywhere below this node
    /// notifies its observers.
    ///
    /// Guarantees:
    /// - Handlers of one observation run one at a time on `queue`, in order (also on a concurrent queue).
    /// - Changes are coalesced: at most one delivery is pending per observation, and it reads the newest
    ///   value when it runs. A tight update loop against a slow or suspended queue queues one delivery,
    ///   not one per update.
    /// - A value equal to the last delivered one is not delivered again.
    /// - The last value (for example the node finishing or being cancelled) is always delivered, even when
    ///   the node is released right after: the observation does not keep the node alive, but a scheduled
    ///   delivery does, until it has run.
    /// - With a `minimumInterval`, deliveries are at least that far apart; the latest value is still
    ///   delivered when the interval has passed.
    /// - After `invalidate()` returns (or the returned token is released), no new delivery starts, and a
    ///   running handler has returned unless `invalidate()` was called from that handler or from a handler
    ///   it waits for (see `ProgressObservation.invalidate()`).
    ///
    /// The thread that updates the node pays nothing when nobody observes, and O(1) when someone does: it
    /// only schedules a delivery; reading the value and calling the handler happen on `queue`.
    ///
    /// > Important: On Linux nothing runs the main queue unless the program does (`dispatchMain()`,
    /// > `RunLoop.main.run()`, or an `async` `main`). A command-line program that observes on
    /// > `DispatchQueue.main` without that never sees a delivery; use a queue of your own.
    ///
    /// - Parameters:
    ///   - keyPath: the value to observe, such as `\.fractionCompleted`.
    ///   - queue: where the handler runs; by default a global queue (still one handler at a time, in order),
    ///     as key-value observing's `observe(_:options:changeHandler:)` runs handlers on a thread the caller
    ///     does not choose.
    ///   - options: `.initial` to deliver the current value at once (`.new` and `.old` are accepted and
    ///     change nothing).
    ///   - minimumInterval: the least time between two deliveries; `.zero` for none.
    ///   - changeHandler: receives the node and the change.
    /// - Returns: a token; the observation lasts until it is invalidated or released.
    public func observe<Value: Equatable & Sendable>(
        _ keyPath: KeyPath<ProgressNode, Value> & Sendable,
        on queue: DispatchQueue = .global(),
        options: ObservationOptions = [],
        minimumInterval: Duration = .zero,
        changeHandler: @escaping @Sendable (ProgressNode, Change<Value>) -> Void
    ) -> ProgressObservation {
        let registration = ObservationRegistration(
            node: self, read: { $0[keyPath: keyPath] }, queue: queue,
            minimumInterval: minimumInterval, handler: changeHandler)
        state.withLock { state in registerChangeReceiverUnderLock(registration, in: &state) }
        changeReceiverRegistered()
        // Read the baseline after registering: a change from here on either is in the baseline or signals.
        registration.start(initial: options.contains(.initial))
        return ProgressObservation(registration)
    }

    /// Whether the node finished, was cancelled or failed: the final outcomes, which are permanent.
    package var hasFinalOutcome: Bool { isFinished || isCancelled || isFailed }

    /// Tells the observations still registered that nothing more can be delivered (from `deinit`).
    func tellObserversTheNodeWentAway() {
        let receivers = state.withLock { $0.observers.receivers }
        for receiver in receivers { receiver.observedNodeWentAway() }
    }

    /// Adds `receiver` to the node's observers, under its lock (`state`): walks that mark this node from
    /// now on take its lock to signal. Acquiring and releasing is enough: read-modify-writes of `flags` are
    /// totally ordered, so a walk's OR of `dirty` either comes after this one and sees `observed` (then
    /// signals), or comes before it, and this OR acquires from it, so a read after the registration sees
    /// the walk's update. Call `changeReceiverRegistered()` after the lock.
    func registerChangeReceiverUnderLock(_ receiver: any ChangeSignalReceiver, in state: inout NodeState) {
        state.observers.add(receiver)
        flags.bitwiseOr(NodeFlags.observed, ordering: .acquiringAndReleasing)
    }

    /// The second half of a registration, outside the node's lock: an update refreshing its path holds the
    /// tree's lock from its look at `observed` to its store of the new fraction, so passing that lock here
    /// means such a refresh either saw the bit (and signals) or is over (and a read from here on includes it).
    func changeReceiverRegistered() {
        unretainedDomain.withRepresentativeLock { _ in }
    }

    /// Takes `receiver` out of the node's observers; the last one out clears `observed`.
    func removeChangeReceiver(_ receiver: any ChangeSignalReceiver) {
        state.withLock { state in
            state.observers.remove(receiver)
            if state.observers.signalTargets == nil {
                // Relaxed: registrations set the bit under this same lock, which orders them with this
                // clear; a walk that still sees the bit takes the lock and finds no receiver to signal.
                flags.bitwiseAnd(~NodeFlags.observed, ordering: .relaxed)
            }
        }
    }
}
