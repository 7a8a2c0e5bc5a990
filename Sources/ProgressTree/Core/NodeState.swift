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
///
/// The parent is held without a reference count: the parent retains its attached children, so a count
/// here would make a cycle, and a weak reference would cost a side-table allocation on every parent and
/// two side-table operations on every hop of an update's walk up the tree. What keeps the pointer safe:
/// - it is only read under this node's lock;
/// - a parent going away clears the pointer of each of its attached children under that child's lock, in
///   its `deinit` (`ProgressNode.deinit`, `orphan(from:)`), before its memory can be freed;
/// - so, under the child's lock, a non-nil pointer points to allocated memory, and `attachedParent` turns it
///   into a strong reference with the runtime's `swift_tryRetain`, which fails (and reads as no parent) when
///   the parent's `deinit` has already begun.
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
    /// The parent while attached and alive (see above); `nil` otherwise.
    private var parent: Unmanaged<ProgressNode>?

    init() {}

    /// Attaches to `parent`; only from `.none`.
    mutating func attach(to parent: borrowing ProgressNode, pendingUnitCount: Int64) {
        kind = .attached
        pending = pendingUnitCount
        self.parent = Unmanaged.passUnretained(parent)
    }

    /// Switches an attached link to `.detached`; returns the parent (`nil` if it is going away) and the
    /// pending count, or `nil` when the link was not attached.
    mutating func detach() -> (parent: ProgressNode?, pendingUnitCount: Int64)? {
        guard kind == .attached else { return nil }
        let parent = attachedParent
        kind = .detached
        self.parent = nil
        return (parent, pending)
    }

    /// Forgets a parent that is going away (its `deinit`). The link stays `.attached` (the node never
    /// finished into it), with no parent to tell.
    mutating func orphan(from parent: Unmanaged<ProgressNode>) {
        if self.parent?.toOpaque() == parent.toOpaque() { self.parent = nil }
    }

    /// The parent, retained, while attached and alive.
    var attachedParent: ProgressNode? {
        guard kind == .attached, let parent, swiftTryRetain(parent.toOpaque()) else { return nil }
        return parent.takeRetainedValue()
    }

    var pendingUnitCount: Int64? { kind == .none ? nil : pending }
}

/// The Swift runtime's `swift_tryRetain`: retains `object` and returns `true`, or returns `false` without
/// retaining when the object's `deinit` has begun. `object` must point to allocated memory.
///
/// The runtime exports it on every platform (its `unowned` and Objective-C interoperability machinery use
/// it) as `HeapObject *swift_tryRetain(HeapObject *)`: the object when retained, null when not (the runtimes
/// of the platforms this package supports, Swift 5.9 and later). Swift reserves the name for its runtime,
/// so it is looked up once in the running process instead of being declared with `@_silgen_name`.
private func swiftTryRetain(_ object: UnsafeMutableRawPointer) -> Bool {
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
        link.attach(to: parent, pendingUnitCount: pendingUnitCount)
        if let userInfo { metadata.userInfo = userInfo }
    }
}
