extension ObservableProgress {
    /// The summary of your own property over the node's subtree (`ProgressNode.summary(of:)`), followed as
    /// the other values are: it registers an access with the registrar, so that a SwiftUI body or
    /// `withObservationTracking` hears of its next change, and reads the summary as of the last coalesced
    /// delivery.
    ///
    /// ```swift
    /// Text("\(album.observable.summary(of: PhotosSkipped.self)) skipped")
    /// ```
    ///
    /// Guarantees, as for `fractionCompleted`: at most one change notification per coalescing interval,
    /// never on an updating thread; the new summary is stored before its change is announced; the last
    /// summary arrives. A change is announced only when the summary differs (`==`) from the one stored,
    /// hence `Summary: Equatable`: a delivery caused by other work (a count moving) does not re-render a
    /// view that shows only the summary.
    ///
    /// The summary is followed from its first read on (the first read reads the node), and re-read at each
    /// delivery after that, so following one costs a `summary(of:)` per delivery (at most one per
    /// `coalescingInterval`). A delivery follows a change of the node's subtree that its observers hear of:
    /// counts, states, metadata, a property value set, a child finishing or failing.
    ///
    /// - Complexity: O(1) once followed (the stored summary).
    public func summary<Property: ProgressProperty>(of property: Property.Type) -> Property.Summary
    where Property.Summary: Equatable {
        registrar.access(self, keyPath: \.[followedSummary: ObjectIdentifier(property)])
        return bridge.summary(of: property)
    }
}
