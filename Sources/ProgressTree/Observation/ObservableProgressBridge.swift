import Dispatch
import Synchronization

/// Keeps an `ObservableProgress` up to date: an observer of its node (a `ChangeSignalReceiver`, as
/// `observe` registers) whose coalesced deliveries read the node, store what changed and announce it to
/// the companion's registrar.
///
/// Invariants:
/// - The updating thread only signals (one atomic exchange, and a `queue.async` when no delivery is pending);
///   reading the node, comparing and announcing happen on `queue`, one delivery at a time.
/// - Deliveries are at least `ObservableProgress.coalescingInterval` apart, and each announces a property at
///   most once: at most one notification per property per interval.
/// - A value is stored (under `state`'s lock) before its change is announced, and the pending mark is
///   cleared before the node is read, so a change after the read schedules another delivery: the last
///   value is always stored and announced.
/// - What a delivery announced is announced once more by the next one (scheduled one interval later), for
///   code that read the property before the first announcement and began tracking after it.
/// - Only properties read at least once (`tracked`) are read from the node.
/// - The bridge holds neither the node nor the companion (the node holds the bridge in its observers, the
///   companion holds the node and the bridge), so a companion nobody holds goes away, and its `deinit`
///   takes the bridge out of the node's observers.
final class ObservableProgressBridge: ChangeSignalReceiver {
    /// The properties of `ObservableProgress`, one bit each.
    struct Properties: OptionSet, Sendable {
        let rawValue: UInt32
        static let fractionCompleted = Properties(rawValue: 1 << 0)
        static let completedUnitCount = Properties(rawValue: 1 << 1)
        static let totalUnitCount = Properties(rawValue: 1 << 2)
        static let isIndeterminate = Properties(rawValue: 1 << 3)
        static let isFinished = Properties(rawValue: 1 << 4)
        static let isCancelled = Properties(rawValue: 1 << 5)
        static let isPaused = Properties(rawValue: 1 << 6)
        static let isFailed = Properties(rawValue: 1 << 7)
        static let failureDescription = Properties(rawValue: 1 << 8)
        static let descendantOutcomes = Properties(rawValue: 1 << 9)
        static let isCancellable = Properties(rawValue: 1 << 10)
        static let isPausable = Properties(rawValue: 1 << 11)
        static let localizedDescription = Properties(rawValue: 1 << 12)
        static let localizedAdditionalDescription = Properties(rawValue: 1 << 13)
        static let throughput = Properties(rawValue: 1 << 14)
        static let estimatedTimeRemaining = Properties(rawValue: 1 << 15)
        static let children = Properties(rawValue: 1 << 16)

        /// The final outcomes.
        static let finalOutcomes: Properties = [.isFinished, .isCancelled, .isFailed]

        /// What one `snapshot` of the node gives.
        static let inSnapshot: Properties = [
            .fractionCompleted, .completedUnitCount, .totalUnitCount, .isIndeterminate, .isFinished,
            .isCancelled, .isPaused, .isFailed, .failureDescription, .descendantOutcomes,
        ]
    }

    /// The values of the properties, as of the last delivery (or their first read).
    struct Values: Sendable {
        var fractionCompleted = 0.0
        var completedUnitCount: Int64 = 0
        var totalUnitCount: Int64 = 0
        var isIndeterminate = true
        var isFinished = false
        var isCancelled = false
        var isPaused = false
        var isFailed = false
        var failureDescription: String?
        var descendantOutcomes = ProgressNode.DescendantOutcomes()
        var isCancellable = true
        var isPausable = false
        var localizedDescription = ""
        var localizedAdditionalDescription = ""
        var throughput: Int?
        var estimatedTimeRemaining: Double?
        var children: [ObservableProgress] = []

