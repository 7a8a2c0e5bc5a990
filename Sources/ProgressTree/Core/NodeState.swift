/// Where a node stands with respect to a parent.
enum ParentLink {
    /// Never added to a parent: `addChild` may adopt it.
    case none
    /// Attached: the parent counts this node's partial progress, weighted by `pendingUnitCount`.
    ///
    /// The parent is held weakly, as Foundation does: the parent retains its children, and a child alone
    /// does not keep its parent's tree alive.
    case attached(parent: WeakNode, pendingUnitCount: Int64)
    /// Was attached and has finished: its pending count was credited to the parent, which let it go.
    /// Permanent; later changes to this node no longer move the parent.
    case detached(pendingUnitCount: Int64)

    var attachedParent: ProgressNode? {
        if case .attached(let parent, _) = self { return parent.node }
        return nil
    }

    var pendingUnitCount: Int64? {
        switch self {
        case .none: nil
        case .attached(_, let pending), .detached(let pending): pending
        }
    }
}

/// A weak reference to a node, usable inside value types.
struct WeakNode {
    weak var node: ProgressNode?
}

/// The part of a node's state that changes with the shape of the tree, guarded by the node's lock.
///
/// The counts themselves live in atomics on the node so that updates never take this lock.
struct NodeState {
    var link: ParentLink = .none
    var children = ChildTable()
    /// Children whose progress changed since this node was last refreshed (each at most once, guarded by
    /// the child's `isQueuedInParent`). May hold children that have finished since; they are skipped.
    ///
    /// Held weakly: a child that finishes while queued is detached, and the queue must not keep it alive
    /// until the next read (SEMANTICS.md: a finished child is no longer retained by its parent). Attached
    /// children are kept alive by `children`, so only finished children can vanish from here.
    var dirtyChildren: [WeakNode] = []
    var control = ControlState()
    var observers = ObserverList()
    var metadata = Metadata()

    /// Queues `child` for the next refresh. Keeps the queue proportional to the live children even when
    /// nobody reads this node while many children come and go.
    ///
    /// Returns the finished children the clean-up dropped from the queue, for the caller to release after
    /// this node's lock: looking at a weak entry takes a strong reference, which may be the last one if the
    /// child's owner lets it go meanwhile, and the child's `deinit` (and whatever user code it releases)
    /// must not run under this lock. Empty, without allocating, when there was no clean-up.
    mutating func enqueueDirty(_ child: ProgressNode) -> [ProgressNode] {
        var dropped: [ProgressNode] = []
        if dirtyChildren.count >= 16 && dirtyChildren.count >= 2 * children.liveCount {
            dirtyChildren.removeAll { entry in
                guard let node = entry.node else { return true }
                if children.contains(node) { return false }
                dropped.append(node)
                return true
            }
        }
        dirtyChildren.append(WeakNode(node: child))
        return dropped
    }
}
