// The invariants of the core, checked by code: `checkInvariants()` and `invariantViolations()`, for tests.
//
// Compiled only in debug builds made with PROGRESSTREE_INTERNAL_CHECKS set in the environment (Package.swift
// defines the compilation condition of that name for the library and its tests, as swift-collections does
// with COLLECTIONS_INTERNAL_CHECKS): `PROGRESSTREE_INTERNAL_CHECKS=1 swift test`. Otherwise both functions
// are empty and inlined, so a normal or release build pays nothing.
//
// The checks hold at a *quiescent* point: no other thread changes the tree while they run (the tests call
// them after every operation of a model run, and after joining their threads). They do not need a read
// first: every invariant here holds whether or not the tree was read since the last update, and together
// they give what a full refresh leaves, as a consequence rather than as a check of its own: a clean node's
// queue is empty and its attached children are neither dirty nor queued, so below a clean node nothing is
// dirty or queued down to the nodes held after they finished (they mark only up to themselves).
//
// Lock order, as a read of a file summary: the tree's domain lock for the whole check (the sums, the
// contributor indices and the `refreshing` bit belong to it), and inside it one node lock at a time (the
// table, the link, the file summary). Contributors and file summary members are matched by address against
// the children reached, never followed; the nodes followed are those a table, a stack of fresh children or
// a dirty queue holds a reference to.

#if PROGRESSTREE_INTERNAL_CHECKS
extension ProgressNode {
    /// Whether this build checks the invariants (PROGRESSTREE_INTERNAL_CHECKS).
    static let internalChecksEnabled = true

    /// Stops the process, naming the first broken invariant, if this node or a node below it breaks one.
    /// At a quiescent point only (see the top of this file).
    func checkInvariants() {
        let violations = invariantViolations()
        guard let first = violations.first else { return }
        let more = violations.count > 1 ? " (and \(violations.count - 1) more)" : ""
        preconditionFailure("ProgressTree internal check failed: \(first)\(more)")
    }

    /// The invariants that this node and the nodes below it (attached, fresh and held) break, one line each,
    /// naming the node by its path from this one (`root/2/f0`: the child in slot 2 of this node's table,
    /// then that child's newest fresh child); empty when all hold. At a quiescent point only.
    func invariantViolations() -> [String] {
        let checker = InvariantChecker()
        if let domain = domainAndPart.loadDomain() {
            domain.withRepresentativeLock { scratch in
                checker.checkSubtree(of: self, representative: domain.representative, &scratch)
            }
        } else {
            // No domain: never read, and never a parent (a node gets one before its first child).
            // (A lock of a domain of its own lends the proof the summary checks ask for: it has no table.)
            RefreshDomain().withRepresentativeLock { scratch in
                checker.checkSubtree(of: self, representative: nil, &scratch)
            }
        }
        return checker.violations  // the nodes it reached are released here, after the locks
    }
}

/// One check of a subtree: the nodes reached, breadth first, and the invariants they break.
private final class InvariantChecker {
    // Structures rather than tuples: a debug build looks up a tuple's type at run time at each use.
    private struct Reached {
        let node: ProgressNode
        /// The record of the node whose table or fresh children hold this one; -1 for the node checked.
        let from: Int
        /// Its slot in that node's table, or its position on that node's stack of fresh children (from the
        /// top): a label for the messages, made only for them.
        let position: Int
        let isFresh: Bool

        var label: String { from < 0 ? "root" : isFresh ? "f\(position)" : "\(position)" }
    }

    /// A child of the node being checked: its record, its address, and whether it is in the table (or on
    /// the stack of fresh children).
    private struct Child {
        let record: Int
        let address: UInt
        let inTable: Bool
    }

    /// A node that may be a contributor to the sums being checked: a child, or a retired node in the queue.
    private struct Claimant {
        let node: ProgressNode
        let record: Int?
    }

    private(set) var violations: [String] = []
    private var reached: [Reached] = []
    private var seen: Set<ObjectIdentifier> = []

    func checkSubtree(of root: ProgressNode, representative: RefreshDomain?, _ scratch: inout RefreshScratch) {
        reached.append(Reached(node: root, from: -1, position: 0, isFresh: false))
        seen.insert(ObjectIdentifier(root))
        var next = 0
        while next < reached.count {
            check(next, representative: representative, &scratch)
            next += 1
        }
    }

