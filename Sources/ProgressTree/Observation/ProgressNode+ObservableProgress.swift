extension ProgressNode {
    /// This node as Swift's Observation sees it, for SwiftUI views, `withObservationTracking` and
    /// `Observations`: the same `ObservableProgress` for as long as someone holds it.
    ///
    /// ```swift
    /// ProgressView(value: album.observable.fractionCompleted)
    /// ```
    ///
    /// The node's own properties are not tracked by Observation: registering every read and update with a
    /// registrar would cost work nobody watches 10–50 times what the read and the update cost (see
    /// `ObservableProgress`). The companion is where that cost is paid, once per coalesced delivery.
    ///
    /// Thread safety: any thread. Complexity: O(1); takes the node's lock.
    public var observable: ObservableProgress {
        if let existing = state.withLock({ $0.observable }) { return existing }
        let created = ObservableProgress(node: self)
        let (companion, isNew) = state.withLock { state -> (ObservableProgress, Bool) in
            if let existing = state.observable { return (existing, false) }
            state.observable = created
            registerChangeReceiverUnderLock(created.bridge, in: &state)
            return (created, true)
        }
        if isNew { changeReceiverRegistered() }
        return companion
    }
}
