// A value set counts at once in the kept summaries of the path above it (Summaries/FileSums.swift), so that
// the next read of an ancestor's summary finds nothing to compute: the setter walks up, replacing its node's
// summary of that one property in its parent's total, then its parent's in the grandparent's, and so on.
//
// Why this keeps the kept summaries exact (the "Changes" invariant of FileSums.swift):
// - It runs under the tree's domain lock, as every replacement of a contribution does, and takes one node
//   lock at a time inside it: no read and no other writer of contributions interleaves.
// - At each level it replaces one property's contribution of one member with the member's summary of that
//   property, computed under the member's lock from its entries and its own totals. Those totals may be
//   behind changes further down that no read has taken yet; such a change marked the member, so a refresh
//   records it in its parent's log and the next read computes it again (a child leaving a node meanwhile
//   does the same). So every contribution is either what a read would compute, or logged, as before.
// - Where it cannot go on (an ancestor that keeps no summary yet, or its child is not one of its members:
//   a fresh child not settled, one that left), it hands over to the announcement of any metadata change
//   (`metadataChanged(affectsFiles:parent:changedProperty:)`): that ancestor counts the child's summary (or
//   starts keeping one) and is marked changed, so that the logs above it name the path.
// Observers of every node whose summary changed hear of it, as a mark of the path would signal them.

extension ProgressNode {
    /// Announces a value of `property` just set on this node (its lock released; `parent`, retained, is the
    /// parent it had then). Outside every lock: signalling may run user code. Typed all the way up: the
    /// summaries are neither boxed nor cast on the path.
    func propertyValueChanged<Property: ProgressProperty>(_ property: Property.Type, parent: ProgressNode?) {
        let key = ObjectIdentifier(property)
        guard let parent else {
            metadataChanged(affectsFiles: true, parent: nil, changedProperty: key)
            return
        }
        var signals: [any ChangeSignalReceiver]?
        var reached: [ProgressNode] = []  // released after the domain lock: a `deinit` may run user code
        let handOver = unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> (child: ProgressNode, parent: ProgressNode)? in
                var child = self
                var summary = state.withLock { state -> Property.Summary? in
                    if flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    return PropertyOperationsOf<Property>.summary(of: state)
                }
                var current = parent
                while true {
                    let address = FileSums.address(of: child)
                    let step = current.state.withLock {
                        state -> (summary: Property.Summary?, next: ProgressNode?)? in
                        current.settleFreshChildren(&state)
                        guard let sums = state.fileSums,
                            sums.replaceProperty(PropertyOperationsOf<Property>.self, ofMember: address, by: summary)
                        else { return nil }
                        if current.flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                            Self.append(state.observers.signalTargets, to: &signals)
                        }
                        return (PropertyOperationsOf<Property>.summary(of: state), current.parentUnderOwnLock(state))
                    }
                    guard let step else { return (child, current) }
                    guard let next = step.next else { return nil }
                    reached.append(next)
                    (child, current, summary) = (current, next, step.summary)
                }
            }
        }
        if let handOver {
            handOver.child.metadataChanged(affectsFiles: true, parent: handOver.parent, changedProperty: key)
        }
        signals?.signal()
        withExtendedLifetime(reached) {}
        withExtendedLifetime(parent) {}
    }

    private static func append(
        _ targets: [any ChangeSignalReceiver]?, to signals: inout [any ChangeSignalReceiver]?
    ) {
        guard let targets else { return }
        if signals == nil { signals = targets } else { signals!.append(contentsOf: targets) }
    }
}

extension PropertyOperationsOf {
    /// A node's summary of `Property`: its own entry (value and what left it) merged with its members'
    /// total, or `nil` when it has neither (it contributes the default). Under the node's lock (`state` is
    /// its state). A static member of this `Sendable` type rather than a function taking `Property.self`: a
    /// property type's metatype need not be `Sendable`, and passing one beside the locked state would tie
    /// the state to the caller's region.
    static func summary(of state: NodeState) -> Property.Summary? {
        let key = ObjectIdentifier(Property.self)
        let entry = state.propertyEntries?[key]
        let total = state.fileSums?.propertyTotals?[key].map { PropertyTotalOf<Property>.of($0).typedTotal }
        guard entry != nil || total != nil else { return nil }
        return typedSummary(entry, below: total)
    }
}
