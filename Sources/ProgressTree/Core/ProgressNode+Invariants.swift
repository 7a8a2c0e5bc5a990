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
        // No domain: never read, and never a parent (a node gets one before its first child). The lock of a
        // domain of its own then lends the proof the summary checks ask for: it has no table.
        let domain = domainAndPart.loadDomain()
        (domain ?? RefreshDomain()).withRepresentativeLock { scratch in
            checker.checkSubtree(of: self, representative: domain?.representative, &scratch)
        }
        return checker.violations  // the nodes it reached are released here, after the locks
    }
}

/// One check of a subtree: the nodes reached, breadth first, and the invariants they break. A node is known
/// by its record, its index in `reached`.
private final class InvariantChecker {
    // A structure rather than a tuple: a debug build looks up a tuple's type at run time at each use.
    private struct Reached {
        let node: ProgressNode
        /// The record of the node whose table or fresh children hold this one; `nil` for the node checked.
        let from: Int?
        /// Its slot in that node's table, or its position on that node's stack of fresh children (from the
        /// top): a label for the messages, made only for them.
        let position: Int
        let isFresh: Bool

        var label: String { from == nil ? "root" : isFresh ? "f\(position)" : "\(position)" }
        var address: UInt { UnownedNode(node).address }
    }

    private(set) var violations: [String] = []
    private var reached: [Reached] = []
    private var seen: Set<ObjectIdentifier> = []

    func checkSubtree(of root: ProgressNode, representative: RefreshDomain?, _ scratch: inout RefreshScratch) {
        reached.append(Reached(node: root, from: nil, position: 0, isFresh: false))
        seen.insert(ObjectIdentifier(root))
        var next = 0
        while next < reached.count {
            check(next, representative: representative, &scratch)
            next += 1
        }
    }

    private func name(_ record: Int) -> String {
        let path = sequence(first: record) { self.reached[$0].from }
        return path.map { reached[$0].label }.reversed().joined(separator: "/")
    }

    private func report(_ record: Int, _ message: String) {
        violations.append("\(name(record)): \(message)")
    }

