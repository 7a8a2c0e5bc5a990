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

    /// Attaches; only from `.none`.
    mutating func attach() { kind = .attached }

    /// Switches an attached link to `.detached`; returns whether it was attached.
    mutating func detach() -> Bool {
        guard kind == .attached else { return false }
        kind = .detached
        return true
    }
}
