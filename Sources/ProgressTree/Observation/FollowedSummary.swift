/// The summary of one custom property (`ProgressProperty`) that an `ObservableProgress` follows: what its
/// bridge stores, re-reads at each delivery, compares and announces, as it does for a row of
/// `ObservableProgress.PropertyTable`. The rows are fixed (one bit each); the properties a program declares
/// are not known in advance, so their summaries are kept apart, by property (`ObservableProgressBridge`,
/// `followedSummaries`), each followed from its first read on.
///
/// A summary is announced only when it differs from the one stored (`==`): which is why
/// `ObservableProgress.summary(of:)` asks for an `Equatable` summary, as `ProgressNode.observe` asks for an
/// `Equatable` value.
protocol FollowedSummary: Sendable {
    /// The summary of the property, read from `node` now. Outside every lock of the bridge (it runs the
    /// property's `reduce` and `merge`).
    init(reading node: ProgressNode)
    /// Whether `other` holds the same summary of the same property.
    func isSame(as other: any FollowedSummary) -> Bool
}

/// The followed summary of `Property`.
struct FollowedSummaryOf<Property: ProgressProperty>: FollowedSummary where Property.Summary: Equatable {
    /// The summary as of the last delivery (or the first read).
    let value: Property.Summary

    /// The summary read from `node` now.
    ///
    /// The node's fraction is read first: a change below a node signals its observers when it marks the
    /// node changed, and a node is marked once until it is read again. So a bridge that follows only
    /// summaries (whose walk does not read the fractions) reads it, and the next change signals again (a
    /// change after this read signals; one before the summary's walk is in the summary too).
    init(reading node: ProgressNode) {
        _ = node.refresh()
        value = node.summary(of: Property.self)
    }

    /// `followed` as the type it is: the entry kept for `Property`'s key (only `summary(of:)` adds one for
    /// the key, and a delivery replaces it with one of the same type, `init(reading:)` of its type).
    init(_ followed: any FollowedSummary) {
        guard let typed = followed as? Self else {
            preconditionFailure(
                "ObservableProgress: the summary followed for \(Property.self) is of \(type(of: followed))")
        }
        self = typed
    }

    func isSame(as other: any FollowedSummary) -> Bool {
        (other as? Self)?.value == value
    }
}

extension ObservableProgress {
    /// What the registrar is told a followed summary's key path is: `\.[followedSummary: property]`, one per
    /// property type, equal for equal types. Read by nobody (a summary is read with `summary(of:)`).
    subscript(followedSummary property: ObjectIdentifier) -> ObjectIdentifier { property }

    /// Announces to the registrar that the summaries of `properties` changed (their new values are stored).
    /// On the bridge's queue, outside every lock.
    func announceSummaries(_ properties: Set<ObjectIdentifier>) {
        for property in properties {
            registrar.withMutation(of: self, keyPath: \.[followedSummary: property]) {}
        }
    }
}