    /// Reports `message` about the node at `record` if the invariant is `broken`.
    private func report(_ record: Int, if broken: Bool, _ message: @autoclosure () -> String) {
        if broken { report(record, message()) }
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
        let flags = node.flags.load(ordering: .sequentiallyConsistent)
        func has(_ bit: UInt32) -> Bool { flags & bit != 0 }

        // MARK: The node's lock: link, table, fresh children, metadata, observers, file summary

        // Its children: the table's, with their slots, then the fresh ones, newest first (the stack ends at a
        // node reached before).
        let children = node.state.withLock { state -> [Int] in
            var children: [Int] = []
            for (slot, entry) in state.children.slots.enumerated() {
                if let owner = entry.owner, let child = reach(owner, from: record, position: slot, isFresh: false) {
                    children.append(child)
                }
            }
            var entry = node.domainAndPart.freshTop
            var position = 0
            while let fresh = UnownedNode(address: entry),
                let child = reach(fresh.node, from: record, position: position, isFresh: true)
            {
                children.append(child)
                entry = fresh.freshNext
                position += 1
            }
            let link = state.link.kind
            let holderAddress = state.holderAddress
            // `attached` is set with the link (a fresh child's initializer) or right after it (`addChild`), and
            // cleared under the node's lock with the link's detach (a finish, a failure).
            report(
                record, if: has(NodeFlags.attached) != (link == .attached),
                "the attached flag is \(has(NodeFlags.attached)) but the link is \(link)")
            // `held` is set by the detach, with `holderAddress`, and both are cleared together.
            report(record, if: has(NodeFlags.held) && link != .detached, "held, but its link is \(link), not detached")
            report(record, if: !has(NodeFlags.held) && holderAddress != 0, "not held, but has a holder address")
            // A node is in its parent's table (or fresh children) exactly while attached to it or held by it.
            if let from {
                let parentAddress = reached[from].address
                if has(NodeFlags.attached) {
                    report(
                        record, if: node.parentAddress.load(ordering: .sequentiallyConsistent) != parentAddress,
                        "attached, but its parent address is not the node that holds it")
                } else if has(NodeFlags.held) {
                    report(
                        record, if: holderAddress != parentAddress,
                        "held, but its holder address is not the node that holds it")
                } else {
                    report(record, "in its parent's children but neither attached nor held")
                }
            }
            for problem in state.children.violations() { report(record, problem) }  // `ChildTable.violations()`
            // A held node leaves its holder once nothing is attached below it (ProgressNode+HeldChildren.swift).
            report(record, if: has(NodeFlags.held) && children.isEmpty, "held with nothing attached below it")
            // A node gets `hasHadChildren`, and a domain, before its first child.
            if !children.isEmpty {
                report(record, if: !has(NodeFlags.hasHadChildren), "has children but not the hasHadChildren flag")
                report(record, if: node.domainAndPart.loadDomain() == nil, "has children but no domain")
            }
            // ... and its parent part (`ChildSums`), which holds the stacks its children push onto.
            report(
                record, if: has(NodeFlags.hasHadChildren) && node.domainAndPart.loadPart() == nil,
                "has had children but has no parent part (ChildSums)")
            // `summarized` is set under the node's lock with a value or metadata that describes files, never
            // cleared. (Without extras, the defaults: no metadata, no observer.)
            let describesFiles = state.hasExtras && state.metadata.describesFiles
            report(
                record, if: (describesFiles || state.propertyValues != nil) && !has(NodeFlags.summarized),
                "it has a value or describes files but lacks the summarized flag")
            report(
                record, if: describesFiles && !has(NodeFlags.describesFiles),
                "its metadata describes files but it lacks the describesFiles flag")
            // `observed` is set under the node's lock with the first observer, cleared with the last.
            let observerCount = state.hasExtras ? state.observers.receivers.count : 0
            report(
                record, if: (observerCount > 0) != has(NodeFlags.observed),
                "the observed flag is \(has(NodeFlags.observed)) but it has \(observerCount) observers")
            return children
        }
        if let part = node.domainAndPart.loadPart() { checkSummaries(part, of: record, children: children, &scratch) }

        // MARK: Under the domain lock: flags, queue, sums

        // Every node of a tree resolves to the tree's domain (RefreshDomain's invariant); a node that was
        // queued or recorded (`shared`) has one.
        let domain = node.domainAndPart.loadDomain()
        if let domain {
            report(record, if: domain.representative !== representative, "its refresh domain is not its tree's")
        }
        report(record, if: has(NodeFlags.shared) && domain == nil, "shared with its parent but without a domain")
        // `refreshing` lives inside the domain lock, which this check holds.
        report(record, if: has(NodeFlags.refreshing), "refreshing outside a refresh")
        // Attached is unfinished: `retired` and `held` come with or after the detach, never cleared before it.
        report(record, if: has(NodeFlags.attached) && has(NodeFlags.retired), "attached and retired")
        report(record, if: has(NodeFlags.attached) && has(NodeFlags.held), "attached and held")
        // Held only with a live parent at the detach, which then retired it (`detachFromParent`, `retire`).
        report(record, if: has(NodeFlags.held) && !has(NodeFlags.retired), "held but not retired")
        // A held node is listed as finished in the same step (`finishIntoParent`); the flag is never cleared,
        // but the end of a hold takes the node out of its holder's table with it.
        report(
            record, if: from != nil && has(NodeFlags.held) != has(NodeFlags.listedAsFinished),
            "in a table, held is \(has(NodeFlags.held)) but listedAsFinished is \(has(NodeFlags.listedAsFinished))")
        // Queueing sets `shared` with `queued`; a refresh claims `shared` before it records a contribution.
        report(record, if: has(NodeFlags.queued) && !has(NodeFlags.shared), "queued but not shared")
        report(
            record, if: node.contributorIndex(scratch) >= 0 && !has(NodeFlags.shared),
            "a contributor to its parent's sums but not shared")
        // A credit's two steps take no lock and never wait: none is in progress at a quiescent point.
        report(record, if: !ChildSums.isSettled(node.domainAndPart.creditSequence), "a credit in progress")
        // Every fraction a refresh stores is finite and within 0...1 (FractionMath.fraction).
        let cached = Double(bitPattern: node.cachedFraction.load(ordering: .sequentiallyConsistent))
        report(record, if: !(cached >= 0 && cached <= 1), "its cached fraction \(cached) is not within 0...1")

        let queue = checkQueue(of: record, flags: flags)
        // A clean node's cached fraction is its counts and sums: a refresh or a path refresh stored it from
        // them, and anything that changes them since marks the node (or refreshes its path) after the change.
        if !has(NodeFlags.dirty) && !has(NodeFlags.refreshing) {
            let fraction = FractionMath.fraction(
                completed: node.completedStorage.load(ordering: .sequentiallyConsistent),
                total: node.totalStorage.load(ordering: .sequentiallyConsistent),
                childUnits: node.domainAndPart.childUnits(scratch))
            report(
                record, if: fraction.bitPattern != cached.bitPattern,
                "clean, but its cached fraction \(cached) is not \(fraction), from its counts and sums")
        }
        checkSums(
            node.domainAndPart.loadPart()?.checkedState(scratch), of: record, children: children, queue: queue, scratch)
    }

