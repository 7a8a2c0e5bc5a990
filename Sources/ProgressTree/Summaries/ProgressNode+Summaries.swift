// The summary engine: the summaries of every property over each subtree, the built-in file summary among
// them (FileSummaryProperty.swift), kept as the fractions are (ChildSums), by the same reads.
//
// A node's summary of a property is computed in one place (`ProgressProperty._progressTreeNodeSummary`)
// from its parts: its own value (or, for the files, its facts), and what it keeps of its children, the
// column of that property in its `ChildSums`: each member's contribution (a segment tree over their entries
// there) merged with what the children that left left behind.
//
// Changes travel as progress does. A value set, a change of a node's kind or file counts, a count change
// (a file's bytes) all mark the node changed (`markChanged`); the refresh that records the node in its
// parent's sums (`ChildSums.record`) also sets its contribution in the parent's table, once that table has
// started. A refresh records bottom-up, so a node's table is current when the node is recorded. So a read of
// a summary is a refresh, then a look at the node's own parts: O(changes since the last read).
//
// Invariants (under the tree's domain lock; checked by `invariantViolations()`, ProgressNode+Invariants.swift,
// under PROGRESSTREE_INTERNAL_CHECKS):
// - Started tables are closed downward: a member with children of a started table has a started table.
//   A table starts at the first read of its node's summary (`startSummaries`), which starts its members'
//   tables first (iteratively: a 10,000-deep chain needs no deep stack), or when a member recorded later
//   turns out to have children.
// - Members. In a started table, every child the node lists as attached (in its `ChildTable`, not listed as
//   finished) that may have a summary other than the default (`NodeFlags.summarized` or `hasHadChildren`)
//   has an entry in the node's `ChildSums` (it was claimed there, `claimShare`, so its finish goes through
//   `retire`, under this lock or into the queue a read drains) and its contribution at that entry, as of its
//   last record: a change since marked it, and the next refresh records it again. Entries of children that
//   left hold the default.
// - Counted once. A child that finishes or fails leaves its parent's summaries in one step under this lock
//   (`leaveSummaries`, from `retire` or from the refresh that drains it): its contribution is reset and what
//   it leaves behind (`summaryLeftBehind`, by its outcome) joins the column's `left`. So each child counts
//   once, as a member or in `left`, never both nor neither. A child that may carry a summary (`summarized`,
//   or `held`: work attached below it) always leaves that way, and marks its parent `summarized` before it
//   credits it, so that the parent, finishing in turn, leaves its own parent the same way.
// - Values set after a node left its parent are refused at the set (Properties/RefusedValues.swift): what
//   it left is final.

extension ProgressNode {
    /// Whether this node's summary may differ from the default: it has a value, describes files, had
    /// something left in it, or has had children (which may). One load, no lock.
    var mayHaveSummary: Bool {
        flags.load(ordering: .sequentiallyConsistent) & (NodeFlags.summarized | NodeFlags.hasHadChildren) != 0
    }

    /// Sets `NodeFlags.summarized` (never cleared): under this node's lock with the value or metadata that
    /// makes it so, or by a child about to leave it something.
    func noteSummarized() {
        if flags.load(ordering: .relaxed) & NodeFlags.summarized == 0 {
            flags.bitwiseOr(NodeFlags.summarized, ordering: .sequentiallyConsistent)
        }
    }

    /// Sets `NodeFlags.summaryChanged`: what this node's summary is made of changed, and the mark (or the
    /// record one level up, in the same refresh) that announces it comes after.
    func noteSummaryChanged() {
        if flags.load(ordering: .sequentiallyConsistent) & NodeFlags.summaryChanged == 0 {
            flags.bitwiseOr(NodeFlags.summaryChanged, ordering: .sequentiallyConsistent)
        }
    }

    // MARK: Reading

