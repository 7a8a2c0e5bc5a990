/// Where a node stands with respect to a parent.
///
/// A struct rather than an enum with the weak reference as a payload: reading the kind or the pending count
/// then never copies the weak reference (each copy of a weak reference is a call into the runtime and an
/// atomic operation on the parent's side table), and reading the parent loads it in place.
struct ParentLink {
    enum Kind: UInt8 {
        /// Never added to a parent: `addChild` may adopt it.
        case none
        /// Attached: the parent counts this node's partial progress, weighted by `pendingUnitCount`.
        case attached
        /// Was attached and has finished: its pending count was credited to the parent, which let it go.
        /// Permanent; later changes to this node no longer move the parent.
        case detached
    }

    private(set) var kind = Kind.none
    private var pending: Int64 = 0
    /// The parent while attached, held weakly, as Foundation does: the parent retains its children, and a
    /// child alone does not keep its parent's tree alive. `nil` once detached.
    private weak var parent: ProgressNode?

    init() {}

    /// Attaches to `parent`; only from `.none`.
    mutating func attach(to parent: ProgressNode, pendingUnitCount: Int64) {
        kind = .attached
        pending = pendingUnitCount
        self.parent = parent
    }

    /// Switches an attached link to `.detached`; returns the parent (`nil` if it is gone) and the pending
    /// count, or `nil` when the link was not attached.
    mutating func detach() -> (parent: ProgressNode?, pendingUnitCount: Int64)? {
        guard kind == .attached else { return nil }
        kind = .detached
        let parent = self.parent
        self.parent = nil
        return (parent, pending)
    }

    var attachedParent: ProgressNode? { kind == .attached ? parent : nil }

    var pendingUnitCount: Int64? { kind == .none ? nil : pending }
}

/// A weak reference to a node, usable inside value types.
struct WeakNode {
    weak var node: ProgressNode?
}

/// The part of a node's state that changes with the shape of the tree, guarded by the node's lock.
///
/// The counts themselves live in atomics on the node so that updates never take this lock.
struct NodeState {
    var link = ParentLink()
    /// The attached children and the queue of those that changed since the last refresh.
    var children = ChildTable()
    var control = ControlState()
    var observers = ObserverList()
    var metadata = Metadata()

    /// The state of a new node with no parent.
    init(userInfo: [ProgressNode.UserInfoKey: any Sendable]?) {
        if let userInfo { metadata.userInfo = userInfo }
    }

    /// The state of a new node attached to `parent` for `pendingUnitCount` of its units.
    init(
        attachedTo parent: borrowing ProgressNode, pendingUnitCount: Int64,
        userInfo: [ProgressNode.UserInfoKey: any Sendable]?
    ) {
        link.attach(to: parent, pendingUnitCount: pendingUnitCount)
        if let userInfo { metadata.userInfo = userInfo }
    }
}