    private func name(_ record: Int) -> String {
        var labels: [String] = []
        var index = record
        while index >= 0 {
            labels.append(reached[index].label)
            index = reached[index].from
        }
        return labels.reversed().joined(separator: "/")
    }

    private func report(_ record: Int, _ message: String) {
        violations.append("\(name(record)): \(message)")
    }

    /// Adds a child to the nodes to check; returns its record, or `nil` when it was reached before.
    private func reach(_ child: ProgressNode, from record: Int, position: Int, isFresh: Bool) -> Int? {
        let reaching = Reached(node: child, from: record, position: position, isFresh: isFresh)
        guard seen.insert(ObjectIdentifier(child)).inserted else {
            report(record, "holds \(reaching.label), a node reached before: in two tables, or a cycle")
            return nil
        }
        reached.append(reaching)
        return reached.count - 1
    }

    private func check(_ record: Int, representative: RefreshDomain?, _ scratch: inout RefreshScratch) {
        let node = reached[record].node
        let from = reached[record].from
        let parentAddress = from >= 0 ? UnownedNode(reached[from].node).address : 0
        let flags = node.flags.load(ordering: .sequentiallyConsistent)
        func has(_ bit: UInt32) -> Bool { flags & bit != 0 }

        // MARK: The node's lock: link, table, fresh children, metadata, observers, file summary

        let view = node.state.withLock { state in LockedView(of: node, state) }
        var children: [Child] = []
        for (slot, child) in view.table {
            if let childRecord = reach(child, from: record, position: slot, isFresh: false) {
                children.append(Child(record: childRecord, address: UnownedNode(child).address, inTable: true))
            }
        }
        for (index, child) in view.fresh.enumerated() {
            guard let childRecord = reach(child, from: record, position: index, isFresh: true) else { break }
            children.append(Child(record: childRecord, address: UnownedNode(child).address, inTable: false))
        }
        // `attached` is set with the link (a fresh child's initializer) or right after it (`addChild`), and
        // cleared under the node's lock with the link's detach (a finish, a failure).
        if has(NodeFlags.attached) != (view.link == .attached) {
            report(record, "the attached flag is \(has(NodeFlags.attached)) but the link is \(view.link)")
        }
        // `held` is set by the detach, with `holderAddress`, and both are cleared together.
        if has(NodeFlags.held) && view.link != .detached {
            report(record, "held, but its link is \(view.link), not detached")
        }
        if !has(NodeFlags.held) && view.holderAddress != 0 { report(record, "not held, but has a holder address") }
        // A node is in its parent's table (or fresh children) exactly while attached to it or held by it.
        if from >= 0 {
            if has(NodeFlags.attached) {
                if node.parentAddress.load(ordering: .sequentiallyConsistent) != parentAddress {
                    report(record, "attached, but its parent address is not the node that holds it")
                }
            } else if has(NodeFlags.held) {
                if view.holderAddress != parentAddress {
                    report(record, "held, but its holder address is not the node that holds it")
                }
            } else {
                report(record, "in its parent's children but neither attached nor held")
            }
        }
        for problem in view.tableViolations { report(record, problem) }  // `ChildTable.violations()`
        // A held node leaves its holder once nothing is attached below it (ProgressNode+HeldChildren.swift).
        if has(NodeFlags.held) && children.isEmpty { report(record, "held with nothing attached below it") }
        // A node gets `hasHadChildren`, and a domain, before its first child.
        if !children.isEmpty && !has(NodeFlags.hasHadChildren) {
            report(record, "has children but not the hasHadChildren flag")
        }
        if !children.isEmpty && node.domainAndPart.loadDomain() == nil { report(record, "has children but no domain") }
        // ... and its parent part (`ChildSums`), which holds the stacks its children push onto.
        if has(NodeFlags.hasHadChildren) && node.domainAndPart.loadPart() == nil {
            report(record, "has had children but has no parent part (ChildSums)")
        }
        // `summarized` is set under the node's lock with a value or metadata that describes files, never
        // cleared.
        if (view.metadataDescribesFiles || view.hasValues) && !has(NodeFlags.summarized) {
            report(record, "it has a value or describes files but lacks the summarized flag")
        }
        if view.metadataDescribesFiles && !has(NodeFlags.describesFiles) {
            report(record, "its metadata describes files but it lacks the describesFiles flag")
        }
        // `observed` is set under the node's lock with the first observer, cleared with the last.
        if (view.observerCount > 0) != has(NodeFlags.observed) {
            report(record, "the observed flag is \(has(NodeFlags.observed)) but it has \(view.observerCount) observers")
        }
        if let part = node.domainAndPart.loadPart() { checkSummaries(part, of: record, children: children, &scratch) }

        // MARK: Under the domain lock: flags, queue, sums

        // Every node of a tree resolves to the tree's domain (RefreshDomain's invariant); a node that was
        // queued or recorded (`shared`) has one.
        let domain = node.domainAndPart.loadDomain()
        if let domain, domain.representative !== representative {
            report(record, "its refresh domain is not its tree's")
        }
        if has(NodeFlags.shared) && domain == nil { report(record, "shared with its parent but without a domain") }
        // `refreshing` lives inside the domain lock, which this check holds.
        if has(NodeFlags.refreshing) { report(record, "refreshing outside a refresh") }
        // Attached is unfinished: `retired` and `held` come with or after the detach, never cleared before it.
        if has(NodeFlags.attached) && has(NodeFlags.retired) { report(record, "attached and retired") }
        if has(NodeFlags.attached) && has(NodeFlags.held) { report(record, "attached and held") }
        // Held only with a live parent at the detach, which then retired it (`detachFromParent`, `retire`).
        if has(NodeFlags.held) && !has(NodeFlags.retired) { report(record, "held but not retired") }
        // A held node is listed as finished in the same step (`finishIntoParent`); the flag is never cleared,
        // but the end of a hold takes the node out of its holder's table with it.
        if from >= 0 && has(NodeFlags.held) != has(NodeFlags.listedAsFinished) {
            report(
                record,
                "in a table, held is \(has(NodeFlags.held)) but listedAsFinished is \(has(NodeFlags.listedAsFinished))")
        }
        // Queueing sets `shared` with `queued`; a refresh claims `shared` before it records a contribution.
        if has(NodeFlags.queued) && !has(NodeFlags.shared) { report(record, "queued but not shared") }
        if node.contributorIndex(scratch) >= 0 && !has(NodeFlags.shared) {
            report(record, "a contributor to its parent's sums but not shared")
        }
        // A credit's two steps take no lock and never wait: none is in progress at a quiescent point.
        if !ChildSums.isSettled(node.domainAndPart.creditSequence) { report(record, "a credit in progress") }
        // Every fraction a refresh stores is finite and within 0...1 (FractionMath.fraction).
        let cached = Double(bitPattern: node.cachedFraction.load(ordering: .sequentiallyConsistent))
        if !(cached >= 0 && cached <= 1) { report(record, "its cached fraction \(cached) is not within 0...1") }

        let queue = checkQueue(of: record, flags: flags, children: children)
        // A clean node's cached fraction is its counts and sums: a refresh or a path refresh stored it from
        // them, and anything that changes them since marks the node (or refreshes its path) after the change.
        if !has(NodeFlags.dirty) && !has(NodeFlags.refreshing) {
            let fraction = FractionMath.fraction(
                completed: node.completedStorage.load(ordering: .sequentiallyConsistent),
                total: node.totalStorage.load(ordering: .sequentiallyConsistent),
                childUnits: node.domainAndPart.childUnits(scratch))
            if fraction.bitPattern != cached.bitPattern {
                report(record, "clean, but its cached fraction \(cached) is not \(fraction), from its counts and sums")
            }
        }
        checkSums(
            node.domainAndPart.loadPart()?.checkedState(scratch), of: record, children: children, queue: queue, scratch)
    }