    /// Brings this node's summaries up to date (a refresh, and the start of its table at the first read),
    /// then calls `body` with its parts for `property`, under the domain lock. `body` computes the summary:
    /// the property's own code, which may run `reduce` and `merge` there.
    @usableFromInline
    func readSummaryParts(
        of property: any ProgressProperty.Type, _ body: (_ProgressTreeSummaryParts) -> Void
    ) {
        _ = refresh()  // records what changed below, bottom-up, into the started tables
        var released: [ProgressNode] = []
        unretainedDomain.withRepresentativeLock { scratch in
            startSummaries(&scratch)
            withSummaryParts(&scratch) { parts, scratch in body(parts.parts(for: property, scratch)) }
            if !scratch.released.isEmpty { swap(&released, &scratch.released) }
        }
        if !released.isEmpty { releaseOutsideTheLock(&released) }
    }

    /// The files and bytes of this node's subtree, and whether any node below it (attached or finished)
    /// describes files.
    func subtreeFiles() -> (summary: FileSummary, hasFilesBelow: Bool) {
        var result = (summary: FileSummary(), hasFilesBelow: false)
        readSummaryParts(of: FileSummaryProperty.self) { parts in
            result.summary = FileSummaryProperty._progressTreeNodeSummary(parts)
            let below = parts.below(FileSummaryProperty.self)
            result.hasFilesBelow = (below?.fileTotalCount ?? 0) > 0
        }
        return result
    }

    // MARK: A node's parts

    /// Calls `body` with what the engine reads of this node for its summaries: its own values and file facts
    /// and its columns. Under the domain lock; when the node has values or files of its own (`hasValues`,
    /// `describesFiles`), `body` runs under the node's lock too, so that its values are read where a writer
    /// would wait (no writer changes them meanwhile, and none needs a copy after). `body` runs the engine's
    /// steps and the property's own `reduce` and `merge`, which call nothing of the tree.
    func withSummaryParts(
        _ scratch: inout RefreshScratch, _ body: (SummaryParts, inout RefreshScratch) -> Void
    ) {
        let childUnits = domainAndPart.childUnits(scratch)
        let sums = domainAndPart.sums
        let flags = flags.load(ordering: .sequentiallyConsistent)
        guard flags & (NodeFlags.hasValues | NodeFlags.describesFiles) != 0 else {
            return body(SummaryParts(sums: sums), &scratch)
        }
        state.withLock { state in
            // Set under this lock with the first value: clear here, the node has none to read.
            let values = self.flags.load(ordering: .relaxed) & NodeFlags.hasValues != 0 ? state.lentPropertyValues : nil
            guard let files = state.fileMetadata else {
                return body(SummaryParts(values: values, sums: sums), &scratch)
            }
            // The counts are loaded relaxed: two independent values (an update may land between the two loads
            // whatever the ordering), publishing nothing else; the rest comes from under the lock.
            let facts = FileFacts(
                isFile: files.isFile, explicitTotal: files.counts?.total, explicitCompleted: files.counts?.completed,
                completed: completedStorage.load(ordering: .relaxed), total: totalStorage.load(ordering: .relaxed),
                childUnits: childUnits)
            return body(SummaryParts(values: values, files: facts, sums: sums), &scratch)
        }
    }

    /// A file count stored in `userInfo`, if it is a usable one: an integer (of any type) or an integral
    /// floating-point value, not negative. Anything else counts as not set.
    static func fileCount(in value: (any Sendable)?) -> Int? {
        guard let value else { return nil }
        // `Int` first: what `fileTotalCount` stores, and a cast to a type, not to a protocol's existential
        // (which looks the conformance up: most of a first read of 100,000 files).
        if let integer = value as? Int { return integer < 0 ? nil : integer }
        if let integer = value as? any BinaryInteger { return nonNegativeInt(integer) }
        if let double = value as? Double, double.isFinite, double >= 0, double.rounded() == double {
            return double < 9.2e18 ? Int(double) : Int.max
        }
        return nil
    }

