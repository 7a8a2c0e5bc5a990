// Custom properties on a node: the value a node holds (`node[P.self]`) and its subtree's summary
// (`summary(of:)`). The rules are at `ProgressProperty`; storage and folds in PropertyStore.swift.
//
// One engine keeps a node's file summary and its property summaries (Summaries/FileSums.swift): a read of
// `summary(of:)` is a read of the kept summary, O(changes since the last read). A value set counts at once
// in the kept summaries of the path above it, as far as they are kept (ProgressNode+PropertyPath.swift), so
// the writer pays for its change and the next read of an ancestor finds nothing to compute.

extension ProgressNode {
    /// This node's value of `property`: `Property.defaultValue` until set. Setting it replaces the value
    /// (from any thread; two threads setting it at once leave one of the two values); the summaries of this
    /// node and its ancestors count the new value from then on.
    ///
    /// A node that never sets a property pays no memory for it: the first value set allocates the node's
    /// storage for rarely used data, if it has none yet.
    ///
    /// - Complexity: O(depth × log of the siblings on the path): its tree's refresh lock, and inside it this
    ///   node's lock, then each ancestor's, one at a time, to count the value in the ancestors' kept summaries
    ///   at once (the first value set below a parent that keeps no summary yet starts one: O(its
    ///   children), once).
    public subscript<Property: ProgressProperty>(property: Property.Type) -> Property.Value {
        get {
            if let key = Self.builtInFileCountKey(property) { return builtInFileCount(key) as! Property.Value }
            return state.withLock { state in
                state.propertyEntries?[ObjectIdentifier(property)]?.value.map { $0 as! Property.Value }
            } ?? Property.defaultValue
        }
        set {
            if let key = Self.builtInFileCountKey(property) {
                setUserInfoObject(newValue, forKey: key)  // one storage with `fileTotalCount`
                return
            }
            // The property's own, specialized copy of the set (Properties/PropertyPathStep.swift).
            Property._progressTreeSetValue(newValue, on: self)
        }
    }

    /// The summary of `property` over this node's subtree: every attached node's value (its default when it
    /// never set one) reduced and merged, merged with what the children that finished or failed left behind
    /// (`ProgressProperty.summaryLeftBehind(_:by:)`). See `ProgressProperty` for the rules.
    ///
    /// Exact: at a point where no other thread changes the subtree, it equals `reduce` and `merge` over the
    /// subtree's attached nodes and what left it. While other threads change it, each child counts once,
    /// attached or left behind, never both nor neither.
    ///
    /// - Complexity: that of `fractionCompleted`, plus O(nodes changed below this one since the last read
    ///   of its summary, × log of their siblings): never O(children). The first read of a node is
    ///   O(attached nodes in its subtree); children that left are O(1) in total (folded into their
    ///   parent). The same read as `fileSummary`'s, which it keeps up to date too.
    public func summary<Property: ProgressProperty>(of property: Property.Type) -> Property.Summary {
        if let builtIn = Self.builtInFileCountKey(property) {
            return builtInFileCountSummary(builtIn) as! Property.Summary
        }
        // The property's own, specialized copy of the read (Properties/PropertyPathStep.swift).
        return Property._progressTreeSummary(of: self)
    }
}
