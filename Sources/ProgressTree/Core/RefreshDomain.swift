import ProgressTreePlatform
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
@usableFromInline
final class RefreshDomain: Sendable {
    let lock = Lock<RefreshScratch>(RefreshScratch())
    /// The domain this one was merged into; set once, under `lock`.
    @usableFromInline let forward = OnceReference<RefreshDomain>()
    /// An upper bound of the length of the forward chains that end here (union by rank).
    private let rank = Atomic<Int>(0)
    /// The thread that last read a node of this tree, if no update refreshed a path since (0 otherwise; see
    /// `ProgressNode.refreshPathOnUpdate`): the hint that decides whether the next update that finds its
    /// node clean refreshes the path at once (its own thread reads between updates, so the work lands on
    /// that thread either way) or only marks it (nobody read since, or another thread reads: an observer's
    /// queue, a UI polling a worker's tree, which then does the work). Set in the representative. A hint
    /// only: either choice is correct.
    @usableFromInline let lastReader = Atomic<UInt>(0)

    /// The domain this one forwards to, following every forward; itself when it was never merged.
    var representative: RefreshDomain {
        var domain = self
        while let next = domain.forward.load() { domain = next }
        return domain
    }

    /// Stores the calling thread as `domain`'s last reader: out of line, off the clean read's inlined path.
    @usableFromInline @inline(never)
    static func recordReader(in domain: RefreshDomain) {
        domain.lastReader.store(CurrentThread.identifier, ordering: .relaxed)
    }

    /// Whether this domain forwards to another one (it was merged).
    var isForwarded: Bool { forward.address.load(ordering: .acquiring) != 0 }

    /// The domain this one forwards to directly, if it was merged (for tests).
    var forwardTarget: RefreshDomain? { forward.load() }

    /// Runs `body` under the lock of this domain's representative, with its scratch buffers (see
    /// `UnownedDomain.withRepresentativeLock(_:)`).
    func withRepresentativeLock<Result>(_ body: (inout RefreshScratch) -> Result) -> Result {
        UnownedDomain(self).withRepresentativeLock(body)
    }

    // MARK: Walks up the tree

    // An update walks up through its ancestors without locks, following `ProgressNode.parentAddress`, which
    // holds no reference, and so does a value set of a custom property under the domain lock. A node going
    // away therefore clears that pointer in each of its children and then waits for every walk that may have
    // read it before (`waitForWalks`). A walk waits for nothing but a node lock (an observed node's, to
    // collect its observers; each ancestor's, for a value set), and no waiter holds a node lock (nor does
    // any code that takes the domain lock after one), so the wait is short. Walks register in one of two counters, chosen by the parity of `walkEpoch`; a waiter moves
    // the epoch on and waits for the old counter to drain, so walks that start meanwhile (and can no longer
    // reach the node) never make it wait longer.

    private let walkEpoch = Atomic<UInt64>(0)
    private let evenWalks = Atomic<Int>(0)
    private let oddWalks = Atomic<Int>(0)
    /// Serializes waiters, so that each one's epoch move and drain are one step.
    private let waiters = Lock<Void>(())
    /// The last stored property: every update that refreshes its path and every read that refreshes takes
    /// `lock` and moves the walk counters, and whatever malloc places after this domain belongs to no tree
    /// or to another (see `CacheLinePadding`).
    let trailingPadding = CacheLinePadding()

    func addWalk(_ parity: UInt64, _ delta: Int) {
        if parity == 0 {
            evenWalks.add(delta, ordering: .sequentiallyConsistent)
        } else {
            oddWalks.add(delta, ordering: .sequentiallyConsistent)
        }
    }

    private func walkCount(_ parity: UInt64) -> Int {
        parity == 0
            ? evenWalks.load(ordering: .sequentiallyConsistent) : oddWalks.load(ordering: .sequentiallyConsistent)
    }

    /// A walk registered in a domain; `exit()` ends it (once). Holds the domain unretained: the walker
    /// holds a node of the tree, which holds the chain of domains up to this one.
    struct Walk {
        let domain: UnownedDomain
        let parity: UInt64

        func exit() { domain.endWalk(parity: parity) }
    }

    /// Registers a walk up from a node of this domain's tree, in its representative (where a node going
    /// away waits). While the walk is registered, every parent reached through `parentAddress` stays
    /// allocated. No user code and no release that could run a `deinit` may happen before `exit()`.
    func enterWalk() -> Walk { UnownedDomain(self).enterWalk() }

    /// Registers a walk in this domain if it is still the representative; returns its parity, or `nil` when
    /// the caller must look for the representative again.
    func registerWalk() -> UInt64? {
        let epoch = walkEpoch.load(ordering: .sequentiallyConsistent)
        addWalk(epoch & 1, 1)
        // Registered in the current epoch of a domain still representative: any waiter from here on waits for
        // this walk, and any merge forwards only after waiting for it.
        if walkEpoch.load(ordering: .sequentiallyConsistent) == epoch, !isForwarded { return epoch & 1 }
        addWalk(epoch & 1, -1)
        return nil
    }

