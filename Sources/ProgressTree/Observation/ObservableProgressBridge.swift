import Dispatch
import Synchronization
import ProgressTreePlatform

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
/// - Only properties read at least once (`tracked`) are read from the node; so are the summaries of custom
///   properties (`followedSummaries`, see `FollowedSummary`), stored, compared and announced as they are.
/// - The bridge holds neither the node nor the companion (the node holds the bridge in its observers, the
///   companion holds the node and the bridge), so a companion nobody holds goes away, and its `deinit`
///   takes the bridge out of the node's observers.
final class ObservableProgressBridge: ChangeSignalReceiver {
    /// Properties of `ObservableProgress`, one bit each: a row's `key` in `ObservableProgress.PropertyTable`.
    struct Properties: OptionSet, Sendable {
        let rawValue: UInt64

        init(rawValue: UInt64) { self.rawValue = rawValue }

        /// The property whose row is number `bit`.
        init(bit: Int) { rawValue = 1 << bit }

        static let isFinished = ObservableProgress.properties.isFinished.key
        static let isCancelled = ObservableProgress.properties.isCancelled.key
        static let isFailed = ObservableProgress.properties.isFailed.key

        /// What one `snapshot` of the node gives.
        static let inSnapshot = ObservableProgress.propertyRows.reduce(into: Properties()) { set, row in
            if row.isInSnapshot { set.insert(row.key) }
        }
    }

    /// The values of the properties, as of the last delivery (or their first read).
    struct Values: Sendable {
        /// The snapshot properties' values.
        var snapshot: ProgressNode.Snapshot
        /// The other properties' values, at their rows' bits (each of the correct type, as `ObservedProperty`
        /// stores and reads them); a snapshot property's slot holds `()`.
        var others: [any Sendable]

        /// The values before anything was read: every property's initial value.
        static let initial = Values(
            snapshot: ProgressNode.Snapshot(
                totalUnitCount: 0, completedUnitCount: 0, fractionCompleted: 0, isIndeterminate: true,
                isFinished: false, isCancelled: false, isPaused: false),
            others: ObservableProgress.propertyRows.map(\.initialSlot))

        /// Reads the node's values of `properties` (the others keep theirs). Outside every lock of the
        /// bridge: it reads the node (and makes the companions of its children).
        mutating func read(_ properties: Properties, of node: ProgressNode) {
            if !properties.isDisjoint(with: Properties.inSnapshot) { snapshot = node.snapshot }
            for row in ObservableProgress.propertyRows where !row.isInSnapshot && properties.contains(row.key) {
                row.read(node, into: &self)
            }
        }

        /// Which final outcomes these values say.
        var finalOutcomes: Properties {
            var outcomes = Properties()
            if snapshot.isFinished { outcomes.insert(.isFinished) }
            if snapshot.isCancelled { outcomes.insert(.isCancelled) }
            if snapshot.isFailed { outcomes.insert(.isFailed) }
            return outcomes
        }

        /// Takes the values of `properties` from `fresh`; returns those that differed.
        mutating func update(from fresh: Values, _ properties: Properties) -> Properties {
            var changed = Properties()
            for row in ObservableProgress.propertyRows
            where properties.contains(row.key) && row.take(from: fresh, into: &self) {
                changed.insert(row.key)
            }
            return changed
        }
    }

    private struct State {
        var values = Values.initial
        /// What a delivery reads the node into, kept from one delivery to the next so that a delivery
        /// allocates no storage for it (a delivery takes it, and gives it back, under the lock).
        var spare = Values.initial
        /// The final outcomes (finished, cancelled, failed) the last delivery found but held back: a final
        /// outcome is stored one delivery after the values that lead to it.
        var finalSeen = Properties()
        /// The properties read at least once: kept up to date by the deliveries.
        var tracked = Properties()
        /// What the last delivery announced as changed: the next delivery announces it again.
        var echo = Properties()
        /// The summaries of custom properties read at least once (`ObservableProgress.summary(of:)`), by
        /// property: kept up to date by the deliveries, as `tracked` properties are.
        var followedSummaries: [ObjectIdentifier: any FollowedSummary] = [:]
        /// The summaries the last delivery announced as changed: the next delivery announces them again.
        var summaryEcho: Set<ObjectIdentifier> = []
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

    init(node: ProgressNode) { self.node = node }

    /// Sets the companion to announce to. Called once, before the bridge is registered with the node.
    func attach(to companion: ObservableProgress) { self.companion = companion }

