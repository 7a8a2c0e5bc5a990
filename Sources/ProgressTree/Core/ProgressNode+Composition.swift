extension ProgressNode {
    /// Attaches `child` to this node, where it stands for `pendingUnitCount` of this node's units.
    ///
    /// The child's progress counts at once: a partially done child adds its share × its fraction to
    /// `fractionCompleted`; an already finished child credits `pendingUnitCount` to `completedUnitCount` and
    /// is not retained. When the child finishes later, the same happens then: its pending count moves into
    /// this node's `completedUnitCount` and this node lets it go, so finished children cost no memory.
    /// A child added to a cancelled or paused node becomes cancelled or paused.
    ///
    /// - Precondition: `child` has never been added to a parent, and is neither this node nor one of its
    ///   ancestors (that would make a cycle). `pendingUnitCount` is not negative.
    /// - Complexity: O(depth of this node) for the cycle check; O(1) otherwise.
    public func addChild(_ child: ProgressNode, withPendingUnitCount pendingUnitCount: Int64) {
        Self.checkPendingUnitCount(pendingUnitCount, in: "addChild(_:withPendingUnitCount:)")
        precondition(child !== self, "addChild(_:withPendingUnitCount:): a node cannot be its own child")

        // 1. Claim the child. Until it is flagged `attached` below, its updates do not try to finish into us.
        child.state.withLock { state in
            switch state.link.kind {
            case .none:
                state.link.attach()
                if SwiftRuntime.tryRetain == nil { state.weakParent = self }  // Core/SwiftRuntime.swift
            case .attached:
                preconditionFailure(
                    "addChild(_:withPendingUnitCount:): the child already has a parent; a node can be added to one parent only"
                )
            case .detached:
                preconditionFailure(
                    "addChild(_:withPendingUnitCount:): the child was already added to a parent, finished and was "
                        + "detached from it; a node can be added to one parent only, once")
            }
        }
        // 2. Check for a cycle: the child must not be this node's ancestor. After the claim, so that of two
        // claims closing a cycle at once, the later one's walk sees the other (links change only under the
        // nodes' locks, and each step of the walk reads one).
        var ancestor = parentUnderLock()
        while let node = ancestor {
            precondition(
                node !== child,
                "addChild(_:withPendingUnitCount:): the child is an ancestor of this node; adding it would make a cycle"
            )
            ancestor = node.parentUnderLock()
        }
        // 3. Join the trees' refresh domains, before any refresh or walk can cross the new edge.
        RefreshDomain.merge(child, into: self)
        // 4. Insert it, then link it up: from here on its updates walk into this node.
        child.pendingInParent.store(pendingUnitCount, ordering: .sequentiallyConsistent)
        state.withLock { state in
            settleFreshChildren(&state)  // the table keeps the order of addition
            state.children.insert(child)
            if flags.load(ordering: .relaxed) & NodeFlags.hasHadChildren == 0 {
                // Its summary is made of its children's from now on: recorded anew (before the mark below).
                flags.bitwiseOr(NodeFlags.hasHadChildren | NodeFlags.summaryChanged, ordering: .relaxed)
            }
        }
        // The parent part, whose dirty queue the child's walks push onto, before the child links up.
        domainAndPart.partCreatingIfNone()
        child.parentAddress.store(UnownedNode(self).address, ordering: .sequentiallyConsistent)
        child.flags.bitwiseOr(NodeFlags.attached, ordering: .sequentiallyConsistent)
        // 5. Queued, so that its current progress counts at once.
        child.enqueue(in: UnownedNode(self))
        // 6. A child that finished (before or during the above) is credited and released now.
        child.countsDidChange(completed: child.completedUnitCount, total: child.totalUnitCount)
        markChanged()
        // This node's state once the child's credit is in (it may have finished this node, which then left
        // its pause): from the insert on, a transition of this node lists the child, so reading it any time
        // after is as good as reading it with the insert, and `inheritControlState` checks it again.
        let inherited = ControlFlags(rawValue: controlFlags.load(ordering: .sequentiallyConsistent))
        child.inheritControlState(inherited, from: self)
        // 7. A child that failed before it was linked (see `fail`) leaves again at once.
        releaseChildThatFailedBeforeLinking(child)
    }

    /// The node above this one, read under this node's lock (the cycle check's view of the links): the
    /// parent while attached, or the parent that holds it after it finished (transitions go down through
    /// held nodes, so a cycle through one would never end).
    private func parentUnderLock() -> ProgressNode? {
        state.withLock { state in
            if state.link.kind == .attached { return parentUnderOwnLock(state) }
            guard isHeld else { return nil }
            return retainNode(at: state.holderAddress, weakLink: state.weakParent)?.takeRetained()
        }
    }

    /// The attached, unfinished children, in the order they were added: a snapshot, for user interfaces
    /// that show the tree. Finished children are not listed: they are credited and let go (see
    /// `addChild`), or, when work is still attached below them, kept only so that cancelling, pausing and
    /// resuming this node reach that work.
    ///
    /// - Complexity: O(children); takes this node's lock once.
    public var children: [ProgressNode] {
        state.withLock { state in
            settleFreshChildren(&state)
            return state.children.unfinishedEntries.map(\.node)
        }
    }

    /// The first `limit` of `children`, in the same order, and how many `children` lists: for views that
    /// show a bounded number of a wide node's children, at a cost that does not grow with its width.
    ///
    /// The first children of a node stay the first until they leave it (children are only ever added
    /// last), so a caller that looks again sees the same ones, less those that finished or failed, then
    /// the next ones.
    ///
    /// - Complexity: O(`limit` + the slots of children that left before them, fewer than the children);
    ///   `count` is exact but for finished children still held for their attached work (see
    ///   `ProgressNode+HeldChildren.swift`) past the first `limit`, which it includes. Takes this node's
    ///   lock once.
    package func children(first limit: Int) -> (children: [ProgressNode], count: Int) {
        state.withLock { state in
            settleFreshChildren(&state)
            var first: [ProgressNode] = []
            first.reserveCapacity(min(max(0, limit), Int(state.children.liveCount)))
            var held = 0
            for child in state.children.entries {
                if first.count >= limit { break }
                if child.node.isListedAsFinished {
                    held += 1
                } else {
                    first.append(child.node)
                }
            }
            return (first, Int(state.children.liveCount) - held)
        }
    }
}