    /// The node's dirty queue: returns the addresses in it. Checks that it holds each node once, with
    /// `queued`, and only attached children or retired ones (a finished or failed child whose share a refresh
    /// has still to take out: the queue holds a reference to it); that a node with anything queued is `dirty`
    /// (queue first, then mark: a refresh clears `dirty`, then drains); and, for each attached child, that it
    /// is queued exactly when flagged `queued`, and `queued` when `dirty` (a mark queues the node it marks in
    /// its parent).
    private func checkQueue(of record: Int, flags: UInt32, children: [Child])
        -> Set<UInt>
    {
        let node = reached[record].node
        var queue: Set<UInt> = []
        var entry = node.domainAndPart.queueTop
        while let link = UnownedNode(address: entry) {
            guard queue.insert(entry).inserted else {
                report(record, "its dirty queue holds a node twice (or loops)")
                break
            }
            let queued = link.node
            let queuedFlags = queued.flags.load(ordering: .sequentiallyConsistent)
            if queuedFlags & NodeFlags.queued == 0 { report(record, "its dirty queue holds a node not flagged queued") }
            let attachedHere =
                queuedFlags & NodeFlags.attached != 0
                && queued.parentAddress.load(ordering: .sequentiallyConsistent) == UnownedNode(node).address
            if !attachedHere && queuedFlags & NodeFlags.retired == 0 {
                report(record, "its dirty queue holds a node neither attached to it nor retired")
            }
            entry = queued.queueNext.load(ordering: .relaxed)
        }
        if !queue.isEmpty && flags & NodeFlags.dirty == 0 { report(record, "not dirty, with \(queue.count) queued") }
        for child in children {
            let childNode = reached[child.record].node
            let childFlags = childNode.flags.load(ordering: .sequentiallyConsistent)
            guard childFlags & NodeFlags.attached != 0 else { continue }
            let isQueued = childFlags & NodeFlags.queued != 0
            if isQueued != queue.contains(child.address) {
                report(
                    child.record,
                    isQueued
                        ? "flagged queued but not in its parent's queue"
                        : "in its parent's queue but not flagged queued")
            }
            if childFlags & NodeFlags.dirty != 0 && !isQueued {
                report(child.record, "attached and dirty but not queued")
            }
        }
        return queue
    }

