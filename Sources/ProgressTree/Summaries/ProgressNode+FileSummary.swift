// Reading a subtree's files. A read keeps what it computes (Summaries/FileSums.swift, which states the
// invariants): the first read of a node with children computes every member, and makes it and every member
// with children of its own keep a file summary; a later read computes only the members that joined or that
// a refresh recorded since, and descends only into those. So a read costs O(changes since the last read):
// the nodes whose summary it computes are the ones that changed, and their ancestors up to the node read.
//
// A read holds its tree's domain lock throughout (the logs belong to it, and two reads of one tree must not
// interleave their updates of a contribution), and takes one node lock at a time inside it: domain lock,
// then a node lock, the one nesting of the model. The nodes it visits are retained under their parent's
// lock (a member is alive there) and released after the domain lock.
//
// A finished child that still has children attached hands its parent a summary computed by a walk of its
// attached subtree (`computeFileSummary`): a finish never waits for a read, so it cannot take the domain
// lock for the kept one.

extension ProgressNode {
    /// The files and bytes of this node's subtree (see `FileSummary` for the rule), including the children
    /// that already finished.
    ///
    /// Thread safety: safe from any thread; takes the tree's refresh lock, and one node lock at a time
    /// inside it. A concurrent update is either seen or not, never half seen: each node's counts and
    /// children are read under its lock, and a child that finishes meanwhile is counted once, attached or
    /// folded into this node.
    /// - Complexity: that of `fractionCompleted`, plus O(nodes changed below this one since the last read
    ///   of its summary): never O(children). The first read is O(attached nodes in the subtree); finished
    ///   children are O(1) in total (folded into their parent).
    public var fileSummary: FileSummary {
        readFileSummary().summary
    }

    /// The subtree's summary, and whether any node below this one (attached or finished) describes files.
    func subtreeFiles() -> (summary: FileSummary, hasFilesBelow: Bool) {
        let read = readFileSummary()
        return (read.summary, read.hasFilesBelow)
    }

    /// One read of a subtree's files and custom properties.
    struct FileSummaryRead {
        var summary: FileSummary
        /// The summaries of the properties set in the subtree (`nil`: none).
        var properties: PropertySummaries?
        /// Whether any node below the one read (attached or finished) describes files.
        var hasFilesBelow: Bool
        /// The nodes whose summary the read computed, the one read included: the changed ones, and their
        /// ancestors below it (for tests: a read is O(changes)).
        var visitedNodes: Int
    }

