/// The bits of `ProgressNode.flags`: everything an update, a walk up the tree or a clean read needs to know
/// about a node without taking its lock.
@usableFromInline
enum NodeFlags {
    /// This node's progress, or something below it, may have changed since the last refresh. A writer that
    /// finds it set stops there: somebody above already knows.
    @usableFromInline static let dirty: UInt32 = 1 << 0
    /// This node sits in its parent's dirty queue (`queueNext` links it), so it is queued at most once.
    static let queued: UInt32 = 1 << 1
    /// A refresh, under the tree's domain lock, has cleared `dirty` and not yet stored the new
    /// `cachedFraction`: a clean read must not use the cached one meanwhile.
    @usableFromInline static let refreshing: UInt32 = 1 << 2
    /// This node finished (or failed) and left its parent: no walk queues it there any more. If it was
    /// `shared`, the parent's dirty queue holds it (and a reference to it) until a refresh removes what it
    /// still contributed to the parent's sum; otherwise it never contributed (see `detachFromParent`).
    static let retired: UInt32 = 1 << 3
    /// Someone observes this node: a walk that marks it takes its lock to signal the observers.
    static let observed: UInt32 = 1 << 4
    /// Attached to a parent and not finished yet: the only time an update must look at the parent.
    static let attached: UInt32 = 1 << 5
    /// This node has had a child: its `deinit` must orphan its children and wait for walks in its tree.
    static let hasHadChildren: UInt32 = 1 << 6
    /// The parent may hold a share of this node's progress: it was queued in the parent, or a refresh
    /// recorded it in the parent's sums (`ChildSums.record` claims this bit under the domain lock). A
    /// finishing node without it has never shown progress to a reader of its parent, so it is credited with
    /// one atomic add, without the domain lock (see `ProgressNode.detachFromParent`).
    static let shared: UInt32 = 1 << 7
    /// This node finished into its parent while nodes were attached below it: the parent keeps it in its
    /// `ChildTable`, for control transitions only, until nothing is attached below it any more (see
    /// ProgressNode+HeldChildren.swift). Set with the detach, cleared under this node's lock.
    static let held: UInt32 = 1 << 8
    /// Held, and its files folded into its parent's summary (under the parent's lock, in that critical
    /// section): readers of the parent's table about progress and shape skip it from then on.
    static let listedAsFinished: UInt32 = 1 << 9
    /// This node's metadata has described files at some time: its kind was `.file`, or a file count key was
    /// stored. Set under this node's lock with the metadata, never cleared. A node with neither this bit nor
    /// `hasHadChildren` has an empty file summary, so a parent's kept summary counts it as zero without
    /// taking its lock (Summaries/FileSums.swift).
    static let describesFiles: UInt32 = 1 << 10
    /// This node has had a custom property entry at some time: a value
    /// (Properties/ProgressNode+Properties.swift) or what a child left behind (Properties/PropertyStore.swift).
    /// Set under its lock with the entry, never cleared: whoever sees it clear sees no entry. Like
    /// `describesFiles`, it tells a parent's kept summary that this node's summary may not be empty; a value
    /// set's walk passes a node without it (and without `observed` and `propertyLeavesPending`) without
    /// taking its lock (Properties/ProgressNode+PropertyPath.swift).
    static let hasProperties: UInt32 = 1 << 11
    /// Members of this node's kept summary left it since the last drain of their property slots
    /// (Summaries/PropertySums.swift): set and cleared under this node's lock with that list.
    static let propertyLeavesPending: UInt32 = 1 << 12
    /// Members joined this node's kept summary that no read computed yet (Summaries/FileSums.swift): set and
    /// cleared under this node's lock with that list, so that a read of a current property summary can tell
    /// without the lock (Properties/ProgressNode+PropertyPath.swift).
    static let membersJoined: UInt32 = 1 << 13

    /// The bits that tell a read the cached fraction may be stale.
    @usableFromInline static let stale: UInt32 = dirty | refreshing
}