    /// The value of `property` for a getter of the companion. Its first read reads the node and starts
    /// keeping the property up to date (a delivery follows, which catches a change made meanwhile).
    ///
    /// The properties of one snapshot are kept up to date together, from the first read of any of them:
    /// read together, they agree with each other (never finished at 62%), as one `snapshot` does.
    func value<Value>(_ property: ObservedProperty<Value>) -> Value {
        let known = state.withLock { $0.tracked.contains(property.key) ? Optional(property.value(in: $0.values)) : nil }
        if let known { return known }
        guard let node else { return property.value(in: Values.initial) }
        let properties = property.isInSnapshot ? Properties.inSnapshot : property.key
        var fresh = Values.initial
        fresh.read(properties, of: node)
        let value = state.withLock { state -> Value in
            let new = properties.subtracting(state.tracked)
            _ = state.values.update(from: fresh, new)
            state.tracked.formUnion(new)
            return property.value(in: state.values)
        }
        signal()
        return value
    }

    /// The properties kept up to date: those read at least once.
    var trackedProperties: Properties { state.withLock { $0.tracked } }

    /// The summary of `property` for `ObservableProgress.summary(of:)`. Its first read reads the node and
    /// starts following it (a delivery follows, which catches a change made meanwhile), as `value(_:)` does.
    func summary<Property: ProgressProperty>(of property: Property.Type) -> Property.Summary
    where Property.Summary: Equatable {
        let key = ObjectIdentifier(property)
        if let known = state.withLock({ $0.followedSummaries[key] }) {
            return FollowedSummaryOf<Property>(known).value
        }
        guard let node else { return Property.defaultSummary }
        let fresh = FollowedSummaryOf<Property>(reading: node)
        let followed = state.withLock { state -> any FollowedSummary in
            if let known = state.followedSummaries[key] { return known }
            state.followedSummaries[key] = fresh
            return fresh
        }
        signal()
        return FollowedSummaryOf<Property>(followed).value
    }

    /// The custom properties whose summaries are kept up to date: those read at least once.
    var followedSummaryProperties: Set<ObjectIdentifier> { state.withLock { Set($0.followedSummaries.keys) } }

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
        let taken = state.withLock {
            state -> (tracked: Properties, fresh: Values, summaries: [ObjectIdentifier: any FollowedSummary])? in
            state.lastDelivery = .now
            guard !state.isStopped else { return nil }
            // Moved out, not copied: the delivery writes into the spare's storage.
            let spare = state.spare
            state.spare = .initial
            return (state.tracked, spare, state.followedSummaries)
        }
        // Cleared before the node is read: a change made after the read schedules another delivery.
        // Sequentially consistent: a store followed by reads of the node, against an update's write of the
        // node followed by the exchange in `signal()` (as in `ObservationRegistration`).
        isDeliveryPending.store(false, ordering: .sequentiallyConsistent)
        guard case (let tracked, var fresh, let summaries)? = taken, let node else { return }
        fresh.read(tracked, of: node)
        // Empty, without an allocation, unless a summary is followed.
        let freshSummaries = summaries.mapValues { type(of: $0).init(reading: node) }
        let (changedSummaries, announcedSummaries) =
            freshSummaries.isEmpty
            ? ([], [])
            : state.withLock {
                state -> (Set<ObjectIdentifier>, Set<ObjectIdentifier>) in
                var changed = Set<ObjectIdentifier>()
                for (key, summary) in freshSummaries
                where state.followedSummaries[key].map({ !summary.isSame(as: $0) }) ?? false {
                    state.followedSummaries[key] = summary
                    changed.insert(key)
                }
                let announced = changed.union(state.summaryEcho)
                state.summaryEcho = changed
                return (changed, announced)
            }
        let (changed, announced, heldBack) = state.withLock { state -> (Properties, Properties, Bool) in
            // A final outcome is stored one delivery after it was first found, so that the values leading to
            // it (a fraction of 1, the last counts) were stored and announced an interval before it: code
            // that reads a fraction and then `isFinished` never reads a fraction short of the end with it.
            let found = fresh.finalOutcomes
            let heldBack = found.intersection(tracked).subtracting(state.finalSeen.union(state.values.finalOutcomes))
            if heldBack.contains(.isFinished) { fresh.snapshot.isFinished = false }
            if heldBack.contains(.isCancelled) { fresh.snapshot.isCancelled = false }
            if heldBack.contains(.isFailed) {
                fresh.snapshot.isFailed = false
                fresh.snapshot.failureDescription = state.values.snapshot.failureDescription
            }
            state.finalSeen = found
            let changed = state.values.update(from: fresh, tracked)
            let announced = changed.union(state.echo)
            state.echo = changed
            state.spare = fresh
            return (changed, announced, !heldBack.isEmpty)
        }
        if let companion {
            if !announced.isEmpty { companion.announce(announced) }
            if !announcedSummaries.isEmpty { companion.announceSummaries(announcedSummaries) }
        }
        // The echo of what changed, and a final outcome held back, one interval later.
        if !changed.isEmpty || !changedSummaries.isEmpty || heldBack { signal() }
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

/// One row of `ObservableProgress.PropertyTable`: a property of `ObservableProgress`, as the bridge reads,
/// stores, compares and announces it.
struct ObservedProperty<Value: Sendable>: ObservedPropertyRow {
    /// Where the value comes from.
    enum Source: Sendable {
        /// A member of the node's snapshot, stored in `Values.snapshot`.
        case snapshot(WritableKeyPath<ProgressNode.Snapshot, Value> & Sendable)
        /// A read of the node, stored in `Values.others` (`initial` until the first read).
        case node(initial: Value, read: @Sendable (ProgressNode) -> Value)
    }

