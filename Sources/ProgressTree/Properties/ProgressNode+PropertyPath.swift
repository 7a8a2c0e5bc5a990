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
//
// The value is stored in the same critical section (the domain lock, then the node's lock) as the node's
// own step: no other writer of the path's contributions runs between the store and the walk.

extension ProgressNode {
    /// Stores `newValue` (a `Property.Value`) as this node's value of `Property`, announces it and counts it
    /// in the kept summaries of the path, all under the tree's domain lock (outside every lock: signalling,
    /// which may run user code, and the release of the value replaced and of the ancestors held).
    ///
    /// `step` is the property's typed step (`ProgressProperty._propertyLevelStep`): called once under this
    /// node's lock, in the critical section that stores the value, for the node's own summary (its entry
    /// reached in place, not looked up again), then once under each ancestor's, where it replaces the
    /// child's contribution by the summary it carries and computes the ancestor's.
    ///
    /// This node is held by the caller; each ancestor by the one reference taken under its child's lock
    /// (`retainNode(at:weakLink:)`, as `parentUnderOwnLock` does), kept in `reached` and released after the domain
    /// lock; the walk itself counts no references.
    @usableFromInline
    func setPropertyValue<Property: ProgressProperty>(
        _ newValue: any Sendable, of _: Property.Type, step: PropertyStep
    ) {
        PropertyGate.noteSet()  // before the value can be seen: folds look for it from here on
        let key = ObjectIdentifier(Property.self)
        var signals: [any ChangeSignalReceiver]?
        // The new value, swapped with the value it replaces, which is released after the locks (its deinit
        // may be user code). A swap moves both without copying (no value-witness assignment).
        var held: (any Sendable)? = newValue
        var reached = ReachedNodes()  // released after the domain lock: a `deinit` may run user code
        let end = unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> PathEnd in
                let parent = state.withLock { state -> Unmanaged<ProgressNode>? in
                    let extras = state.metadata.extrasForWriting()
                    let index: PropertyEntries.Index
                    if let found = extras.properties.index(forKey: key) {
                        swap(&held, &extras.properties.values[found].value)
                        index = found
                    } else {
                        extras.properties[key] = PropertyEntry(
                            operations: PropertyOperationsOf<Property>.self, value: held.take())
                        index = extras.properties.index(forKey: key)!  // the first value set only
                    }
                    // With the value, under the lock: whoever sees the bit clear sees no value (NodeFlags).
                    if flags.load(ordering: .relaxed) & NodeFlags.hasProperties == 0 {
                        flags.bitwiseOr(NodeFlags.hasProperties, ordering: .sequentiallyConsistent)
                    }
                    // Retained (unless its deinit has begun) for `reached`, as each ancestor is in `walkUp`.
                    // A node without one announces the value by its own mark (`metadataChanged`), below, and
                    // has no summary to carry up.
                    guard
                        let parent = retainNode(
                            at: parentAddress.load(ordering: .sequentiallyConsistent), weakLink: state.weakParent)
                    else { return nil }
                    if flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    let total = state.unretainedFileSums?._withUnsafeGuaranteedRef {
                        $0.unretainedPropertyTotal(for: key)
                    }
                    var level = PropertyLevel(slot: -1, total: total)
                    // The entry just written, in place: no second look-up, no copy. A mutating access of the
                    // entries for the call (the step reads only the entry it is given, never the node's
                    // entries, which read as empty meanwhile); the index holds, as nothing is inserted.
                    withUnsafePointer(to: &extras.properties.values[index]) { step(&level, $0) }
                    if level.madeTotal != nil { preconditionFailure("a level without a slot makes no total") }
                    return parent
                }
                guard let parent else { return .noParent }
                return walkUp(
                    from: self, to: reached.append(retained: parent), key: key, step: step, signals: &signals,
                    reached: &reached)
            }
        }
        switch end {
        case .noParent:
            metadataChanged(affectsFiles: true, parent: nil, changedProperty: key)
        case .handOver(let child, let parent):
            child.metadataChanged(affectsFiles: true, parent: parent, changedProperty: key)
        case .done:
            break
        }
        signals?.signal()
        reached.release()
        withExtendedLifetime(held) {}
    }

    /// Where a value set's walk up stopped.
    enum PathEnd {
        /// At the top of the tree, or at a node that let its child go.
        case done
        /// The node set has no parent: its own mark announces the value.
        case noParent
        /// `parent` keeps no summary yet, or `child` is not one of its members: the announcement of a
        /// metadata change takes over from `child` (see the top of this file). `parent` is held by `reached`
        /// until `reached.release()`; `child` by `reached` too, or by the caller (the node set).
        case handOver(child: ProgressNode, parent: ProgressNode)
    }

    /// The walk from `child` up through `parent` and its ancestors, under the domain lock: at each level,
    /// under that node's lock, `step` replaces the child's contribution to the node's total and computes
    /// the node's summary. `parent` and every ancestor reached are held by `reached`.
    private func walkUp(
        from start: ProgressNode, to parent: Unmanaged<ProgressNode>, key: ObjectIdentifier, step: PropertyStep,
        signals: inout [any ChangeSignalReceiver]?, reached: inout ReachedNodes
    ) -> PathEnd {
        var child = Unmanaged.passUnretained(start)
        var current = parent
        while true {
            let address = UInt(bitPattern: child.toOpaque())
            let found = current._withUnsafeGuaranteedRef { current in
                current.state.withLock { state -> (next: Unmanaged<ProgressNode>?, Void)? in
                    current.settleFreshChildren(&state)
                    // The node's sums and total, unretained: its lock, held here, keeps them.
                    guard let sums = state.unretainedFileSums,
                        let (slot, total) = sums._withUnsafeGuaranteedRef({ sums in
                            sums.slot(ofMember: address).map { ($0, sums.unretainedPropertyTotal(for: key)) }
                        })
                    else { return nil }
                    var level = PropertyLevel(slot: slot, total: total)
                    if state.hasPropertyEntries {
                        Self.run(step, on: &level, entry: state.propertyEntry(for: key))
                    } else {
                        step(&level, nil)  // most of a path: no entry to build
                    }
                    if let made = level.madeTotal { sums._withUnsafeGuaranteedRef { $0.addPropertyTotal(made) } }
                    if current.flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    // Retained (unless its deinit has begun), for `reached`: see `parentUnderOwnLock`.
                    return (
                        retainNode(
                            at: current.parentAddress.load(ordering: .sequentiallyConsistent),
                            weakLink: state.weakParent), ()
                    )
                }
            }
            guard let found else {
                return .handOver(child: child.takeUnretainedValue(), parent: current.takeUnretainedValue())
            }
            guard let next = found.next else { return .done }
            (child, current) = (current, reached.append(retained: next))
        }
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
        guard let sums = domainAndPart.unretainedPart() else { return false }
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

/// The ancestors a value set's walk reached, each retained (`retainNode(at:weakLink:)`), released together after
/// the domain lock (a `deinit` may run user code). The first eight without an allocation.
private struct ReachedNodes {
    private var inline:
        (
            Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?,
            Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?, Unmanaged<ProgressNode>?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil)
    private var count = 0
    private var more: [ProgressNode] = []

    /// Keeps `reference`, retained by the caller for this, until `release()`; returns it.
    mutating func append(retained reference: Unmanaged<ProgressNode>) -> Unmanaged<ProgressNode> {
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
