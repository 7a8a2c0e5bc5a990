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
    public var fractionCompleted: Double {
        registrar.access(self, keyPath: \.fractionCompleted)
        return bridge.value(.fractionCompleted) { $0.fractionCompleted }
    }

    /// `completedUnitCount`.
    public var completedUnitCount: Int64 {
        registrar.access(self, keyPath: \.completedUnitCount)
        return bridge.value(.completedUnitCount) { $0.completedUnitCount }
    }

    /// `totalUnitCount`.
    public var totalUnitCount: Int64 {
        registrar.access(self, keyPath: \.totalUnitCount)
        return bridge.value(.totalUnitCount) { $0.totalUnitCount }
    }

    /// `isIndeterminate`.
    public var isIndeterminate: Bool {
        registrar.access(self, keyPath: \.isIndeterminate)
        return bridge.value(.isIndeterminate) { $0.isIndeterminate }
    }

    /// `isFinished`.
    public var isFinished: Bool {
        registrar.access(self, keyPath: \.isFinished)
        return bridge.value(.isFinished) { $0.isFinished }
    }

    /// `isCancelled`.
    public var isCancelled: Bool {
        registrar.access(self, keyPath: \.isCancelled)
        return bridge.value(.isCancelled) { $0.isCancelled }
    }

    /// `isPaused`.
    public var isPaused: Bool {
        registrar.access(self, keyPath: \.isPaused)
        return bridge.value(.isPaused) { $0.isPaused }
    }

    /// `isFailed`.
    public var isFailed: Bool {
        registrar.access(self, keyPath: \.isFailed)
        return bridge.value(.isFailed) { $0.isFailed }
    }

    /// What a person reads for the failure (`nil` unless failed): the error's `errorDescription` or
    /// `description`.
    public var failureDescription: String? {
        registrar.access(self, keyPath: \.failureDescription)
        return bridge.value(.failureDescription) { $0.failureDescription }
    }

    /// `descendantOutcomes`: how many nodes below failed, were cancelled, and the first failure's reason.
    public var descendantOutcomes: ProgressNode.DescendantOutcomes {
        registrar.access(self, keyPath: \.descendantOutcomes)
        return bridge.value(.descendantOutcomes) { $0.descendantOutcomes }
    }

    /// `isCancellable`: whether to offer a cancel button.
    public var isCancellable: Bool {
        registrar.access(self, keyPath: \.isCancellable)
        return bridge.value(.isCancellable) { $0.isCancellable }
    }

    /// `isPausable`: whether to offer pause and resume buttons.
    public var isPausable: Bool {
        registrar.access(self, keyPath: \.isPausable)
        return bridge.value(.isPausable) { $0.isPausable }
    }

    /// `localizedDescription` ("Copying 9 files…", "30% completed").
    public var localizedDescription: String {
        registrar.access(self, keyPath: \.localizedDescription)
        return bridge.value(.localizedDescription) { $0.localizedDescription }
    }

    /// `localizedAdditionalDescription` ("1.61 GB of 3.22 GB (2 KB/s) — 2 minutes remaining").
    public var localizedAdditionalDescription: String {
        registrar.access(self, keyPath: \.localizedAdditionalDescription)
        return bridge.value(.localizedAdditionalDescription) { $0.localizedAdditionalDescription }
    }

    /// `throughput`, in bytes (units) per second, set or estimated.
    public var throughput: Int? {
        registrar.access(self, keyPath: \.throughput)
        return bridge.value(.throughput) { $0.throughput }
    }

    /// `estimatedTimeRemaining`, in seconds, set or estimated.
    public var estimatedTimeRemaining: Double? {
        registrar.access(self, keyPath: \.estimatedTimeRemaining)
        return bridge.value(.estimatedTimeRemaining) { $0.estimatedTimeRemaining }
    }

    /// The node's attached, unfinished children, each as its own `ObservableProgress`, in the order they
    /// were added: for a view that lists them.
    public var children: [ObservableProgress] {
        registrar.access(self, keyPath: \.children)
        return bridge.value(.children) { $0.children }
    }

    // MARK: Controls

    /// `node.cancel()`.
    public func cancel() { node.cancel() }

    /// `node.pause()`.
    public func pause() { node.pause() }

    /// `node.resume()`.
    public func resume() { node.resume() }

    // MARK: Announcing

    /// Announces to the registrar that `properties` changed (their new values are stored). On the bridge's
    /// queue, outside every lock.
    func announce(_ properties: ObservableProgressBridge.Properties) {
        func announce<Member>(
            _ property: ObservableProgressBridge.Properties, _ keyPath: KeyPath<ObservableProgress, Member>
        ) {
            if properties.contains(property) { registrar.withMutation(of: self, keyPath: keyPath) {} }
        }
        announce(.fractionCompleted, \.fractionCompleted)
        announce(.completedUnitCount, \.completedUnitCount)
        announce(.totalUnitCount, \.totalUnitCount)
        announce(.isIndeterminate, \.isIndeterminate)
        announce(.isFinished, \.isFinished)
        announce(.isCancelled, \.isCancelled)
        announce(.isPaused, \.isPaused)
        announce(.isFailed, \.isFailed)
        announce(.failureDescription, \.failureDescription)
        announce(.descendantOutcomes, \.descendantOutcomes)
        announce(.isCancellable, \.isCancellable)
        announce(.isPausable, \.isPausable)
        announce(.localizedDescription, \.localizedDescription)
        announce(.localizedAdditionalDescription, \.localizedAdditionalDescription)
        announce(.throughput, \.throughput)
        announce(.estimatedTimeRemaining, \.estimatedTimeRemaining)
        announce(.children, \.children)
    }
}