    /// The node's dirty queue: returns the addresses in it. Checks that it holds each node once, with
    /// `queued`, and only attached children or retired ones (a finished or failed child whose share a refresh
    /// has still to take out: the queue holds a reference to it); and that a node with anything queued is
    /// `dirty` (queue first, then mark: a refresh clears `dirty`, then drains).
    private func checkQueue(of record: Int, flags: UInt32) -> Set<UInt> {
        let address = reached[record].address
        var queue: Set<UInt> = []
        var entry = reached[record].node.domainAndPart.queueTop
        while let link = UnownedNode(address: entry) {
            guard queue.insert(entry).inserted else {
                report(record, "its dirty queue holds a node twice (or loops)")
                break
            }
            let queued = link.node
            let queuedFlags = queued.flags.load(ordering: .sequentiallyConsistent)
            report(record, if: queuedFlags & NodeFlags.queued == 0, "its dirty queue holds a node not flagged queued")
            let attachedHere =
                queuedFlags & NodeFlags.attached != 0
                && queued.parentAddress.load(ordering: .sequentiallyConsistent) == address
            report(
                record, if: !attachedHere && queuedFlags & NodeFlags.retired == 0,
                "its dirty queue holds a node neither attached to it nor retired")
            entry = queued.queueNext.load(ordering: .relaxed)
        }
        report(record, if: !queue.isEmpty && flags & NodeFlags.dirty == 0, "not dirty, with \(queue.count) queued")
        return queue
    }

