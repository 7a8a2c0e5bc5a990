#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Where a node stands with respect to a parent. Guarded by the node's lock, like the rest of `NodeState`.
/// (The parent itself is found through `ProgressNode.parentAddress`, the share through `pendingInParent`.)
struct ParentLink {
    enum Kind: UInt8 {
        /// Never added to a parent: `addChild` may adopt it.
        case none
        /// Attached: the parent counts this node's partial progress, weighted by its pending count.
        case attached
        /// Was attached and has finished (credited) or failed: the parent let it go. Permanent; later
        /// changes to this node no longer move the parent.
        case detached
    }

    private(set) var kind = Kind.none

    init() {}

    /// Attaches; only from `.none`.
    mutating func attach() { kind = .attached }

    /// Switches an attached link to `.detached`; returns whether it was attached.
    mutating func detach() -> Bool {
        guard kind == .attached else { return false }
        kind = .detached
        return true
    }
}

/// The Swift runtime's `swift_tryRetain`: retains `object` and returns `true`, or returns `false` without
/// retaining when the object's `deinit` has begun. `object` must point to allocated memory (for a parent:
/// inside a walk, see `ProgressNode.parentAddress`).
///
/// The runtime exports it on every platform (its `unowned` and Objective-C interoperability machinery use
/// it) as `HeapObject *swift_tryRetain(HeapObject *)`: the object when retained, null when not (the runtimes
/// of the platforms this package supports, Swift 5.9 and later). Swift reserves the name for its runtime,
/// so it is looked up once in the running process instead of being declared with `@_silgen_name`.
func swiftTryRetain(_ object: UnsafeMutableRawPointer) -> Bool {
    SwiftRuntime.tryRetain(object) != nil
}

/// Retains `node`, which no other thread can reach yet (it is in its initializer and not published), with
/// the runtime's non-atomic `swift_nonatomic_retain`: no other thread reads or writes its reference count
/// until the store that publishes it, which a lock release (or any release) orders after this one. Falls
/// back to an ordinary retain where the runtime does not export it.
func retainUnpublished(_ node: Unmanaged<ProgressNode>) -> Unmanaged<ProgressNode> {
    guard let retain = SwiftRuntime.nonatomicRetain else { return node.retain() }
    _ = retain(node.toOpaque())
    return node
}

private enum SwiftRuntime {
    static let tryRetain: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = {
        guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "swift_tryRetain") else {
            preconditionFailure("ProgressTree: the Swift runtime does not export swift_tryRetain")
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    }()

    /// `HeapObject *swift_nonatomic_retain(HeapObject *)`, if the runtime exports it.
    static let nonatomicRetain: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?)? = {
        guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "swift_nonatomic_retain") else {
            return nil
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    }()
}

/// What most nodes never use, kept out of line so that a node stays small: handlers and control state,
/// observers, metadata. Allocated on the first write; reads of a node without it see the defaults.
final class NodeExtras {
    var control = ControlState()
    var observers = ObserverList()
    var metadata = Metadata()
    /// The address of the parent holding this node after it finished (`NodeFlags.held`), 0 otherwise.
    var holderAddress: UInt = 0
    /// The node's `ObservableProgress`, while someone holds it (`ProgressNode.observable`).
    weak var observable: ObservableProgress?
    /// The file summary the node keeps once it is read with children (Descriptions/FileSums.swift).
    var fileSums: FileSums?
}

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

    /// The file summary this node keeps once it is read with children (Descriptions/FileSums.swift); `nil`
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