    /// Its row's number: its bit in `ObservableProgressBridge.Properties`, its slot in `Values.others`.
    private let bit: Int
    /// The property, for the registrar.
    let keyPath: KeyPath<ObservableProgress, Value> & Sendable
    let source: Source
    /// Whether two values are the same (a change is announced when they are not).
    let same: @Sendable (Value, Value) -> Bool

    var key: ObservableProgressBridge.Properties { ObservableProgressBridge.Properties(bit: bit) }

    /// The property numbered `bit`, from `source`, compared with `==`.
    init(_ bit: Int, _ keyPath: KeyPath<ObservableProgress, Value> & Sendable, _ source: Source)
    where Value: Equatable {
        self.init(bit, keyPath, source, same: ==)
    }

    /// The property numbered `bit`, from `source`, compared by `same`.
    init(
        _ bit: Int, _ keyPath: KeyPath<ObservableProgress, Value> & Sendable, _ source: Source,
        same: @escaping @Sendable (Value, Value) -> Bool
    ) {
        self.bit = bit
        self.keyPath = keyPath
        self.source = source
        self.same = same
    }

    /// Its value in `values`.
    func value(in values: ObservableProgressBridge.Values) -> Value {
        switch source {
        case .snapshot(let member): return values.snapshot[keyPath: member]
        // The slot holds a `Value`: `initialSlot` and `read` are the only writers of it, and `take` copies it.
        case .node:
            guard let value = values.others[bit] as? Value else {
                preconditionFailure("ObservableProgress: the slot of property \(bit) holds no \(Value.self)")
            }
            return value
        }
    }

    // MARK: ObservedPropertyRow

    var isInSnapshot: Bool { if case .snapshot = source { true } else { false } }

    var storesInline: Bool {
        if case .snapshot = source { return true }
        return MemoryLayout<Value>.size <= MemoryLayout<(Int, Int, Int)>.size
            && MemoryLayout<Value>.alignment <= MemoryLayout<Int>.alignment
    }

    var initialSlot: any Sendable {
        if case .node(let initial, _) = source { initial } else { () }
    }

    func read(_ node: ProgressNode, into values: inout ObservableProgressBridge.Values) {
        if case .node(_, let read) = source { values.others[bit] = read(node) }
    }

    func take(from fresh: ObservableProgressBridge.Values, into values: inout ObservableProgressBridge.Values) -> Bool {
        let new = value(in: fresh)
        guard !same(value(in: values), new) else { return false }
        switch source {
        case .snapshot(let member): values.snapshot[keyPath: member] = new
        case .node: values.others[bit] = new
        }
        return true
    }

    func announceChange(of progress: ObservableProgress) {
        progress.registrar.withMutation(of: progress, keyPath: keyPath) {}
    }
}

/// A row of `ObservableProgress.PropertyTable` whatever its value's type: what a delivery does with each.
protocol ObservedPropertyRow: Sendable {
    /// The property's bit.
    var key: ObservableProgressBridge.Properties { get }
    /// Whether its value comes with the node's snapshot (read once for all of them).
    var isInSnapshot: Bool { get }
    /// Whether its value is stored without an allocation: a member of the snapshot, or a value that fits
    /// the inline buffer of an `any Sendable` (three words) in `Values.others`.
    var storesInline: Bool { get }
    /// Its slot in `Values.others` before anything was read.
    var initialSlot: any Sendable { get }
    /// Reads its value from the node into `values` (nothing for a snapshot property: the caller reads the
    /// snapshot).
    func read(_ node: ProgressNode, into values: inout ObservableProgressBridge.Values)
    /// Takes its value from `fresh` into `values` when they differ; returns whether they did.
    func take(from fresh: ObservableProgressBridge.Values, into values: inout ObservableProgressBridge.Values) -> Bool
    /// Announces its change to the companion's registrar.
    func announceChange(of progress: ObservableProgress)
}
