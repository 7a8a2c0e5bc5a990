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
    /// The attached children and the queue of those that changed since the last refresh.
    var children = ChildTable()
    var control = ControlState()
    var observers = ObserverList()
    var metadata = Metadata()
}
