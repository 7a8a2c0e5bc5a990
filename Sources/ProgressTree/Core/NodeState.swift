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
/// (The parent itself is found through `ProgressNode.parentAddress`.)
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

    init() {}

    /// Attaches; only from `.none`.
    mutating func attach(pendingUnitCount: Int64) {
        kind = .attached
        pending = pendingUnitCount
    }

    /// Switches an attached link to `.detached`; returns the pending count, or `nil` when it was not attached.
    mutating func detach() -> Int64? {
        guard kind == .attached else { return nil }
        kind = .detached
        return pending
    }

    var pendingUnitCount: Int64? { kind == .none ? nil : pending }
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

private enum SwiftRuntime {
    static let tryRetain: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = {
        guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "swift_tryRetain") else {
            preconditionFailure("ProgressTree: the Swift runtime does not export swift_tryRetain")
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    }()
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
        link.attach(pendingUnitCount: pendingUnitCount)
        if let userInfo { metadata.userInfo = userInfo }
    }
}