    /// Reads this node's file summary, keeping it (see the top of this file).
    func readFileSummary() -> FileSummaryRead {
        // Brings the children's cached partial progress (bytes of file nodes) up to date, and records every
        // child queued since the last refresh, which notes it in the logs of the nodes that keep a summary.
        _ = refresh()
        var visited: [ProgressNode] = []  // released after the domain lock: a `deinit` may run user code
        let read = unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ in keptFileSummary(retaining: &visited) }
        }
        withExtendedLifetime(visited) {}
        return read
    }

    /// Counts `child`'s files in this node's kept summary now, starting to keep one if it keeps none: what a
    /// metadata setter of `child` that can move its files calls (ProgressNode+MetadataChange.swift), once
    /// `child`'s lock is released. It is a read of this node's summary that also computes `child` (and
    /// nothing more when nothing else changed), under the domain lock like any read; so the writer pays for
    /// the change it made, and the next reader of this node does not (see the top of FileSums.swift).
    ///
    /// The usual case takes no allocation and one lock of each node: `child` has never had children, this
    /// node keeps a summary already, and no other member waits to be computed (`child` may have just
    /// joined). Then `child`'s summary, computed under its lock, replaces its contribution under this node's.
    /// Anything else goes through the read. `changedProperty`: the only property of `child` that changed
    /// (a value set), if that is the change: the usual case then replaces that property's contribution
    /// only, besides the files (a concurrent set of another property makes its own call).
    func keepFileContribution(of child: ProgressNode, changedProperty: ObjectIdentifier? = nil) {
        var visited: [ProgressNode] = []  // released after the domain lock: a `deinit` may run user code
        let address = FileSums.address(of: child)
        unretainedDomain._withUnsafeGuaranteedRef { domain in
            domain.withRepresentativeLock { _ in
                if child.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.hasHadChildren == 0 {
                    // Computed before this node's lock (one node lock at a time). A change of `child` after it
                    // is not lost: a metadata setter's own call waits for this domain lock and computes it
                    // again; a count change or an attach to `child` marks it, and a later read recomputes it.
                    let summary = child.state.withLock { child.ownSubtreeSummary(of: $0) }
                    let done = state.withLock { state -> Bool in
                        settleFreshChildren(&state)
                        return state.fileSums?.replaceIfNoOtherJoined(
                            address, by: summary, onlyProperty: changedProperty) ?? false
                    }
                    if done { return }
                }
                _ = keptFileSummary(retaining: &visited, alsoComputing: address)
            }
        }
        withExtendedLifetime(visited) {}
    }

    /// The read itself, under the domain lock: depth first over the nodes whose summary changed, with an
    /// explicit stack (a 10,000-deep chain needs no deep stack). `extra`, the address of one of this node's
    /// children, is computed too when it is a member (a writer's own change, see `keepFileContribution`).
    private func keptFileSummary(
        retaining visited: inout [ProgressNode], alsoComputing extra: UInt? = nil
    ) -> FileSummaryRead {
        var count = 1
        var frames: [FileSumsFrame] = []
        switch openFileSums(retaining: &visited, alsoComputing: extra) {
        case .done(let summary, let hasFilesBelow):
            return FileSummaryRead(
                summary: summary.files, properties: summary.properties, hasFilesBelow: hasFilesBelow,
                visitedNodes: count)
        case .descend(let members):
            frames.append(FileSumsFrame(node: .passUnretained(self), members: members))
        }
        while true {
            let top = frames.count - 1
            if let member = frames[top].members.popLast() {
                count += 1
                switch member._withUnsafeGuaranteedRef({ $0.openFileSums(retaining: &visited) }) {
                case .done(let summary, _):
                    frames[top].computed.append((UInt(bitPattern: member.toOpaque()), summary))
                case .descend(let members):
                    frames.append(FileSumsFrame(node: member, members: members))
                }
                continue
            }
            let frame = frames.removeLast()
            let (summary, hasFilesBelow) = frame.node._withUnsafeGuaranteedRef { $0.closeFileSums(frame.computed) }
            guard !frames.isEmpty else {
                return FileSummaryRead(
                    summary: summary.files, properties: summary.properties, hasFilesBelow: hasFilesBelow,
                    visitedNodes: count)
            }
            frames[frames.count - 1].computed.append((UInt(bitPattern: frame.node.toOpaque()), summary))
        }
    }

    /// The first look of a read at this node, under the domain lock and then this node's lock: either its
    /// summary (a node without children that keeps none, or one whose members did not change), or the
    /// members whose summary the read must compute first, retained into `visited`. Starts keeping a summary
    /// for a node with children that keeps none yet: every member that may have files is computed then.
    /// `extra`: a child's address to compute too, if it is a member (see `keepFileContribution(of:)`).
    private func openFileSums(
        retaining visited: inout [ProgressNode], alsoComputing extra: UInt? = nil
    ) -> FileSumsStep {
        // The children recorded since the last read (the log belongs to the domain lock, held here); `nil`
        // when the log overflowed, or when this node keeps no summary yet (every member is computed then).
        let logged = domainAndPart.unretainedPart()?._withUnsafeGuaranteedRef { $0.fileChanges?.take() }
        return state.withLock { state -> FileSumsStep in
            settleFreshChildren(&state)  // fresh children join the members
            let sums: FileSums
            var starts = false  // every member is computed by a read that starts the summary
            if let existing = state.fileSums {
                sums = existing
            } else {
                starts = true
                guard !state.hasNoChildren else {
                    let (summary, hasFilesBelow) = keptSummary(of: state, attached: nil)
                    return .done(summary, hasFilesBelow: hasFilesBelow)
                }
                sums = FileSums(owner: self, part: childSumsForRefresh)
                state.fileSums = sums
                sums.begin(with: state.children)
            }
            let log =
                childSumsForRefresh.fileChanges
                ?? {
                    let log = FileChangeLog()
                    childSumsForRefresh.fileChanges = log
                    return log
                }()
            log.limit = sums.members.count + 1_024
            var addresses = sums.takeJoined()
            if let extra { addresses.append(extra) }
            // The joined and logged addresses may repeat (the log drops only repeats in a row) and may name
            // children that left (or were never members): each is looked up, and a member computed once.
            // The keys of the members are distinct members, and those that may have files are computed: a
            // member with neither `describesFiles` nor `hasHadChildren` has an empty summary, its
            // contribution of zero (see FileSums.swift).
            let areMembers: Bool
            if let logged, !starts {
                addresses.append(contentsOf: logged)
                areMembers = false
            } else {
                areMembers = true
                addresses = sums.membersThatMayHaveFiles()
            }
            var members: [Unmanaged<ProgressNode>] = []
            members.reserveCapacity(addresses.count)
            var seen = Set<UInt>()
            for address in addresses where areMembers || sums.isMember(address) {
                if !areMembers && addresses.count > 1 { guard seen.insert(address).inserted else { continue } }
                // A member is alive under this lock: its own reference for the read, released after it.
                let member = Unmanaged<ProgressNode>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
                visited.append(member.takeUnretainedValue())
                members.append(member)
            }
            guard members.isEmpty else { return .descend(members) }
            let (summary, hasFilesBelow) = keptSummary(of: state, attached: sums)
            return .done(summary, hasFilesBelow: hasFilesBelow)
        }
    }

    /// The last look of a read at this node, once the members it opened with are computed: their new
    /// contributions (those that left meanwhile were folded or failed and are skipped), and the summary.
    /// Under the domain lock and this node's lock.
    private func closeFileSums(_ computed: [(address: UInt, summary: SubtreeSummary)]) -> (SubtreeSummary, Bool) {
        state.withLock { state in
            guard let sums = state.fileSums else { preconditionFailure("a node a read descended into keeps a summary") }
            for member in computed { sums.update(member.address, to: member.summary) }
            return keptSummary(of: state, attached: sums)
        }
    }

    /// This node's summary from its own facts and its members' totals (`sums`; `nil`: no member), with its
    /// finished children read in the same critical section as the members (so that a child is counted
    /// attached or folded, never both nor neither), and whether it has files below it. The caller holds
    /// this node's lock.
    private func keptSummary(of state: borrowing NodeState, attached sums: FileSums?) -> (SubtreeSummary, Bool) {
        let attached = sums?.total.summary ?? FileSummary()
        let facts = fileFacts(of: state, includingChildren: false)
        let below = facts.finishedChildren.fileTotalCount.addingSaturated(attached.fileTotalCount)
        let properties = Self.propertySummaries(entries: state.propertyEntries, totals: sums?.propertyTotals)
        return (SubtreeSummary(files: facts.summary(withChildren: attached), properties: properties), below > 0)
    }

    /// What a finished child hands to its parent's summary when it is released, decided under the child's
    /// lock (`state` is its state) by the finishing path (`finishAndCreditAncestors()`), in the critical
    /// section that detaches it: nothing (the common case: no file metadata anywhere in it), a leaf's own
    /// files (no walk, no allocation), or, when it still has attached children, a walk of its subtree.
    func finishedFileFold(of state: borrowing NodeState) -> FinishedFileFold {
        guard state.children.isEmpty else { return .walk }
        if !state.hasExtras || state.metadata.contributesNoFiles { return .nothing }
        let leaf = ownFileSummary(of: state)
        return leaf.isEmpty ? .nothing : .summary(leaf)
    }

    /// This node's file summary counting none of its attached children: a leaf's whole file summary. The
    /// caller holds this node's lock (`state` is its state).
    func ownFileSummary(of state: borrowing NodeState) -> FileSummary {
        fileFacts(of: state, includingChildren: false).summary(withChildren: FileSummary())
    }

    /// This node's files and properties counting none of its attached children: a leaf's whole summary.
    /// The caller holds this node's lock (`state` is its state).
    func ownSubtreeSummary(of state: borrowing NodeState) -> SubtreeSummary {
        SubtreeSummary(
            files: ownFileSummary(of: state),
            properties: Self.propertySummaries(entries: state.propertyEntries, totals: nil))
    }

    /// The summary a finished child hands to its parent, or `nil` when it has nothing to hand. Called
    /// outside every lock; only a `.walk` takes locks (this node's, then its attached children's, one at a
    /// time).
    func fileSummaryForFinishedParentFold(_ fold: FinishedFileFold) -> FileSummary? {
        switch fold {
        case .nothing: return nil
        case .summary(let summary): return summary
        case .walk:
            let summary = computeFileSummary().summary
            return summary.isEmpty ? nil : summary
        }
    }

    /// The summary of this node's subtree computed afresh, without what a read keeps: a walk of the attached
    /// subtree bottom-up, one node lock at a time, iteratively (a 10,000-deep chain needs no deep stack). For
    /// a finished child with children still attached (its fold), and for tests.
    func computeFileSummary() -> (summary: FileSummary, hasFilesBelow: Bool) {
        var stack = [SummaryFrame(node: self, facts: readFileFacts())]
        while true {
            let top = stack.count - 1
            if let child = stack[top].facts.children.popLast() {
                stack.append(SummaryFrame(node: child, facts: child.readFileFacts()))
                continue
            }
            let frame = stack.removeLast()
            let summary = frame.facts.summary(withChildren: frame.childrenSum)
            if stack.isEmpty {
                let below = frame.facts.finishedChildren.fileTotalCount.addingSaturated(
                    frame.childrenSum.fileTotalCount)
                return (summary, below > 0)
            }
            stack[stack.count - 1].childrenSum.add(summary)
        }
    }

    /// What the summary needs from this node, read under its lock.
    private func readFileFacts() -> FileFacts {
        state.withLock { state in
            settleFreshChildren(&state)
            return fileFacts(of: state, includingChildren: true)
        }
    }

    /// What the summary needs from this node; the caller holds this node's lock (`state` is its state).
    ///
    /// The counts are loaded relaxed: they are two independent values (an update may land between the two
    /// loads whatever the ordering), nothing else is published through them, and the rest comes from
    /// under the node's lock or the refresh above.
    private func fileFacts(of state: borrowing NodeState, includingChildren: Bool) -> FileFacts {
        let metadata = state.metadata  // one read of the node's extras
        let hasCounts = metadata.hasFileCountKeys
        return FileFacts(
            isFile: metadata.isFile,
            explicitTotal: hasCounts ? Self.fileCount(in: metadata.fileCountValue(.fileTotalCountKey)) : nil,
            explicitCompleted: hasCounts ? Self.fileCount(in: metadata.fileCountValue(.fileCompletedCountKey)) : nil,
            finishedChildren: metadata.finishedChildren,
            children: includingChildren && !state.children.isEmpty ? state.children.unfinishedEntries.map(\.node) : [],
            completed: completedStorage.load(ordering: .relaxed),
            total: totalStorage.load(ordering: .relaxed),
            childUnits: recentChildUnits)
    }

    /// A file count stored in `userInfo`, if it is a usable one: an integer (of any type) or an integral
    /// floating-point value, not negative. Anything else counts as not set.
    static func fileCount(in value: (any Sendable)?) -> Int? {
        guard let value else { return nil }
        if let integer = value as? any BinaryInteger { return nonNegativeInt(integer) }
        if let double = value as? Double, double.isFinite, double >= 0, double.rounded() == double {
            return double < 9.2e18 ? Int(double) : Int.max
        }
        return nil
    }
}

