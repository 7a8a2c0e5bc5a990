// A value set counts at once in the kept summaries of the path above it (Summaries/FileSums.swift), so that
// the next read of an ancestor's summary finds nothing to compute: the setter walks up, replacing its node's
// summary of that one property in its parent's total, then its parent's in the grandparent's, and so on.
//
// Why this keeps the kept summaries exact (the "Changes" invariant of FileSums.swift):
// - It runs under the tree's domain lock, as every replacement of a contribution does: no read and no other
//   writer of contributions interleaves. The property totals belong to that lock
//   (Summaries/PropertySums.swift); it takes an ancestor's lock, one at a time, only where it needs what
//   that lock keeps (the ancestor's entries or observers, members' leaves to drain, a member without a
//   slot: `passWithoutLock`).
// - At each level it replaces one property's contribution of one member with the member's summary of that
//   property, computed from its entries (under its lock; it has none where the walk passed without it) and
//   its own totals, drained of the members that left it (or, where the walk passed without the lock, as of
//   before those leaves, which marked it). Those totals may be behind changes further down that no read
//   has taken yet; such a change marked the member, so a refresh records it in its parent's log and the
//   next read computes it again (a child leaving a node meanwhile does the same). So every contribution is
//   either what a read would compute, or logged, as before.
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
    /// which may run user code, and the release of the value replaced).
    ///
    /// `step` is the property's typed step (`ProgressProperty._propertyLevelStep`): called once under this
    /// node's lock, in the critical section that stores the value, for the node's own summary (its entry
    /// reached in place, not looked up again), then once at each ancestor (under its lock where the walk
    /// needs it), where it replaces the child's contribution by the summary it carries and computes the
    /// ancestor's.
    ///
    /// This node is held by the caller; each ancestor by a walk of the domain registered for the climb
    /// (`RefreshDomain.enterWalk`), as an update's walk up holds them: a node going away clears its
    /// children's `parentAddress` and then waits for the walks in progress, so every ancestor reached through
    /// `parentAddress` stays allocated until `exit()`, with no reference counted. The walk takes node locks,
    /// as an update's does to collect observers: no code that waits for walks holds a node lock (a
    /// `deinit`, `retire` and a domains' union wait outside every lock). Only the nodes a hand-over names are
    /// retained, before the walk ends, for the announcement after the lock.
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
        let end = unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> PathEnd in
                let walk = domain.enterWalk()
                defer { walk.exit() }
                let hasParent = state.withLock { state -> Bool in
                    let extras = state.metadata.extrasForWriting()
                    let index: Int
                    if let found = extras.properties.index(forKey: key) {
                        swap(&held, &extras.properties[position: found].value)
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
                    // A node without a parent announces the value by its own mark (`metadataChanged`), below,
                    // and has no summary to carry up.
                    guard parentAddress.load(ordering: .sequentiallyConsistent) != 0 else { return false }
                    if flags.load(ordering: .relaxed) & NodeFlags.observed != 0 {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    let total = state.unretainedFileSums?._withUnsafeGuaranteedRef {
                        $0.levelTotal(for: key)
                    }
                    var level = PropertyLevel(slot: -1, total: total)
                    // The entry just written, in place: no second look-up, no copy. A mutating access of the
                    // entries for the call (the step reads only the entry it is given, never the node's
                    // entries, which read as empty meanwhile); the index holds, as nothing is inserted.
                    withUnsafePointer(to: &extras.properties[position: index]) { step(&level, $0) }
                    if level.madeTotal != nil { preconditionFailure("a level without a slot makes no total") }
                    return true
                }
                guard hasParent else { return .noParent }
                return walkUp(from: self, key: key, step: step, signals: &signals)
            }
        }
        switch end {
        case .noParent:
            metadataChanged(affectsFiles: true, parent: nil, changedProperty: key)
        case .handOver(let child, let parent):
            if let parent {
                child._withUnsafeGuaranteedRef { child in
                    parent._withUnsafeGuaranteedRef {
                        child.metadataChanged(affectsFiles: true, parent: $0, changedProperty: key)
                    }
                }
                parent.release()
            }
            child.release()
        case .done:
            break
        }
        signals?.signal()
        withExtendedLifetime(held) {}
    }

    /// Where a value set's walk up stopped.
    enum PathEnd {
        /// At the top of the tree, or at a node that let its child go, or at one going away.
        case done
        /// The node set has no parent: its own mark announces the value.
        case noParent
        /// `parent` keeps no summary yet, or `child` is not one of its members: the announcement of a
        /// metadata change takes over from `child` (see the top of this file). Both retained, for the
        /// caller to release after that announcement; `parent` is `nil` when its `deinit` had begun (then
        /// there is nothing to announce, and `child` is only released).
        case handOver(child: Unmanaged<ProgressNode>, parent: Unmanaged<ProgressNode>?)
    }

    /// The walk from `start` up through its ancestors, under the domain lock and inside a registered walk of
    /// the domain (every node reached through `parentAddress` stays allocated): at each level, without that
    /// node's lock where it can (`passWithoutLock`) or under it, `step` replaces the child's contribution to
    /// the node's total and computes the node's summary. Reads `parentAddress` as an update's walk does
    /// (`markAncestors`): a node that leaves its parent meanwhile is either seen attached, and its parent
    /// counted for nothing, or seen detached.
    private func walkUp(
        from start: ProgressNode, key: ObjectIdentifier, step: PropertyStep,
        signals: inout [any ChangeSignalReceiver]?
    ) -> PathEnd {
        var child = Unmanaged.passUnretained(start)
        var below: Unmanaged<ProgressNode>?  // the node below `child` on the path (`nil`: `child` is `start`)
        while true {
            let address = child._withUnsafeGuaranteedRef { $0.parentAddress.load(ordering: .sequentiallyConsistent) }
            guard let pointer = UnsafeRawPointer(bitPattern: address) else { return .done }
            let current = Unmanaged<ProgressNode>.fromOpaque(pointer)
            let childAddress = UInt(bitPattern: child.toOpaque())
            // No reference to `current` may be counted here, not even by unoptimized code: were its last
            // other reference dropped meanwhile, the release would run its `deinit` on this thread, which
            // waits for this walk. So the closures capture it as `Unmanaged` (a value), and each use borrows
            // it (`_withUnsafeGuaranteedRef`) in a closure that captures no reference.
            if current._withUnsafeGuaranteedRef({ Self.passWithoutLock(step, at: $0, member: childAddress, key: key) })
            {
                (below, child) = (child, current)
                continue
            }
            let counted = current._withUnsafeGuaranteedRef { unretained in
                unretained.state.withLock { state -> Bool in
                    current._withUnsafeGuaranteedRef { $0.settleFreshChildren(&state) }
                    // The node's sums and total, unretained: its lock and the domain lock, held here, keep them.
                    guard var level = state.propertyPathLevel(ofMember: childAddress, key: key) else { return false }
                    if state.hasPropertyEntries {
                        Self.run(step, on: &level, entry: state.propertyEntry(for: key))
                    } else {
                        step(&level, nil)  // most of a path: no entry to build
                    }
                    if let made = level.madeTotal {
                        state.unretainedFileSums?._withUnsafeGuaranteedRef {
                            $0.addPropertyTotal(made.takeRetainedValue())
                        }
                    }
                    if current._withUnsafeGuaranteedRef({ $0.flags.load(ordering: .relaxed) }) & NodeFlags.observed != 0
                    {
                        Self.append(state.observers.signalTargets, to: &signals)
                    }
                    return true
                }
            }
            guard counted else { return Self.handOver(from: child, below: below, to: current) }
            (below, child) = (child, current)
        }
    }

    /// One level of the walk without `node`'s lock, when it needs nothing the lock keeps: `node` has no
    /// property entry, no observer and no member's leave to drain (one load of its flags), and the member at
    /// `address` has a slot in its `PropertySums` with a total of the property (owned by the domain lock,
    /// held here; see Summaries/PropertySums.swift). Then `step` replaces the member's contribution and
    /// computes the node's summary from its total alone, and this returns `true`; otherwise `false`, and
    /// the level takes the lock. A node that gains an entry or an observer, or loses a member, after the
    /// load is computed as of before that change; each such change marks it (or signals later), as the
    /// top of this file says of changes that a walk does not see.
    @inline(__always)
    private static func passWithoutLock(
        _ step: PropertyStep, at node: ProgressNode, member address: UInt, key: ObjectIdentifier
    ) -> Bool {
        let needsLock = NodeFlags.hasProperties | NodeFlags.observed | NodeFlags.propertyLeavesPending
        guard node.flags.load(ordering: .acquiring) & needsLock == 0,
            let part = node.domainAndPart.unretainedPart(),
            let level = part._withUnsafeGuaranteedRef({ part -> PropertyLevel? in
                guard let sums = part.propertySums, let slot = sums.slot(ofMember: address),
                    let total = sums.unretainedTotal(for: key)
                else { return nil }
                return PropertyLevel(slot: slot, total: total)
            })
        else { return false }
        var passing = level
        step(&passing, nil)
        return true
    }

    /// The hand-over from `child` to `parent`, its parent, both reached in the walk (`below` is the node
    /// below `child`, `nil` when `child` is the node set, which its caller holds): each retained for the
    /// announcement after the lock, unless its `deinit` has begun (a node going away needs no announcement:
    /// then `.done`). Inside the walk, where both stay allocated; under the domain lock and no node lock.
    private static func handOver(
        from child: Unmanaged<ProgressNode>, below: Unmanaged<ProgressNode>?, to parent: Unmanaged<ProgressNode>
    ) -> PathEnd {
        guard let retainedChild = retainInWalk(child, childOnPath: below) else { return .done }
        // Without the parent, the child's reference is still released after the lock and the walk: it may
        // be the last one by then, and a `deinit` waits for walks.
        let retainedParent = retainInWalk(parent, childOnPath: child)
        return .handOver(child: retainedChild, parent: retainedParent)
    }

    /// `node` retained unless its `deinit` has begun, where `child` is a node whose parent address named it
    /// (`nil`: `node` is the node set, held by the caller). With the runtime's `swift_tryRetain`, or else
    /// through `child`'s weak link to its parent (`retainNode(at:weakLink:)`), read under `child`'s lock.
    private static func retainInWalk(
        _ node: Unmanaged<ProgressNode>, childOnPath child: Unmanaged<ProgressNode>?
    ) -> Unmanaged<ProgressNode>? {
        guard let child else { return node.retain() }
        return child._withUnsafeGuaranteedRef { child in
            child.state.withLock { state in
                retainNode(at: UInt(bitPattern: node.toOpaque()), weakLink: state.weakParent)
            }
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
    /// total, under the domain lock, and the node's lock unless `readWithoutLock` can do without it.
    @usableFromInline
    func keptPropertySummary(_ key: ObjectIdentifier, _ step: PropertyStep) -> Bool {
        _ = refresh()  // records the children queued since, noting them in the log
        guard let sums = domainAndPart.unretainedPart() else { return false }
        return unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ -> Bool in
                // The log belongs to the domain lock, held here.
                guard
                    sums._withUnsafeGuaranteedRef({ sums in
                        sums.fileChanges.map { Unmanaged.passUnretained($0)._withUnsafeGuaranteedRef(\.isEmpty) }
                            ?? false
                    })
                else { return false }
                if sums._withUnsafeGuaranteedRef({ readWithoutLock(key, step, part: $0) }) { return true }
                return readUnderLock(key, step)
            }
        }
    }

    /// `keptPropertySummary`'s read under this node's lock (and the domain lock, held), where
    /// `readWithoutLock` cannot do without it. Out of line, so that the usual read stays small enough to
    /// inline into the domain lock's critical section.
    @inline(never)
    private func readUnderLock(_ key: ObjectIdentifier, _ step: PropertyStep) -> Bool {
        state.withLock { state -> Bool in
            settleFreshChildren(&state)  // a fresh child joins: then there is work
            // The sums and the total unretained, as the walk up reads them: the locks keep them.
            guard let kept = state.unretainedFileSums,
                let total = kept._withUnsafeGuaranteedRef({ kept -> Unmanaged<PropertyTotalStorage>?? in
                    kept.hasNoneJoined ? .some(kept.levelTotal(for: key)) : .none
                })
            else { return false }
            var level = PropertyLevel(slot: -1, total: total)
            if state.hasPropertyEntries {
                Self.run(step, on: &level, entry: state.propertyEntry(for: key))
            } else {
                step(&level, nil)  // most of a path: no entry to build
            }
            return true
        }
    }

    /// `keptPropertySummary`'s read without this node's lock, when it needs nothing the lock keeps (as a
    /// walk passes a node: `passWithoutLock`): no entry, no member that joined uncomputed, no member's leave
    /// to drain (one load of the flags), no fresh child to settle, and `PropertySums` (owned by the domain
    /// lock, held here) to read the total from. Then `step` computes the summary from the total alone, and
    /// this returns `true`. A fresh child, a member or an entry that comes after these loads is a change
    /// this read comes before; each marks the node, so the next read sees it.
    @inline(__always)
    private func readWithoutLock(_ key: ObjectIdentifier, _ step: PropertyStep, part: ChildSums) -> Bool {
        let needsLock = NodeFlags.hasProperties | NodeFlags.membersJoined | NodeFlags.propertyLeavesPending
        guard flags.load(ordering: .acquiring) & needsLock == 0,
            part.freshChildren.load(ordering: .acquiring) == 0,
            let propertySums = part.propertySums
        else { return false }
        var level = PropertyLevel(slot: -1, total: propertySums.unretainedTotal(for: key))
        step(&level, nil)
        return true
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
