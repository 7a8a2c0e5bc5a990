import Synchronization

/// The lock that serializes the reads of one tree, and the buffers those reads reuse.
///
/// Two refreshes of overlapping parts of a tree must not run at once: they could split one dirty queue
/// between them, and one could return before the part the other took was applied. Refreshes of unrelated
/// trees never touch the same node, so each tree has a domain of its own, and a read never waits for a read
/// of another tree.
///
/// Domains follow the shape of the tree by merging, never by splitting:
/// - a node gets a domain when it is first read, first gets a child, or is created attached (it then takes
///   its parent's);
/// - `addChild` merges the two trees' domains (`merge(_:into:)`): one *forwards* to the other, and readers
///   follow the forwards to the representative, the one domain that forwards nowhere;
/// - a finished child detached from its parent keeps its domain. Its own unfinished descendants, if any, are
///   read under the same lock as its former tree, which is correct (a domain only has to cover every node a
///   refresh can touch) and costs nothing unless both are read at the same moment.
///
/// Invariant: two nodes a refresh can reach from one another resolve to the same representative whenever a
/// refresh runs, because a forward is set under the forwarding domain's lock (so no refresh is running in it,
/// and the next one follows the forward) and before a refresh can cross the new edge (the child is inserted
/// in the parent's table after the merge).
final class RefreshDomain: Sendable {
    let lock = Lock<RefreshScratch>(RefreshScratch())
    /// The domain this one was merged into; set once, under `lock`.
    private let forward = AtomicLazyReference<RefreshDomain>()
    /// An upper bound of the length of the forward chains that end here (union by rank).
    private let rank = Atomic<Int>(0)

    init() {}

    /// The domain this one forwards to, following every forward; itself when it was never merged.
    var representative: RefreshDomain {
        var domain = self
        while let next = domain.forward.load() { domain = next }
        return domain
    }

    /// The domain this one forwards to directly, if it was merged (for tests).
    var forwardTarget: RefreshDomain? { forward.load() }

    /// Runs `body` under the lock of this domain's representative, with its scratch buffers.
    func withRepresentativeLock<Result>(_ body: (inout RefreshScratch) -> Result) -> Result {
        var domain = representative
        while true {
            // A merge may forward the representative between the look-up and the lock: then follow it.
            var result: Result?
            domain.lock.withLock { scratch in
                guard domain.forward.load() == nil else { return }
                result = body(&scratch)
            }
            if let result { return result }
            domain = domain.representative
        }
    }

    /// Joins the domains of `child` and `parent`, called by `addChild` before the child is inserted in the
    /// parent's table. A node with no domain yet (never read, never a parent) takes the other's; otherwise
    /// the representative of lower rank forwards to the other (union by rank), so that the chains a read
    /// follows stay short (O(log n) after n merges) however a tree is built. Takes one domain lock at a time,
    /// and no node lock.
    static func merge(_ child: ProgressNode, into parent: ProgressNode) {
        let childDomain: RefreshDomain
        let parentDomain: RefreshDomain
        if let existing = child.domainStorage.load() {
            childDomain = existing
            parentDomain = parent.domainStorage.storeIfNil(existing)
        } else {
            parentDomain = parent.domain
            childDomain = child.domainStorage.storeIfNil(parentDomain)
        }
        if childDomain !== parentDomain { union(childDomain, parentDomain) }
    }

    private static func union(_ first: RefreshDomain, _ second: RefreshDomain) {
        while true {
            var source = first.representative
            var destination = second.representative
            if source === destination { return }
            let sourceRank = source.rank.load(ordering: .relaxed)
            let destinationRank = destination.rank.load(ordering: .relaxed)
            if sourceRank > destinationRank { swap(&source, &destination) }
            // Under the source's lock: no refresh is running in it, and the next one follows the forward.
            let merged = source.lock.withLock { _ -> Bool in
                guard source.forward.load() == nil else { return false }
                _ = source.forward.storeIfNil(destination)
                return true
            }
            if merged {
                // The rank is only a hint for keeping chains short; a lost increment costs no correctness.
                if sourceRank == destinationRank { destination.rank.add(1, ordering: .relaxed) }
                return
            }
        }
    }
}

extension ProgressNode {
    /// This node's domain, created on first use.
    var domain: RefreshDomain {
        domainStorage.load() ?? domainStorage.storeIfNil(RefreshDomain())
    }
}

/// The bits of `ProgressNode.refreshState`.
enum RefreshState {
    /// This node's progress, or something below it, may have changed since the last refresh.
    static let dirty: UInt8 = 1
    /// A refresh, under the domain lock, has cleared `dirty` and not yet stored the new `cachedFraction`.
    static let refreshing: UInt8 = 2
}
