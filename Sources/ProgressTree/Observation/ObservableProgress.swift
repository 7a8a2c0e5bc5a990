import Dispatch
import Observation

/// A node as Swift's Observation sees it: what a SwiftUI view, `withObservationTracking` or `Observations`
/// follows. Get it from the node with `node.observable` (one per node while someone holds it).
///
/// ```swift
/// struct ImportView: View {
///     let progress: ObservableProgress   // album.observable
///     var body: some View {
///         ProgressView(value: progress.fractionCompleted) { Text(progress.localizedDescription) }
///         Button("Cancel") { progress.cancel() }
///     }
/// }
/// ```
///
/// Every property reads the node's value as of the last coalesced delivery, and registers an access with
/// the registrar, so that tracking code hears of its next change. The node's own properties stay free of
/// the registrar: a read or an update that nobody tracks costs what it cost before.
///
/// Guarantees:
/// - **Coalesced.** The node's changes reach the registrar through one delivery at a time, on a queue of
///   the library's, at most once per `coalescingInterval` (a display frame): a tight update loop causes
///   at most one change notification per property per interval, never one per update, and never on the
///   updating thread.
/// - **The last value arrives.** A value is stored before its change is announced, so code that reads the
///   property when it hears of the change reads the new value. Every change is announced once more one
///   interval later (at most one notification per property per interval still), so that code that began
///   tracking while the first announcement was made (a SwiftUI body being evaluated, a loop re-arming
///   `withObservationTracking`) hears of it too.
/// - **Only what is read.** A property is kept up to date from its first read on; one nobody read costs
///   nothing (descriptions and estimates of a large tree are never computed for a view that shows only a
///   bar).
/// - **Lifetime.** It holds its node (a view showing a node keeps it alive); the node holds it weakly, so a
///   view or loop that goes away takes its `ObservableProgress` with it, and the deliveries stop.
///
/// Thread safety: every member, from any thread (a SwiftUI view reads it on the main actor, the
/// deliveries run on a queue of the library's).
public final class ObservableProgress: Observable, Identifiable, Sendable {
    /// The node this follows.
    public let node: ProgressNode
    /// Stable for the life of the node: `ForEach(progress.children)` works as is.
    public var id: ObjectIdentifier { ObjectIdentifier(node) }

    /// The least time between two deliveries to the registrar: a display frame (1/60 s).
    public static let coalescingInterval: Duration = .nanoseconds(16_666_667)

    let registrar = ObservationRegistrar()
    let bridge: ObservableProgressBridge

    /// Made by `ProgressNode.observable`, which registers `bridge` with the node.
    init(node: ProgressNode) {
        self.node = node
        bridge = ObservableProgressBridge(node: node)
        bridge.attach(to: self)
    }

    deinit {
        bridge.stop(node: node)
    }

    // MARK: Values

    /// `fractionCompleted`, including the partial work of the nodes below.
    public var fractionCompleted: Double { value(Self.properties.fractionCompleted) }

    /// `completedUnitCount`.
    public var completedUnitCount: Int64 { value(Self.properties.completedUnitCount) }

    /// `totalUnitCount`.
    public var totalUnitCount: Int64 { value(Self.properties.totalUnitCount) }

    /// `isIndeterminate`.
    public var isIndeterminate: Bool { value(Self.properties.isIndeterminate) }

    /// `isFinished`.
    public var isFinished: Bool { value(Self.properties.isFinished) }

    /// `isCancelled`.
    public var isCancelled: Bool { value(Self.properties.isCancelled) }

    /// `isPaused`.
    public var isPaused: Bool { value(Self.properties.isPaused) }

    /// `isFailed`.
    public var isFailed: Bool { value(Self.properties.isFailed) }

    /// What a person reads for the failure (`nil` unless failed): the error's `errorDescription` or
    /// `description`.
    public var failureDescription: String? { value(Self.properties.failureDescription) }

    /// `descendantOutcomes`: how many nodes below failed, were cancelled, and the first failure's reason.
    public var descendantOutcomes: ProgressNode.DescendantOutcomes { value(Self.properties.descendantOutcomes) }

    /// `isCancellable`: whether to offer a cancel button.
    public var isCancellable: Bool { value(Self.properties.isCancellable) }

    /// `isPausable`: whether to offer pause and resume buttons.
    public var isPausable: Bool { value(Self.properties.isPausable) }

    /// `localizedDescription` ("Copying 9 files…", "30% completed").
    public var localizedDescription: String { value(Self.properties.localizedDescription) }

    /// `localizedAdditionalDescription` ("1.61 GB of 3.22 GB (2 KB/s) — 2 minutes remaining").
    public var localizedAdditionalDescription: String { value(Self.properties.localizedAdditionalDescription) }

    /// `throughput`, in bytes (units) per second, set or estimated.
    public var throughput: Int? { value(Self.properties.throughput) }