        /// The node's values of `properties` (the others keep their defaults). Outside every lock of the
        /// bridge: it reads the node (and makes the companions of its children).
        init(_ properties: Properties, of node: ProgressNode) {
            if !properties.isDisjoint(with: Properties.inSnapshot) {
                let snapshot = node.snapshot
                fractionCompleted = snapshot.fractionCompleted
                completedUnitCount = snapshot.completedUnitCount
                totalUnitCount = snapshot.totalUnitCount
                isIndeterminate = snapshot.isIndeterminate
                isFinished = snapshot.isFinished
                isCancelled = snapshot.isCancelled
                isPaused = snapshot.isPaused
                isFailed = snapshot.isFailed
                failureDescription = snapshot.failureDescription
                descendantOutcomes = snapshot.descendantOutcomes
            }
            if properties.contains(.isCancellable) { isCancellable = node.isCancellable }
            if properties.contains(.isPausable) { isPausable = node.isPausable }
            if properties.contains(.localizedDescription) { localizedDescription = node.localizedDescription }
            if properties.contains(.localizedAdditionalDescription) {
                localizedAdditionalDescription = node.localizedAdditionalDescription
            }
            if properties.contains(.throughput) { throughput = node.throughput }
            if properties.contains(.estimatedTimeRemaining) { estimatedTimeRemaining = node.estimatedTimeRemaining }
            if properties.contains(.children) { children = node.children.map(\.observable) }
        }

        init() {}

        /// Which final outcomes these values say.
        var finalOutcomes: Properties {
            var outcomes = Properties()
            if isFinished { outcomes.insert(.isFinished) }
            if isCancelled { outcomes.insert(.isCancelled) }
            if isFailed { outcomes.insert(.isFailed) }
            return outcomes
        }

        /// Takes the values of `properties` from `fresh`; returns those that differed.
        mutating func update(from fresh: Values, _ properties: Properties) -> Properties {
            var changed = Properties()
            func take<Value: Equatable>(_ property: Properties, _ keyPath: WritableKeyPath<Values, Value>) {
                guard properties.contains(property), self[keyPath: keyPath] != fresh[keyPath: keyPath] else { return }
                self[keyPath: keyPath] = fresh[keyPath: keyPath]
                changed.insert(property)
            }
            take(.fractionCompleted, \.fractionCompleted)
            take(.completedUnitCount, \.completedUnitCount)
            take(.totalUnitCount, \.totalUnitCount)
            take(.isIndeterminate, \.isIndeterminate)
            take(.isFinished, \.isFinished)
            take(.isCancelled, \.isCancelled)
            take(.isPaused, \.isPaused)
            take(.isFailed, \.isFailed)
            take(.failureDescription, \.failureDescription)
            take(.descendantOutcomes, \.descendantOutcomes)
            take(.isCancellable, \.isCancellable)
            take(.isPausable, \.isPausable)
            take(.localizedDescription, \.localizedDescription)
            take(.localizedAdditionalDescription, \.localizedAdditionalDescription)
            take(.throughput, \.throughput)
            take(.estimatedTimeRemaining, \.estimatedTimeRemaining)
            if properties.contains(.children),
                !children.elementsEqual(fresh.children, by: { $0 === $1 })
            {
                children = fresh.children
                changed.insert(.children)
            }
            return changed
        }
    }

    private struct State {
        var values = Values()
        /// The final outcomes (finished, cancelled, failed) the last delivery found but held back: a final
        /// outcome is stored one delivery after the values that lead to it.
        var finalSeen = Properties()
        /// The properties read at least once: kept up to date by the deliveries.
        var tracked = Properties()
        /// What the last delivery announced as changed: the next delivery announces it again.
        var echo = Properties()
        var lastDelivery: ContinuousClock.Instant?
        var isStopped = false
    }

    private let state = Lock(State())
    private let isDeliveryPending = Atomic<Bool>(false)
    /// Serial: deliveries never overlap.
    private let queue = DispatchQueue(label: "ProgressTree.ObservableProgress", target: .global())
    /// Assigned once, before the bridge is shared (`start`), and only read afterwards.
    nonisolated(unsafe) private weak var companion: ObservableProgress?
    nonisolated(unsafe) private weak var node: ProgressNode?

    init(node: ProgressNode) {
        self.node = node
    }

    /// Sets the companion to announce to. Called once, before the bridge is registered with the node.
    func attach(to companion: ObservableProgress) {
        self.companion = companion
    }

