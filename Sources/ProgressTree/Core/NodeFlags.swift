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
    /// recorded it in the parent's sums (`ChildSums.record` claims this bit with the domain lock's token,
    /// `claimShare`). A finishing node without it has never shown progress to a reader of its parent, so it is credited with
    /// one atomic add, without the domain lock (see `ProgressNode.detachFromParent`).
    static let shared: UInt32 = 1 << 7
    /// This node finished into its parent while nodes were attached below it: the parent keeps it in its
    /// `ChildTable`, for control transitions only, until nothing is attached below it any more (see
    /// ProgressNode+HeldChildren.swift). Set with the detach, cleared under this node's lock.
    static let held: UInt32 = 1 << 8
    /// Held, and its files folded into its parent's summary (under the parent's lock, in that critical
    /// section): readers of the parent's table about progress and shape skip it from then on.
    static let listedAsFinished: UInt32 = 1 << 9
    /// This node's summary may differ from the default (Summaries/): it set a property value, its metadata
    /// described files (its kind was `.file`, or a file count key was stored), or a child left it something
    /// (or was about to: a child that carries a summary sets it on its parent before it credits it). Set
    /// under this node's lock with the value or metadata, or by the child; never cleared. A node with neither
    /// this bit nor `hasHadChildren` has the default summary, so the engine counts it without taking its
    /// lock; a node with it always leaves its parent through `retire`, which takes its summaries out.
    static let summarized: UInt32 = 1 << 10
    /// This node left its parent's summaries (`leaveSummaries`), under the domain lock: it leaves once.
    static let folded: UInt32 = 1 << 11
    /// This node's own summary follows its counts: its metadata described files (a `.file` node's bytes are
    /// its unit counts). Set under its lock with the metadata, never cleared: a refresh recomputes its
    /// contribution whenever it records it.
    static let describesFiles: UInt32 = 1 << 12
    /// Something this node's summary is made of changed since the refresh last recorded it in its parent: a
    /// value, its file metadata, a member's contribution, something left in it. Set (with `summarized`)
    /// before the change is announced by a mark; tested and cleared by the record, before it reads what the
    /// summary is made of (Summaries/ProgressNode+Summaries.swift).
    static let summaryChanged: UInt32 = 1 << 13
    /// This node set a property value (Properties/PropertyValues.swift): set under its lock with the first
    /// one, never cleared. Whoever sees it clear sees no value, so the engine reads the values under the
    /// node's lock only where it is set (or `describesFiles`).
    static let hasValues: UInt32 = 1 << 14

    /// The bits of a node made with a user info that describes files.
    static let filesFromTheStart: UInt32 = summarized | describesFiles | summaryChanged

    /// The bits that tell a read the cached fraction may be stale.
    @usableFromInline static let stale: UInt32 = dirty | refreshing
}

extension ProgressNode {
    /// Replaces `flags` by `change(flags)` in one compare-and-exchange, retried until it holds, unless
    /// `change` returns `nil` (then nothing changes). Returns the flags as they were. Sequentially consistent
    /// (see the top of ProgressNode+Propagation.swift).
    @inline(__always)
    func updateFlags(_ change: (UInt32) -> UInt32?) -> UInt32 {
        var current = flags.load(ordering: .sequentiallyConsistent)
        while let desired = change(current) {
            let (exchanged, original) = flags.compareExchange(
                expected: current, desired: desired,
                successOrdering: .sequentiallyConsistent, failureOrdering: .sequentiallyConsistent)
            if exchanged { break }
            current = original
        }
        return current
    }
}