    /// `estimatedTimeRemaining`, in seconds, set or estimated.
    public var estimatedTimeRemaining: Double? { value(Self.properties.estimatedTimeRemaining) }

    /// The node's attached, unfinished children, each as its own `ObservableProgress`, in the order they
    /// were added: for a view that lists them.
    public var children: [ObservableProgress] { value(Self.properties.children) }

    // MARK: Controls

    /// `node.cancel()`.
    public func cancel() { node.cancel() }

    /// `node.pause()`.
    public func pause() { node.pause() }

    /// `node.resume()`.
    public func resume() { node.resume() }

    // MARK: Reading and announcing

    /// The value of `property` for its getter: registers the access with the registrar, and reads the value
    /// as of the last delivery.
    private func value<Value>(_ property: ObservedProperty<Value>) -> Value {
        registrar.access(self, keyPath: property.keyPath)
        return bridge.value(property)
    }

    /// Announces to the registrar that `properties` changed (their new values are stored). On the bridge's
    /// queue, outside every lock.
    func announce(_ properties: ObservableProgressBridge.Properties) {
        for property in Self.propertyRows where properties.contains(property.key) {
            property.announceChange(of: self)
        }
    }
}

extension ObservableProgress {
    /// The properties that follow the node, one row each; a getter above reads its row and nothing else.
    /// A row is all the bridge knows of its property: its bit (`key`, in `ObservableProgressBridge.Properties`),
    /// its key path for the registrar, and where its value comes from (a member of the node's snapshot, kept
    /// up to date with the snapshot's other members, or a read of the node with its value until then).
    /// Adding a property is a row here and its one-line getter.
    ///
    /// The rows' bits are their order, from 0 (`propertyRows` checks it).
    struct PropertyTable: Sendable {
        let fractionCompleted = ObservedProperty(0, \.fractionCompleted, .snapshot(\.fractionCompleted))
        let completedUnitCount = ObservedProperty(1, \.completedUnitCount, .snapshot(\.completedUnitCount))
        let totalUnitCount = ObservedProperty(2, \.totalUnitCount, .snapshot(\.totalUnitCount))
        let isIndeterminate = ObservedProperty(3, \.isIndeterminate, .snapshot(\.isIndeterminate))
        let isFinished = ObservedProperty(4, \.isFinished, .snapshot(\.isFinished))
        let isCancelled = ObservedProperty(5, \.isCancelled, .snapshot(\.isCancelled))
        let isPaused = ObservedProperty(6, \.isPaused, .snapshot(\.isPaused))
        let isFailed = ObservedProperty(7, \.isFailed, .snapshot(\.isFailed))
        let failureDescription = ObservedProperty(8, \.failureDescription, .snapshot(\.failureDescription))
        let descendantOutcomes = ObservedProperty(9, \.descendantOutcomes, .snapshot(\.descendantOutcomes))
        let isCancellable = ObservedProperty(10, \.isCancellable, .node(initial: true) { $0.isCancellable })
        let isPausable = ObservedProperty(11, \.isPausable, .node(initial: false) { $0.isPausable })
        let localizedDescription = ObservedProperty(
            12, \.localizedDescription, .node(initial: "") { $0.localizedDescription })
        let localizedAdditionalDescription = ObservedProperty(
            13, \.localizedAdditionalDescription, .node(initial: "") { $0.localizedAdditionalDescription })
        let throughput = ObservedProperty(14, \.throughput, .node(initial: nil) { $0.throughput })
        let estimatedTimeRemaining = ObservedProperty(
            15, \.estimatedTimeRemaining, .node(initial: nil) { $0.estimatedTimeRemaining })
        let children = ObservedProperty(
            16, \.children, .node(initial: []) { $0.children.map(\.observable) },
            same: { $0.elementsEqual($1, by: ===) })
    }

    /// The table the getters read their rows from.
    static let properties = PropertyTable()

    /// The rows of `properties`, in bit order: what a delivery reads, compares and announces. Listed from
    /// the table's stored properties (once), so that a row is written in one place.
    static let propertyRows: [any ObservedPropertyRow] = {
        let rows = Mirror(reflecting: properties).children.map { child -> any ObservedPropertyRow in
            guard let row = child.value as? any ObservedPropertyRow else {
                preconditionFailure("ObservableProgress.PropertyTable.\(child.label ?? "?") is not an ObservedProperty")
            }
            return row
        }
        precondition(
            rows.map(\.key) == rows.indices.map { ObservableProgressBridge.Properties(bit: $0) },
            "the rows of ObservableProgress.PropertyTable are numbered 0, 1, 2… in order")
        // A value boxed in `Values.others` would cost an allocation in every delivery that reads it.
        precondition(
            rows.allSatisfy(\.storesInline),
            "a property read from the node has a value of at most three words (or is a member of the snapshot)")
        return rows
    }()
}