    /// The value of `property` for a getter of the companion. Its first read reads the node and starts
    /// keeping the property up to date (a delivery follows, which catches a change made meanwhile).
    ///
    /// The properties of one snapshot are kept up to date together, from the first read of any of them:
    /// read together, they agree with each other (never finished at 62%), as one `snapshot` does.
    func value<Value>(_ property: Properties, _ get: (Values) -> Value) -> Value {
        if let known = state.withLock({ $0.tracked.contains(property) ? Optional(get($0.values)) : nil }) {
            return known
        }
        guard let node else { return get(Values()) }
        let properties = Properties.inSnapshot.contains(property) ? Properties.inSnapshot : property
        let fresh = Values(properties, of: node)
        let value = state.withLock { state -> Value in
            let new = properties.subtracting(state.tracked)
            _ = state.values.update(from: fresh, new)
            state.tracked.formUnion(new)
            return get(state.values)
        }
        signal()
        return value
    }

    /// The properties kept up to date: those read at least once.
    var trackedProperties: Properties { state.withLock { $0.tracked } }

    // MARK: Deliveries

    func signal() {
        if !isDeliveryPending.exchange(true, ordering: .acquiringAndReleasing) { schedule() }
    }

    /// Runs the next delivery on the queue, no sooner than one interval after the last.
    private func schedule() {
        let earliest = state.withLock { $0.lastDelivery.map { $0 + ObservableProgress.coalescingInterval } }
        let now = ContinuousClock.now
        guard let earliest, earliest > now else {
            queue.async { self.deliver() }
            return
        }
        let (seconds, attoseconds) = (earliest - now).components
        let wait = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        queue.asyncAfter(deadline: .now() + wait) { self.deliver() }
    }

    private func deliver() {
        // The interval is counted from here, before the pending mark is cleared: a signal from here on
        // schedules the next delivery an interval after this one.
        let tracked = state.withLock { state -> Properties? in
            state.lastDelivery = .now
            return state.isStopped ? nil : state.tracked
        }
        // Cleared before the node is read: a change made after the read schedules another delivery.
        // Sequentially consistent: a store followed by reads of the node, against an update's write of the
        // node followed by the exchange in `signal()` (as in `ObservationRegistration`).
        isDeliveryPending.store(false, ordering: .sequentiallyConsistent)
        guard let tracked, let node else { return }
        var fresh = Values(tracked, of: node)
        let (changed, announced, heldBack) = state.withLock { state -> (Properties, Properties, Bool) in
            // A final outcome is stored one delivery after it was first found, so that the values leading to
            // it (a fraction of 1, the last counts) were stored and announced an interval before it: code
            // that reads a fraction and then `isFinished` never reads a fraction short of the end with it.
            let found = fresh.finalOutcomes
            let heldBack = found.subtracting(state.finalSeen).subtracting(state.values.finalOutcomes).intersection(
                tracked)
            if heldBack.contains(.isFinished) { fresh.isFinished = false }
            if heldBack.contains(.isCancelled) { fresh.isCancelled = false }
            if heldBack.contains(.isFailed) {
                fresh.isFailed = false
                fresh.failureDescription = state.values.failureDescription
            }
            state.finalSeen = found
            let changed = state.values.update(from: fresh, tracked)
            let announced = changed.union(state.echo)
            state.echo = changed
            return (changed, announced, !heldBack.isEmpty)
        }
        if !announced.isEmpty, let companion { companion.announce(announced) }
        // The echo of what changed, and a final outcome held back, one interval later.
        if !changed.isEmpty || heldBack { signal() }
    }

    /// Whether a delivery is scheduled and has not begun (for tests).
    var hasDeliveryScheduled: Bool { isDeliveryPending.load(ordering: .sequentiallyConsistent) }

    /// Returns once the delivery running, if any, has ended (for tests).
    func waitForRunningDelivery() { queue.sync {} }

    /// Nothing to do: the companion holds the node, so it outlives the companion's bridge registration.
    func observedNodeWentAway() {}

    /// Stops the deliveries and takes the bridge out of the node's observers: the companion is going away.
    func stop(node: ProgressNode) {
        state.withLock { $0.isStopped = true }
        node.removeChangeReceiver(self)
    }
}
