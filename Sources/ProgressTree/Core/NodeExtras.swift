/// What most nodes never use, kept out of line so that a node stays small: the child table (most nodes are
/// leaves), handlers and control state, observers, metadata. Allocated on the first write; reads of a node
/// without it see the defaults. Guarded by the node's lock, like the rest of `NodeState`.
final class NodeExtras {
    /// What the node's lock guards here. Without the dynamic exclusivity checks (a `swift_beginAccess` and
    /// its thread-local set on each access of a field, about 1,000 instructions of a value set's walk up 8
    /// levels): proof: it is reached only through `NodeState`'s accessors of its word, inside the node's lock,
    /// so accesses from two threads are ordered by the lock; and two overlapping accesses on one thread would
    /// have to overlap on the `NodeState` the lock lends out `inout`, which the compiler checks statically
    /// (a `NodeState` cannot be copied out of the lock: it is `~Copyable`).
    @exclusivity(unchecked) var guarded = Guarded()
    /// The node's `ObservableProgress`, while someone holds it (`ProgressNode.observable`).
    weak var observable: ObservableProgress?
    /// The parent this node was attached to, where the runtime has no `swift_tryRetain` (Core/SwiftRuntime.swift):
    /// what `retainNode(at:weakLink:)` loads instead. `nil` otherwise, and never cleared (it is read only
    /// together with a non-zero parent or holder address, which is this same node's).
    weak var parentReference: ProgressNode?

    /// The fields the node's lock guards.
    struct Guarded {
        /// The node's attached children (`NodeState.children`).
        var children = ChildTable()
        var control = ControlState()
        var observers = ObserverList()
        var metadata = Metadata()
        /// The address of the parent holding this node after it finished (`NodeFlags.held`), 0 otherwise.
        var holderAddress: UInt = 0
        /// The node's own values of its properties (Properties/PropertyValues.swift).
        var propertyValues: PropertyValues?
    }
}