    // MARK: Starting

    /// Starts counting this node's members in its summaries, if it has had children and they have not
    /// started: every member's contribution computed, the summaries of members with children started first.
    /// Iterative (an explicit stack). Under the domain lock; one node lock at a time.
    func startSummaries(_ scratch: inout RefreshScratch) {
        guard flags.load(ordering: .sequentiallyConsistent) & NodeFlags.hasHadChildren != 0,
            !domainAndPart.summariesStarted(scratch),
            let members = beginSummaries(&scratch)
        else { return }
        // The members are held as `UnownedNode`s, without a reference count each (see `beginSummaries`). The
        // frame being worked on is a local, so that taking its members costs no copy-on-write check of an
        // array inside another (a retain and a release per member).
        var current = StartFrame(node: UnownedNode(self), entry: -1, members: members)
        var above: [StartFrame] = []
        while true {
            if let (member, entry) = current.members.popLast() {
                if let below = member.beginSummaries(&scratch) {
                    above.append(current)
                    current = StartFrame(node: member, entry: entry, members: below)
                } else {
                    current.node.setLeafContribution(of: member, at: entry, &scratch)
                }
                continue
            }
            // Every member's contribution is in: merge each column once.
            current.node.rebuildColumns(scratch)
            guard let parent = above.popLast() else { return }
            parent.node.setLeafContribution(of: current.node, at: current.entry, &scratch)
            current = parent
        }
    }

    /// Starts this node's summaries, if it has had children and they have not started, and returns its
    /// members with their entries (claimed in its `ChildSums`), for the caller to compute; `nil` when there is
    /// nothing to start. The members are `UnownedNode`s: each stays alive while the caller holds the domain
    /// lock, as `UnownedNode` states (a member of a summary start).
    func beginSummaries(_ scratch: inout RefreshScratch) -> [(UnownedNode, Int)]? {
        guard flags.load(ordering: .sequentiallyConsistent) & NodeFlags.hasHadChildren != 0 else { return nil }
        let part = domainAndPart.partCreatingIfNone()
        guard !part.summariesStarted(scratch) else { return nil }
        part.setSummariesStarted(scratch)
        return state.withLock { state -> [(UnownedNode, Int)] in
            settleFreshChildren(&state)  // fresh children are members too
            var members: [(UnownedNode, Int)] = []
            members.reserveCapacity(Int(state.children.liveCount))
            state.children.forEachUnfinished { child in
                // A child that finished meanwhile without a share left nothing (it may have none).
                guard child.mayHaveSummary, let entry = part.memberEntry(for: child, scratch) else { return }
                members.append((UnownedNode(child), entry))
            }
            return members
        }
    }

    // MARK: Recording

    /// A recorded child's contribution to this node's started summaries, when it may have changed: a child
    /// whose summary follows its counts (`describesFiles`), or one whose summary changed since its last
    /// record (`summaryChanged`, set by writers and when it had its first child, or its part's note that a
    /// column changed; both cleared here, before its parts are read: a change after this comes with a new
    /// mark, and the next refresh records the child again). Under the domain lock, from `recordInSums`.
    @inline(never)  // off the refresh's common path: nodes without summaries
    func recordSummary(of child: ProgressNode, _ scratch: inout RefreshScratch) {
        let flags = child.flags.load(ordering: .sequentiallyConsistent)
        // Both notes are taken, whichever says so: the refresh's own (under this lock) and the writers'.
        let columnsChanged = child.domainAndPart.sums?.takeColumnsChanged(scratch) == true
        let written =
            flags & NodeFlags.summaryChanged != 0
            && child.flags.bitwiseAnd(~NodeFlags.summaryChanged, ordering: .sequentiallyConsistent).oldValue
                & NodeFlags.summaryChanged != 0
        guard flags & NodeFlags.describesFiles != 0 || columnsChanged || written else { return }
        // A member recorded before keeps its entry: read here, the look-up (which may claim one) only when not.
        let known = child.contributorIndex(scratch)
        guard let entry = known >= 0 ? known : domainAndPart.memberEntry(for: child, scratch) else { return }
        // Its flags loaded again, after the note was taken: a first child it got since the load above (which
        // sets `hasHadChildren` with the note, and no lock) is seen here, or comes with a new note.
        let hasHadChildren = child.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.hasHadChildren != 0
        if hasHadChildren && !child.domainAndPart.summariesStarted(scratch) { child.startSummaries(&scratch) }
        setContribution(of: child, at: entry, &scratch)
    }

