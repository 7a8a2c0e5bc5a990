extension ProgressNode {
    /// The files and bytes of this node's subtree (see `FileSummary` for the rule), including the children
    /// that already finished.
    ///
    /// Thread safety: safe from any thread; takes one node lock at a time. A concurrent update is either
    /// seen or not, never half seen: each node's counts and children are read under its lock.
    /// - Complexity: that of `fractionCompleted`, plus O(attached nodes in the subtree); finished
    ///   children are O(1) in total (folded into their parent).
    public var fileSummary: FileSummary {
        subtreeFiles().summary
    }

    /// The subtree's summary, and whether any node below this one (attached or finished) describes files.
    func subtreeFiles() -> (summary: FileSummary, hasFilesBelow: Bool) {
        _ = refresh()  // brings the children's cached partial progress (bytes of file nodes) up to date
        return computeFileSummary()
    }

    /// What a finished child hands to its parent's summary when it is released, decided under the child's
    /// lock (`state` is its state) by the finishing path (`finishAndCreditAncestors()`), in the critical
    /// section that detaches it: nothing (the common case: no file metadata anywhere in it), a leaf's own
    /// files (no walk, no allocation), or, when it still has attached children, a walk of its subtree.
    func finishedFileFold(of state: NodeState) -> FinishedFileFold {
        guard state.children.isEmpty else { return .walk }
        if !state.hasExtras || state.metadata.contributesNoFiles { return .nothing }
        let leaf = fileFacts(of: state, includingChildren: false).summary(withChildren: FileSummary())
        return leaf.isEmpty ? .nothing : .summary(leaf)
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

    /// Walks the attached subtree bottom-up, one node lock at a time, iteratively (a 10,000-deep chain
    /// needs no deep stack).
    private func computeFileSummary() -> (summary: FileSummary, hasFilesBelow: Bool) {
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
    private func fileFacts(of state: NodeState, includingChildren: Bool) -> FileFacts {
        let userInfo = state.metadata.userInfo
        return FileFacts(
            isFile: state.metadata.isFile,
            explicitTotal: userInfo.isEmpty ? nil : Self.fileCount(in: userInfo[.fileTotalCountKey]),
            explicitCompleted: userInfo.isEmpty ? nil : Self.fileCount(in: userInfo[.fileCompletedCountKey]),
            finishedChildren: state.metadata.finishedChildren,
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
