/// The part of a node's state that changes with the shape of the tree, guarded by the node's lock.
///
/// The counts themselves live in atomics on the node so that updates never take this lock.
struct NodeState {
    /// The attached children (the strong references that keep them alive), but for the fresh children
    /// pushed onto `ProgressNode.freshChildren` since the last look: read it only after
    /// `ProgressNode.settleFreshChildren(_:)`.
    var children = ChildTable()
    var link = ParentLink()
    private var extras: NodeExtras?

    /// Whether control state, observers or metadata were ever written (otherwise all are the defaults).
    var hasExtras: Bool { extras != nil }

    var control: ControlState {
        get { extras?.control ?? ControlState() }
        _modify { yield &extrasForWriting().control }
    }

    var observers: ObserverList {
        get { extras?.observers ?? ObserverList() }
        _modify { yield &extrasForWriting().observers }
    }

    var metadata: Metadata {
        get { extras?.metadata ?? Metadata() }
        _modify { yield &extrasForWriting().metadata }
    }

    /// The node's `ObservableProgress`, while someone holds it.
    var observable: ObservableProgress? {
        get { extras?.observable }
        set { extrasForWriting().observable = newValue }
    }

    /// The file summary this node keeps once it is read with children (Summaries/FileSums.swift); `nil`
    /// before. Its members join and leave under this lock.
    var fileSums: FileSums? {
        get { extras?.fileSums }
        set {
            if newValue == nil && extras == nil { return }
            extrasForWriting().fileSums = newValue
        }
    }

    /// The address of the parent that holds this node after it finished (see ProgressNode+HeldChildren.swift),
    /// 0 when none. Valid while it is read under this node's lock: a holder going away clears it there
    /// (`ProgressNode.orphan`) before its memory goes.
    var holderAddress: UInt {
        get { extras?.holderAddress ?? 0 }
        set {
            if newValue == 0 && extras == nil { return }
            extrasForWriting().holderAddress = newValue
        }
    }

    /// The weak link to the parent, where the runtime has no `swift_tryRetain` (see `NodeExtras`).
    var weakParent: ProgressNode? {
        get { extras?.parentReference }
        set { extrasForWriting().parentReference = newValue }
    }

    private mutating func extrasForWriting() -> NodeExtras {
        if let extras { return extras }
        let created = NodeExtras()
        extras = created
        return created
    }

    /// The state of a new node with no parent.
    init(userInfo: [ProgressNode.UserInfoKey: any Sendable]?) {
        if let userInfo { metadata.replaceUserInfo(userInfo) }
    }

    /// The state of a new node attached to a parent.
    init(attached: Void, userInfo: [ProgressNode.UserInfoKey: any Sendable]?) {
        link.attach()
        if let userInfo { metadata.replaceUserInfo(userInfo) }
    }
}
