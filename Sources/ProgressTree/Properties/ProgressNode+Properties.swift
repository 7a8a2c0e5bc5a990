// Properties on a node: the value a node holds (`node[P.self]`) and its subtree's summary (`summary(of:)`).
// The rules are at `ProgressProperty`; a node's own values are in PropertyValues.swift, the summaries are
// kept by the summary engine (Summaries/), which a value set reaches as an update reaches the fractions: it
// marks the node changed, and the next read brings the summaries of the changed part up to date.

extension ProgressNode {
    /// This node's value of `property`: `Property.defaultValue` until set. Setting it replaces the value
    /// (from any thread; two threads setting it at once leave one of the two values); the summaries of this
    /// node and its ancestors count the new value from then on.
    ///
    /// A value set is an update, like a count: it takes this node's lock to store the value, then marks the
    /// node changed as `advance(by:)` does; it never waits for a reader. A value set on a node that already
    /// finished or failed (and so left its parent, whose summaries counted its values then) is refused: the
    /// node keeps its value, and ProgressTree says so once per property on standard error (see
    /// Docs/Properties.md, "Values set after a node ends").
    ///
    /// A node that never sets a property pays no memory for it.
    ///
    /// - Complexity: O(properties set on this node), and an update's walk up.
    public subscript<Property: ProgressProperty>(property: Property.Type) -> Property.Value {
        get { Property._progressTreeValue(of: self) }
        set { Property._progressTreeSetValue(newValue, on: self) }
    }

    /// The summary of `property` over this node's subtree: every attached node's value (its default when it
    /// never set one) reduced and merged, merged with what the children that finished or failed left behind
    /// (`ProgressProperty.summaryLeftBehind(_:by:)`). See `ProgressProperty` for the rules.
    ///
    /// Exact: at a point where no other thread changes the subtree, it equals `reduce` and `merge` over the
    /// subtree's attached nodes and what left it. While other threads change it, each child counts once,
    /// attached or left behind, never both nor neither.
    ///
    /// - Complexity: that of `fractionCompleted` (the same read brings the summaries of the changed part up
    ///   to date), × log of the siblings of each changed node: never O(children). The first read of a node's
    ///   summary is O(attached nodes in its subtree); children that left are O(1) in total (folded into their
    ///   parent).
    public func summary<Property: ProgressProperty>(of property: Property.Type) -> Property.Summary {
        Property._progressTreeSummary(of: self)
    }

    /// Stores `value` as this node's value of `property`, then marks the node changed (the next read counts
    /// it in the summaries of the path above); refuses it when the node left its parent (RefusedValues.swift).
    @usableFromInline
    func storePropertyValue(_ value: any Sendable, of property: any ProgressProperty.Type) {
        let (refused, replaced) = state.withLock { state -> (Bool, (any Sendable)?) in
            guard state.link.kind != .detached else { return (true, nil) }
            let replaced = state.storePropertyValue(value, of: property)
            // With the value, under the lock, before the mark: whoever sees `hasValues` clear sees no value,
            // and the record that clears `summaryChanged` reads the value after (NodeFlags).
            let bits = NodeFlags.hasValues | NodeFlags.summarized | NodeFlags.summaryChanged
            if flags.load(ordering: .relaxed) & bits != bits {
                flags.bitwiseOr(bits, ordering: .sequentiallyConsistent)
            }
            return (false, replaced)
        }
        withExtendedLifetime(replaced) {}  // released after the lock: its deinit may be user code
        guard !refused else {
            RefusedValues.report(property, label: state.withLock { $0.metadata.localizedDescriptionOverride })
            return
        }
        markChanged()
    }

    /// This node's own values, lent (they never change from now on), `nil` when it set none. Takes its lock
    /// once.
    @usableFromInline
    func ownPropertyValues() -> PropertyValues? {
        state.withLock { $0.lendPropertyValues() }
    }

    /// This node's own value of `Property`, `nil` when it set none: read under its lock, lending nothing.
    @usableFromInline
    func ownValue<Property: ProgressProperty>(of _: Property.Type) -> Property.Value? {
        state.withLock { $0.propertyValues?.value(of: Property.self) }
    }
}