/// `value` as an `Int` (clamped), or `nil` when negative.
private func nonNegativeInt<Integer: BinaryInteger>(_ value: Integer) -> Int? {
    value < 0 ? nil : Int(clamping: value)
}

/// What a read does with a node it opens (`openFileSums`).
private enum FileSumsStep {
    /// Its summary, with nothing to compute below it.
    case done(SubtreeSummary, hasFilesBelow: Bool)
    /// The members whose summary the read computes first (retained by the read).
    case descend([Unmanaged<ProgressNode>])
}

/// A node a read descended into: the members still to compute, and those computed.
private struct FileSumsFrame {
    let node: Unmanaged<ProgressNode>
    var members: [Unmanaged<ProgressNode>]
    var computed: [(address: UInt, summary: SubtreeSummary)] = []
}

private struct SummaryFrame {
    let node: ProgressNode
    var facts: FileFacts
    var childrenSum = ProgressNode.FileSummary()
}

extension Metadata {
    /// Folds the summary of a child that finished (from `fileSummaryForFinishedParentFold(_:)`) into this
    /// node's total of finished children. Called under this node's lock, in the same critical section that
    /// removes the child, so a reader sees the child's files either attached or folded, never both or none.
    mutating func foldFinishedChild(_ summary: ProgressNode.FileSummary?) {
        if let summary { extrasForWriting().finishedChildren.add(summary) }
    }
}
