/// What most nodes never use, kept out of line so that a node stays small: the child table (most nodes are
/// leaves), handlers and control state, observers, metadata. Allocated on the first write; reads of a node
/// without it see the defaults. Guarded by the node's lock, like the rest of `NodeState`.
final class NodeExtras {
    /// The node's attached children (`NodeState.children`).
    var children = ChildTable()
    var control = ControlState()
    var observers = ObserverList()
    var metadata = Metadata()
    /// The address of the parent holding this node after it finished (`NodeFlags.held`), 0 otherwise.
    var holderAddress: UInt = 0
    /// The node's `ObservableProgress`, while someone holds it (`ProgressNode.observable`).
    weak var observable: ObservableProgress?
    /// The file summary the node keeps once it is read with children (Summaries/FileSums.swift).
    var fileSums: FileSums?
    /// The parent this node was attached to, where the runtime has no `swift_tryRetain` (Core/SwiftRuntime.swift):
    /// what `retainNode(at:weakLink:)` loads instead. `nil` otherwise, and never cleared (it is read only
    /// together with a non-zero parent or holder address, which is this same node's).
    weak var parentReference: ProgressNode?
}
