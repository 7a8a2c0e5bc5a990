// Custom properties on a node: the value a node holds (`node[P.self]`) and its subtree's summary
// (`summary(of:)`). The rules are at `ProgressProperty`; storage, folds and the walk in PropertyStore.swift.
//
// The read is the exact first version: a walk of the attached subtree, one node lock at a time. It takes
// what each node holds under that node's lock (its value and what its children left, read in the critical
// section that lists its attached children), so a concurrent read counts each child once: attached or
// folded. The kept-summary engine of the file summaries (Summaries/FileSums.swift) can replace the walk
// behind the same two members, making a read O(changes since the last read).

extension ProgressNode {
    /// This node's value of `property`: `Property.defaultValue` until set. Setting it replaces the value
    /// (from any thread; two threads setting it at once leave one of the two values); the summaries of this
    /// node and its ancestors count the new value from then on.
    ///
    /// A node that never sets a property pays no memory for it: the first value set allocates the node's
    /// storage for rarely used data, if it has none yet.
    ///
    /// - Complexity: O(1) (a hashed look-up); takes this node's lock once.
    public subscript<Property: ProgressProperty>(property: Property.Type) -> Property.Value {
        get {
            state.withLock { state in
                state.propertyEntries?[ObjectIdentifier(property)]?.value.map { $0 as! Property.Value }
            } ?? Property.defaultValue
        }
        set {
            PropertyGate.noteSet()  // before the value can be seen: folds look for it from here on
            let key = ObjectIdentifier(property)
            state.withLock { state in
                let extras = state.metadata.extrasForWriting()
                if extras.properties[key] != nil {
                    extras.properties[key]!.value = newValue
                } else {
                    extras.properties[key] = PropertyEntry(
                        operations: PropertyOperationsOf<Property>.self, value: newValue)
                }
            }
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
    /// - Complexity: O(attached nodes in the subtree): a walk that takes each node's lock once, one at a
    ///   time, iteratively (a 10,000-deep chain is fine).
    public func summary<Property: ProgressProperty>(of property: Property.Type) -> Property.Summary {
        let key = ObjectIdentifier(property)
        return Self.summarize(propertyWalk(), merge: Property.merge) { entries, below in
            PropertyOperationsOf<Property>.typedSummary(entries?[key], below: below)
        }
    }
}
