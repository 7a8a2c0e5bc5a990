/// Something that wants to hear that a node's subtree changed: an observation waiting to deliver.
///
/// `signal()` is called outside every lock of the library, on the thread that made the change, at most
/// once per change of the node's dirty bit, and once per change of the node's own metadata (which marks
/// its parent, not the node: ProgressNode+MetadataChange.swift); it must be cheap and must not call user
/// code.
/// `observedNodeWentAway()` is called from the node's `deinit`, outside the node's lock, for each receiver
/// still registered then; it must not call user code either.
protocol ChangeSignalReceiver: AnyObject, Sendable {
    func signal()
    func observedNodeWentAway()
}

/// The observations registered on one node, guarded by the node's lock.
struct ObserverList {
    private(set) var receivers: [any ChangeSignalReceiver] = []

    /// The receivers to signal, or `nil` (no allocation, no work) when nobody observes.
    var signalTargets: [any ChangeSignalReceiver]? { receivers.isEmpty ? nil : receivers }

    mutating func add(_ receiver: any ChangeSignalReceiver) { receivers.append(receiver) }

    mutating func remove(_ receiver: any ChangeSignalReceiver) { receivers.removeAll { $0 === receiver } }
}

extension Array where Element == any ChangeSignalReceiver {
    func signal() {
        for receiver in self { receiver.signal() }
    }
}
