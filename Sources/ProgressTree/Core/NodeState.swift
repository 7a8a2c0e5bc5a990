/// The part of a node's state that changes with the shape of the tree, guarded by the node's lock.
///
/// The counts themselves live in atomics on the node so that updates never take this lock.
///
/// Two words inside the lock: the out-of-line `NodeExtras` and the link. `extras` comes first so that the
/// one-byte link ends the struct (9 bytes, not 16) and the node packs its `controlFlags` and an `Int32`
/// into the tail of its `Lock<NodeState>` (see "What a node holds" in Docs/Architecture.md).
struct NodeState {
    private var extras: NodeExtras?
    var link = ParentLink()

    /// Whether children, control state, observers or metadata were ever written (otherwise all are the
    /// defaults).
    var hasExtras: Bool { extras != nil }

    /// The attached children (the strong references that keep them alive), but for the fresh children
    /// pushed onto the node's fresh stack (`ChildSums.freshChildren`) since the last look: read it only after
    /// `ProgressNode.settleFreshChildren(_:)`. Out of line, in `NodeExtras`: most nodes are leaves, and a
    /// leaf's table would be an empty array and a count in every node.
    var children: ChildTable {
        _read {
            if let extras { yield extras.children } else { yield ChildTable() }
        }
        _modify { yield &extrasForWriting().children }
    }

    /// `children.isEmpty`, without making an empty table for a node without extras (a finishing leaf asks).
    var hasNoChildren: Bool { extras?.children.isEmpty ?? true }

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

    /// This node's entry of the property `key` names (Properties/PropertyStore.swift), `nil` when it has
    /// none: `propertyEntries?[key]` without a copy of the metadata, for a value set's walk up, which asks
    /// at every level.
    func propertyEntry(for key: ObjectIdentifier) -> PropertyEntry? {
        guard let properties = extras?.metadata.extras?.properties, !properties.isEmpty else { return nil }
        return properties[key]
    }

    /// Whether this node has any property entry: the walk's test before `propertyEntry(for:)`, so that a
    /// node without any (most of a path) builds no optional entry (its copies go through value witnesses).
    var hasPropertyEntries: Bool {
        guard let metadataExtras = extras?.metadata.extras else { return false }
        return !metadataExtras.properties.isEmpty
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

    /// `fileSums` without a reference count, for the walks that read it at every level of a path: valid
    /// while this lock is held (the node's `NodeExtras` holds it, and only a write under the lock replaces
    /// it).
    var unretainedFileSums: Unmanaged<FileSums>? {
        guard let extras, let sums = extras.fileSums else { return nil }
        return .passUnretained(sums)
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