    /// The node's `ChildSums` (their own invariants: `ContributionBuffer.violations()`) against its children:
    /// the contributors are its attached children, or retired ones still in its queue, each knowing its
    /// index, one contributor an entry (then `checkContributions`). The entries do not name their children: each child that records an index must find a
    /// contribution there, no two the same, and there must be as many of them as contributions.
    private func checkSums(
        _ sums: ChildSums.CheckedState?, of record: Int, children: [Child], queue: Set<UInt>,
        _ scratch: borrowing RefreshScratch
    ) {
        let contributions = sums?.contributions ?? []
        for problem in sums?.violations ?? [] { report(record, problem) }
        // The children and the retired nodes in the queue: each of them that records a contributor index is
        // the one contributor at that index.
        var claimed: [UInt: Claimant] = [:]
        for child in children {
            claimed[child.address] = Claimant(node: reached[child.record].node, record: child.record)
        }
        for address in queue where claimed[address] == nil {
            // Retired: the queue holds a reference to it.
            let node = UnownedNode(address: address).unsafelyUnwrapped.node
            claimed[address] = Claimant(node: node, record: nil)
        }
        var claimedIndices: Set<Int> = []
        for (address, child) in claimed {
            let index = child.node.contributorIndex(scratch)
            guard index >= 0 else { continue }
            guard index < contributions.count, contributions[index] != nil else {
                // Named only here: a name is the path from the checked node, O(depth) to make.
                let who = child.record.map(name) ?? "a retired node in its queue"
                report(record, "\(who) records contributor index \(index), which its sums do not give it")
                continue
            }
            if !claimedIndices.insert(index).inserted {
                report(record, "two of its children record contributor index \(index)")
            }
            let childFlags = child.node.flags.load(ordering: .sequentiallyConsistent)
            if childFlags & NodeFlags.attached == 0 && !queue.contains(address) {
                report(record, "contributor \(index) has left (retired) and is not in its queue to be taken out")
            }
        }
        for index in contributions.indices where contributions[index] != nil && !claimedIndices.contains(index) {
            report(record, "contributor \(index) is neither a child nor in its queue")
        }
        checkContributions(contributions, of: children, scratch)
    }