    /// Waits until every walk registered before this call in this domain or any domain it forwards to has
    /// ended. A walk registers in the representative of its time, which may have been merged into another
    /// domain since: waiting only in today's representative would miss it. Chains are O(log n) long.
    /// Must not be called from a walk.
    func waitForWalksAlongForwards() {
        var domain = self
        while true {
            domain.waitForWalks()
            guard let next = domain.forward.load() else { return }
            domain = next
        }
    }

    /// Waits until every walk registered before this call has ended. Must not be called from a walk.
    func waitForWalks() {
        waiters.withLock { _ in
            let epoch = walkEpoch.add(1, ordering: .sequentiallyConsistent).oldValue
            while walkCount(epoch & 1) != 0 { CurrentThread.yield() }
        }
    }

    /// Joins the domains of `child` and `parent`, called by `addChild` before the child is inserted in the
    /// parent's table. A node with no domain yet (never read, never a parent) takes the other's; otherwise
    /// the representative of lower rank forwards to the other (union by rank), so that the chains a read
    /// follows stay short (O(log n) after n merges) however a tree is built. Takes one domain lock at a time,
    /// and no node lock.
    static func merge(_ child: ProgressNode, into parent: ProgressNode) {
        let parentDomain: RefreshDomain
        if parent.parentAddress.load(ordering: .sequentiallyConsistent) == 0,
            let existing = child.domainAndPart.loadDomain()
        {
            // A parent with no parent of its own and no domain yet takes the child's.
            parentDomain = parent.domainAndPart.storeDomainIfNone(existing)
        } else {
            // Otherwise its own, or its parent's (a fresh child takes it now).
            parentDomain = parent.domain
        }
        let childDomain = child.domainAndPart.storeDomainIfNone(parentDomain)
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
                // Walks registered in the source before the forward end before the child is attached, so
                // no walk registered there crosses into the destination's tree (where waiters look).
                source.waitForWalks()
                return
            }
        }
    }
}

extension ProgressNode {
    /// This node's domain, adopted or created on first use (`adoptDomain`). Not under this node's lock.
    var domain: RefreshDomain {
        domainAndPart.loadDomain() ?? adoptDomain()
    }

    /// This node's domain, adopted or created on first use, without a reference count: valid while this
    /// node is alive. Not under this node's lock.
    @inline(__always)
    var unretainedDomain: UnownedDomain {
        if let domain = domainAndPart.domain { return domain }
        return UnownedDomain(adoptDomain())
    }

    /// Gives this node its domain: its parent's while attached, a new one otherwise. Only a fresh child
    /// (created attached) comes here attached; its parent got its domain before the child was pushed
    /// (`attachFreshChild`). Under this node's lock, where the parent pointer is cleared before a parent
    /// goes away (`orphan`), so a parent found here is allocated and holds its domain.
    ///
    /// Why a node may go without a domain until now: nothing has refreshed it, walked up from it or locked
    /// its tree on its behalf. A node that had a child, or was added with `addChild`, or was queued in its
    /// parent or recorded in its sums (`shared`), has one: each of those needs it first. So two refreshes of
    /// one node never run under two domains, which is what a domain is for.
    @inline(never)
    func adoptDomain() -> RefreshDomain {
        state.withLock { _ -> RefreshDomain in
            if let domain = domainAndPart.loadDomain() { return domain }
            if let parent = UnownedNode(address: parentAddress.load(ordering: .sequentiallyConsistent)) {
                let parentDomain = parent.domain
                assert(parentDomain != nil, "a parent gets its domain before its first fresh child (attachFreshChild)")
                if let parentDomain { return domainAndPart.storeDomainIfNone(parentDomain.domain) }
            }
            return domainAndPart.storeDomainIfNone(RefreshDomain())
        }
    }
}

/// The buffers of a refresh, kept in the domain lock between reads so that they keep their capacity.
/// Empty between reads. (No list of the nodes still to visit: each frame follows its drained queue.)
///
/// Only the domain lock lends one (`RefreshDomain.lock`), so an `inout RefreshScratch` parameter is the proof
/// that a function runs under the domain lock: the functions that read or write what the lock owns (the
/// sums, the summary tables) ask for it.
struct RefreshScratch: ~Copyable {
    /// The nodes being refreshed, root first.
    var frames: [RefreshFrame] = []
    /// Retired children the refresh drained, and members a start of the summaries listed, released after
    /// the domain lock.
    var released: [ProgressNode] = []
    /// How many contributions to summaries the reads of this tree computed (for tests: a read is
    /// O(changes)).
    var computedSummaries = 0
    #if PROGRESSTREE_INTERNAL_CHECKS
    /// The address of the domain whose lock lends this scratch now (set at each lending, `UnownedDomain`),
    /// which the checks of the sums compare with their tree's representative.
    var lender: UInt = 0
    #endif

    fileprivate init() {}
}
