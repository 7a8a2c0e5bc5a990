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
    public struct ObservationOptions: OptionSet, Sendable {
        /// The bits of the options.
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Deliver the current value at once (on the observer's queue), with `oldValue == nil`.
        public static let initial = ObservationOptions(rawValue: 1 << 0)
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
    /// - After `invalidate()` returns (or the returned token is released), no new delivery starts. When
    ///   called from outside a handler, `invalidate()` also waits for a handler already running.
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
    ///   - queue: where the handler runs.
    ///   - options: `.initial` to deliver the current value at once.
    ///   - minimumInterval: the least time between two deliveries; `.zero` for none.
    ///   - changeHandler: receives the node and the change.
    /// - Returns: a token; the observation lasts until it is invalidated or released.
    public func observe<Value: Equatable & Sendable>(
        _ keyPath: KeyPath<ProgressNode, Value> & Sendable,
        on queue: DispatchQueue,
        options: ObservationOptions = [],
        minimumInterval: Duration = .zero,
        changeHandler: @escaping @Sendable (ProgressNode, Change<Value>) -> Void
    ) -> ProgressObservation {
        let registration = ObservationRegistration(
            node: self, read: { $0[keyPath: keyPath] }, queue: queue,
            minimumInterval: minimumInterval, handler: changeHandler)
        state.withLock { state in
            state.observers.add(registration)
            // Walks that mark this node from now on take its lock to signal (see `NodeFlags.observed`).
            flags.bitwiseOr(NodeFlags.observed, ordering: .sequentiallyConsistent)
        }
        // Read the baseline after registering: a change from here on either is in the baseline or signals.
        registration.start(initial: options.contains(.initial))
        return ProgressObservation(registration)
    }
}