    /// A clean, unqueued attached child contributes `pendingInParent × cachedFraction` (nothing recorded:
    /// zero): the refresh or path refresh that stored its fraction recorded it in the parent's sums.
    private func checkContributions(
        _ contributions: [Double?], of children: [Child], _ scratch: borrowing RefreshScratch
    ) {
        for child in children {
            let node = reached[child.record].node
            let childFlags = node.flags.load(ordering: .sequentiallyConsistent)
            guard childFlags & (NodeFlags.attached | NodeFlags.stale | NodeFlags.queued) == NodeFlags.attached else {
                continue
            }
            let index = node.contributorIndex(scratch)
            let recorded = index >= 0 && index < contributions.count ? contributions[index] ?? 0 : 0
            let fraction = Double(bitPattern: node.cachedFraction.load(ordering: .sequentiallyConsistent))
            let expected = Double(node.pendingInParent.load(ordering: .relaxed)) * fraction
            if recorded != expected {
                report(child.record, "clean and unqueued, but its parent's sums hold \(recorded), not \(expected)")
            }
        }
    }

    /// The summaries the node keeps (Summaries/ProgressNode+Summaries.swift): its columns hold their shape;
    /// once started, every unfinished child of its table that may have a summary and has no change pending
    /// (not marked, not in the node's queue: a read from the child itself leaves it clean and queued) is a
    /// member, and its contribution is its summary now.
    private func checkSummaries(
        _ part: ChildSums, of record: Int, children: [Child], _ scratch: inout RefreshScratch
    ) {
        for problem in part.columnViolations(scratch) { report(record, problem) }
        guard part.summariesStarted(scratch) else { return }
        for child in children where child.inTable {
            let member = reached[child.record].node
            let flags = member.flags.load(ordering: .sequentiallyConsistent)
            let pending = NodeFlags.listedAsFinished | NodeFlags.dirty | NodeFlags.queued | NodeFlags.retired
            guard flags & pending == 0,
                member.mayHaveSummary
            else { continue }
            let entry = member.contributorIndex(scratch)
            guard entry >= 0 else {
                report(child.record, "may have a summary, but is no member of its parent's started summaries")
                continue
            }
            if flags & NodeFlags.hasHadChildren != 0, !member.domainAndPart.summariesStarted(scratch) {
                report(child.record, "a member with children whose own summaries have not started")
            }
            let found = CheckReport()
            member.withSummaryParts(&scratch) { parts, scratch in
                for column in part.columns(scratch) {
                    var step = _ProgressTreeColumnStep(
                        .checkMember(entry: entry), column: column, parts: parts.parts(for: column.key, scratch),
                        report: found)
                    column.property._progressTreeColumnStep(&step)
                }
            }
            for problem in found.violations { report(child.record, problem) }
        }
    }
}

/// What the checks read under a node's lock, taken in one critical section and checked after it.
private struct LockedView: Sendable {
    let link: ParentLink.Kind
    let holderAddress: UInt
    /// The table's live children, with their slots, and what the table breaks (`ChildTable.violations()`).
    let table: [(slot: Int, node: ProgressNode)]
    let tableViolations: [String]
    /// The fresh children, newest first, as the stack holds them (and a reference to each).
    let fresh: [ProgressNode]
    let metadataDescribesFiles: Bool
    let hasValues: Bool
    let observerCount: Int

    init(of node: ProgressNode, _ state: borrowing NodeState) {
        link = state.link.kind
        holderAddress = state.holderAddress
        table = state.children.slots.enumerated().compactMap { slot, entry in entry.owner.map { (slot, $0) } }
        tableViolations = state.children.violations()
        var fresh: [ProgressNode] = []
        var seen: Set<UInt> = []
        var entry = node.domainAndPart.freshTop
        while let child = UnownedNode(address: entry), seen.insert(entry).inserted {
            fresh.append(child.node)
            entry = child.freshNext
        }
        self.fresh = fresh
        // (Without extras, the defaults: no metadata, no observer.)
        metadataDescribesFiles = state.hasExtras && state.metadata.describesFiles
        hasValues = state.propertyValues != nil
        observerCount = state.hasExtras ? state.observers.receivers.count : 0
    }
}
#else
extension ProgressNode {
    /// Whether this build checks the invariants (PROGRESSTREE_INTERNAL_CHECKS).
    static let internalChecksEnabled = false

    /// Checks nothing: the invariants are checked only in builds with PROGRESSTREE_INTERNAL_CHECKS.
    @inline(__always)
    func checkInvariants() {}

    /// Empty: the invariants are checked only in builds with PROGRESSTREE_INTERNAL_CHECKS.
    @inline(__always)
    func invariantViolations() -> [String] { [] }
}
#endif