    /// Sets `member`'s contribution at `entry` in every column of this node's summaries (a column made for
    /// each property it has and this node has not), from its parts: a property it no longer has (a file that
    /// is no file any more) contributes the default. Under the domain lock.
    @inline(__always)  // once a level of every changed path
    func setContribution(
        of member: ProgressNode, at entry: Int, merging: Bool = true, _ scratch: inout RefreshScratch
    ) {
        let own = NodeFlags.hasValues | NodeFlags.describesFiles
        if member.flags.load(ordering: .sequentiallyConsistent) & own == 0 {
            // No value or file of its own (a folder, most of a path): what it keeps of its children.
            domainAndPart.setContribution(at: entry, ofColumnsOf: member.domainAndPart, merging: merging, scratch)
        } else {
            member.withSummaryParts(&scratch) { parts, scratch in
                domainAndPart.setContribution(at: entry, of: parts, merging: merging, scratch)
            }
        }
        // The columns note the change (`ChildSums.noteColumnsChanged`): recorded in this node's own parent's
        // summaries at its next record (later in this refresh).
        scratch.computedSummaries += 1
    }

    // MARK: Leaving

    /// `child`, which finished or failed and was retired from this node's sums, leaves this node's
    /// summaries: what it leaves behind, by its outcome, joins each column's `left`, and its contribution goes.
    /// Once (`NodeFlags.folded`); nothing for a child that carries no summary (`mayHaveSummary`). Under the
    /// domain lock, from `retire` or from the refresh that drains the child, before its entry is removed.
    func leaveSummaries(of child: ProgressNode, _ scratch: inout RefreshScratch) {
        guard child.mayHaveSummary,
            child.flags.bitwiseOr(NodeFlags.folded, ordering: .sequentiallyConsistent).oldValue & NodeFlags.folded == 0
        else { return }
        // Its summary as of now: what finished into it first (a refresh of it drains its queue), and its
        // table started if it has children.
        _ = child.refreshDirtySubtree(&scratch)
        child.startSummaries(&scratch)
        let outcome: ProgressPropertyOutcome =
            child.isFailed ? .failed : child.currentControlFlags.contains(.cancelled) ? .cancelled : .finished
        let entry = child.contributorIndex(scratch)
        let part = domainAndPart.partCreatingIfNone()
        child.withSummaryParts(&scratch) { parts, scratch in part.fold(parts, by: outcome, scratch) }
        if entry >= 0 { part.forEachColumn(.clear(entry: entry), scratch) }
        part.noteColumnsChanged(scratch)
        noteSummarized()
        #if PROGRESSTREE_INTERNAL_CHECKS
        if let first = part.columnViolations(scratch).first {
            preconditionFailure("ProgressTree internal check failed: \(first)")
        }
        #endif
    }
}

/// `value` as an `Int` (clamped), or `nil` when negative.
private func nonNegativeInt<Integer: BinaryInteger>(_ value: Integer) -> Int? {
    value < 0 ? nil : Int(clamping: value)
}

/// One node of a start (`startSummaries`): its members still to compute, and its entry in its parent.
private struct StartFrame {
    let node: UnownedNode
    let entry: Int
    var members: [(UnownedNode, Int)]
}
