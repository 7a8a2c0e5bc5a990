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
    /// Stores `newValue` (a `Property.Value`) as this node's value of `Property`, and returns its parent
    /// then (retained), for the walk up (`propertyValueChanged`). The first half of a value set
    /// (`ProgressProperty._progressTreeSetValue(_:on:)`); the node's lock, once.
    @usableFromInline
    func storePropertyValue<Property: ProgressProperty>(_ newValue: any Sendable, of _: Property.Type) -> ProgressNode?
    {
        PropertyGate.noteSet()  // before the value can be seen: folds look for it from here on
        let key = ObjectIdentifier(Property.self)
        // The old value leaves the lock before it is released: its deinit may be user code.
        let (replaced, parent) = state.withLock { state -> ((any Sendable)?, ProgressNode?) in
            let extras = state.metadata.extrasForWriting()
            var replaced: (any Sendable)?
            if let index = extras.properties.index(forKey: key) {
                replaced = extras.properties.values[index].value
                extras.properties.values[index].value = newValue
            } else {
                extras.properties[key] = PropertyEntry(operations: PropertyOperationsOf<Property>.self, value: newValue)
            }
            // With the value, under the lock: whoever sees the bit clear sees no value (NodeFlags).
            if flags.load(ordering: .relaxed) & NodeFlags.hasProperties == 0 {
                flags.bitwiseOr(NodeFlags.hasProperties, ordering: .sequentiallyConsistent)
            }
            return (replaced, parentUnderOwnLock(state))
        }
        withExtendedLifetime(replaced) {}
        return parent
    }

    /// Announces a value of the property `key` names just set on this node (its lock released; `parent`,
    /// retained, is the parent it had then), and counts it in the kept summaries of the path. Outside every
    /// lock: signalling may run user code. `step` is the property's typed step
    /// (`ProgressProperty._propertyLevelStep`): called once under this node's lock for its own summary, then
    /// once under each ancestor's, where it replaces the child's contribution by the summary it carries and
    /// computes the ancestor's; all of it under the domain lock. It is given the node's entry of the
    /// property, if any, by address (valid during the call).
    ///
    /// The nodes of the walk are held without reference counting: this node by the caller, `parent` by the
    /// caller's reference, each ancestor above by the reference `parentUnderOwnLock` took (kept in
    /// `reached`).
    @usableFromInline
    func propertyValueChanged(_ key: ObjectIdentifier, parent: ProgressNode?, step: PropertyStep) {
        guard let parent else {
            metadataChanged(affectsFiles: true, parent: nil, changedProperty: key)
            return
        }
        var signals: [any ChangeSignalReceiver]?
        var reached = ReachedNodes()  // released after the domain lock: a `deinit` may run user code
        let handOver = unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> (child: ProgressNode, parent: ProgressNode)? in
                state.withLock { state in
                    if flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    var level = PropertyLevel(slot: -1, total: state.fileSums?.propertyTotal(for: key))
                    if state.hasPropertyEntries {
                        Self.run(step, on: &level, entry: state.propertyEntry(for: key))
                    } else {
                        step(&level, nil)  // most of a path: no entry to build
                    }
                    if level.madeTotal != nil { preconditionFailure("a level without a slot makes no total") }
                }
                var child = Unmanaged.passUnretained(self)
                var current = Unmanaged.passUnretained(parent)
                while true {
                    let address = UInt(bitPattern: child.toOpaque())
                    let found = current._withUnsafeGuaranteedRef { current in
                        current.state.withLock { state -> (next: ProgressNode?, Void)? in
                            current.settleFreshChildren(&state)
                            guard let sums = state.fileSums, let slot = sums.slot(ofMember: address) else { return nil }
                            var level = PropertyLevel(slot: slot, total: sums.propertyTotal(for: key))
                            if state.hasPropertyEntries {
                                Self.run(step, on: &level, entry: state.propertyEntry(for: key))
                            } else {
                                step(&level, nil)  // most of a path: no entry to build
                            }
                            if let made = level.madeTotal { sums.addPropertyTotal(made) }
                            if current.flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                                Self.append(state.observers.signalTargets, to: &signals)
                            }
                            return (current.parentUnderOwnLock(state), ())
                        }
                    }
                    guard let found else { return (child.takeUnretainedValue(), current.takeUnretainedValue()) }
                    guard let next = found.next else { return nil }
                    (child, current) = (current, reached.append(next))
                }
            }
        }
        if let handOver {
            handOver.child.metadataChanged(affectsFiles: true, parent: handOver.parent, changedProperty: key)
        }
        signals?.signal()
        reached.release()
        withExtendedLifetime(parent) {}
    }

    /// Runs `step` on `level` with the node's entry of the property (read under its lock, held; crossing as
    /// a `Sendable` value, so that the state stays in the lock's region).
    @inline(never)  // off the common level, which has no entry
    private static func run(_ step: PropertyStep, on level: inout PropertyLevel, entry: PropertyEntry?) {
        if let entry {
            withUnsafePointer(to: entry) { step(&level, $0) }
        } else {
            step(&level, nil)
        }
    }

    /// Runs `step` (the property's typed step, with no slot) on this node's kept summary when it has nothing
    /// to compute (it keeps one, no member waits and its log is empty, once refreshed: the usual case after
    /// a value set, which counted it on the path), and returns `true`; `false` when a read has work to do.
    /// The step computes the node's summary of the property `key` names from its entry and its members'
    /// total, under the domain lock and the node's lock.
    @usableFromInline
    func keptPropertySummary(_ key: ObjectIdentifier, _ step: PropertyStep) -> Bool {
        _ = refresh()  // records the children queued since, noting them in the log
        guard let sums = childSums.unretained() else { return false }
        return unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> Bool in
                // The log belongs to the domain lock, held here.
                guard sums._withUnsafeGuaranteedRef({ $0.fileChanges?.isEmpty ?? false }) else { return false }
                return state.withLock { state -> Bool in
                    settleFreshChildren(&state)  // a fresh child joins: then there is work
                    guard let kept = state.fileSums, kept.hasNoneJoined else { return false }
                    var level = PropertyLevel(slot: -1, total: kept.propertyTotal(for: key))
                    if state.hasPropertyEntries {
                        Self.run(step, on: &level, entry: state.propertyEntry(for: key))
                    } else {
                        step(&level, nil)  // most of a path: no entry to build
                    }
                    return true
                }
            }
        }
    }

    /// `summary(of:)` by a read of the kept summary (`readFileSummary()`), which computes what changed: the
    /// way when `keptPropertySummary` finds work to do.
    @usableFromInline
    func summaryByRead<Property: ProgressProperty>(_: Property.Type) -> Property.Summary {
        if let kept = readFileSummary().properties?[ObjectIdentifier(Property.self)] {
            return kept.summary as! Property.Summary
        }
        return PropertyOperationsOf<Property>.typedSummary(nil, below: nil)
    }

    private static func append(
        _ targets: [any ChangeSignalReceiver]?, to signals: inout [any ChangeSignalReceiver]?
    ) {
        guard let targets else { return }
        if signals == nil { signals = targets } else { signals!.append(contentsOf: targets) }
    }
}