    /// The node's `ChildSums` (their own invariants: `ContributionBuffer.violations()`) against its children:
    /// the contributors are its attached children, or retired ones still in its queue, each knowing its
    /// index, one contributor an entry. The entries do not name their children: each child that records an
    /// index must find a contribution there, no two the same, and there must be as many of them as
    /// contributions. Then each attached child against the queue and the sums: it is queued exactly when
    /// flagged `queued`, and `queued` when `dirty` (a mark queues the node it marks in its parent); clean and
    /// unqueued, it contributes `pendingInParent × cachedFraction` (nothing recorded: zero): the refresh or
    /// path refresh that stored its fraction recorded it.
    private func checkSums(
        _ sums: ChildSums.CheckedState?, of record: Int, children: [Int], queue: Set<UInt>,
        _ scratch: borrowing RefreshScratch
    ) {
        let contributions = sums?.contributions ?? []
        for problem in sums?.violations ?? [] { report(record, problem) }
        // The children and the retired nodes in the queue (the queue holds a reference to each): each of them
        // that records a contributor index is the one contributor at that index.
        let childAddresses = Set(children.map { reached[$0].address })
        let retired = queue.subtracting(childAddresses).compactMap { UnownedNode(address: $0)?.node }
        var claimedIndices: Set<Int> = []
        for claimant in children.map({ reached[$0].node }) + retired {
            let index = claimant.contributorIndex(scratch)
            guard index >= 0 else { continue }
            guard index < contributions.count, contributions[index] != nil else {
                // Named only here: a name is the path from the checked node, O(depth) to make.
                let who = children.first { reached[$0].node === claimant }.map(name) ?? "a retired node in its queue"
                report(record, "\(who) records contributor index \(index), which its sums do not give it")
                continue
            }
            report(
                record, if: !claimedIndices.insert(index).inserted,
                "two of its children record contributor index \(index)")
            report(
                record,
                if: claimant.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.attached == 0
                    && !queue.contains(UnownedNode(claimant).address),
                "contributor \(index) has left (retired) and is not in its queue to be taken out")
        }
        for index in contributions.indices where contributions[index] != nil && !claimedIndices.contains(index) {
            report(record, "contributor \(index) is neither a child nor in its queue")
        }
        for child in children {
            let node = reached[child].node
            let childFlags = node.flags.load(ordering: .sequentiallyConsistent)
            guard childFlags & NodeFlags.attached != 0 else { continue }
            let isQueued = childFlags & NodeFlags.queued != 0
            report(
                child, if: isQueued != queue.contains(reached[child].address),
                isQueued
                    ? "flagged queued but not in its parent's queue" : "in its parent's queue but not flagged queued")
            report(child, if: childFlags & NodeFlags.dirty != 0 && !isQueued, "attached and dirty but not queued")
            guard childFlags & (NodeFlags.stale | NodeFlags.queued) == 0 else { continue }
            let index = node.contributorIndex(scratch)
            let recorded = index >= 0 && index < contributions.count ? contributions[index] ?? 0 : 0
            let fraction = Double(bitPattern: node.cachedFraction.load(ordering: .sequentiallyConsistent))
            let expected = Double(node.pendingInParent.load(ordering: .relaxed)) * fraction
            report(
                child, if: recorded != expected,
                "clean and unqueued, but its parent's sums hold \(recorded), not \(expected)")
        }
    }

    /// The summaries the node keeps (Summaries/ProgressNode+Summaries.swift): its columns hold their shape;
    /// once started, every unfinished child of its table that may have a summary and has no change pending
    /// (not marked, not in the node's queue: a read from the child itself leaves it clean and queued) is a
    /// member, and its contribution is its summary now.
    private func checkSummaries(_ part: ChildSums, of record: Int, children: [Int], _ scratch: inout RefreshScratch) {
        for problem in part.columnViolations(scratch) { report(record, problem) }
        guard part.summariesStarted(scratch) else { return }
        for child in children where !reached[child].isFresh {
            let member = reached[child].node
            let flags = member.flags.load(ordering: .sequentiallyConsistent)
            let pending = NodeFlags.listedAsFinished | NodeFlags.dirty | NodeFlags.queued | NodeFlags.retired
            guard flags & pending == 0 && member.mayHaveSummary else { continue }
            let entry = member.contributorIndex(scratch)
            guard entry >= 0 else {
                report(child, "may have a summary, but is no member of its parent's started summaries")
                continue
            }
            report(
                child, if: flags & NodeFlags.hasHadChildren != 0 && !member.domainAndPart.summariesStarted(scratch),
                "a member with children whose own summaries have not started")
            let found = CheckReport()
            member.withSummaryParts(&scratch) { parts, scratch in
                for column in part.columns(scratch) {
                    var step = _ProgressTreeColumnStep(
                        .checkMember(entry: entry), column: column, parts: parts.parts(for: column.key, scratch),
                        report: found)
                    column.property._progressTreeColumnStep(&step)
                }
            }
            for problem in found.violations { report(child, problem) }
        }
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