/// The ancestors a value set's walk reached, each retained (`parentUnderOwnLock`), released together after
/// the domain lock (a `deinit` may run user code). The first eight without an allocation.
private struct ReachedNodes {
    private var inline:
        (
            Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?,
            Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil)
    private var count = 0
    private var more: [ProgressNode] = []

    /// Keeps `node`'s reference (the caller's, handed over) until `release()`; returns the node, unretained.
    mutating func append(_ node: consuming ProgressNode) -> Unmanaged<ProgressNode> {
        let reference = Unmanaged.passRetained(node)
        defer { count += 1 }
        switch count {
        case 0: inline.0 = reference
        case 1: inline.1 = reference
        case 2: inline.2 = reference
        case 3: inline.3 = reference
        case 4: inline.4 = reference
        case 5: inline.5 = reference
        case 6: inline.6 = reference
        case 7: inline.7 = reference
        default: more.append(reference.takeRetainedValue())
        }
        return reference
    }

    /// Releases every node kept.
    mutating func release() {
        let count = count
        withUnsafeMutablePointer(to: &inline) { tuple in
            tuple.withMemoryRebound(to: Unmanaged<ProgressNode>?.self, capacity: 8) { references in
                for index in 0..<min(count, 8) {
                    references[index]?.release()
                    references[index] = nil
                }
            }
        }
        self.count = 0
        more = []
    }
}
