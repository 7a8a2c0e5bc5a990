import Synchronization
import ProgressTreePlatform

/// A unit of work that reports how far along it is, and composes with other units into a tree.
///
/// A node counts its own work in units of its choosing (`totalUnitCount`, `completedUnitCount`). A parent
/// gives each child a share of its own units (the child's *pending unit count*) and reports, in
/// `fractionCompleted`, its own units plus each unfinished child's share weighted by how far that child is:
///
/// ```swift
/// let photo = ProgressNode(totalUnitCount: 10)
/// let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
/// let filter = ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 1)
/// download.completedUnitCount = 1_000_000   // photo.fractionCompleted == 0.45
/// download.completedUnitCount = 2_000_000   // download finished: photo.completedUnitCount == 9
/// filter.advance()                          // photo.isFinished == true
/// ```
///
/// The names and semantics follow Foundation's `Progress` wherever it is right, so that migrating is a
/// rename; see `Docs/Migrating.md` for the deliberate differences.
///
/// ## Thread safety
/// Every member may be called from any thread or task at any time. Updates (`advance(by:)`, setting the
/// counts) are atomic operations and take no lock. Only the first update after a read walks up, marking
/// the path to the first ancestor already marked with an atomic OR and a push onto the parent's lock-free
/// queue per level (an observed node's lock is taken to collect its observers); when the tree was read
/// since the last such update, that update instead brings its own path up to date under the tree's
/// refresh lock, if the lock is free (an update never waits for a read). A read of `fractionCompleted` is
/// two atomic loads when nothing changed; otherwise it takes the tree's refresh lock and brings the cached
/// sums of the changed part of the tree up to date, without node locks. Handlers and observers are always
/// called outside the library's locks.
///
/// ## Lock order
/// Each node has one lock (`Lock`: a `Synchronization.Mutex` that ThreadSanitizer can see) guarding its
/// structure (parent link, children, handlers, metadata), never its counts. Code in this library never
/// holds two node locks at once. Readers that bring cached sums up to date take the refresh lock of the
/// tree's `RefreshDomain` (one per tree, never shared with an unrelated tree) and no node lock, except
/// one at a time inside it for a file summary or a child that failed. So the only nesting is: domain
/// lock, then one node lock. User code never runs under either. That includes
/// `deinit`s: a value that may hold the last reference to a user object or a node (a replaced handler, a
/// child taken by a read that finished meanwhile) must be moved out of the critical section and released after it.
public final class ProgressNode: Sendable {
    // MARK: Hot-path state (atomics, no lock)
    //
    // The order is the layout (102 bytes with the header, so that malloc, which adds 8 and rounds to 16,
    // gives a node 112; 105 would take 128): the counts and `flags`, which `advance(by:)` reads, first, with
    // `contributorIndex` beside `flags`; the words, those that an update and a read of the tree touch
    // (through `domainAndPart`) before the two links; then `state` (13 bytes, aligned to 4) and
    // `controlFlags` in the byte after it (see "What a node holds" in Docs/Architecture.md; `NodeSizeTests`
    // pins it). The touched words end at byte 72, 40 bytes before the next malloc block begins and 56
    // before the next object's first field: whatever the alignment, they share no cache line with the next
    // node's (see `CacheLinePadding`).

    /// The node's own completed units plus the pending units of children that finished.
    @usableFromInline let completedStorage: Atomic<Int64>
    @usableFromInline let totalStorage: Atomic<Int64>
    /// `NodeFlags` bits.
    @usableFromInline let flags: Atomic<UInt32>
    /// This node's index among its parent's contributors (-1: none), where the parent's `ChildSums` keeps
    /// what it adds. Owned by the tree's domain lock: read and written only through `contributorIndex(_:)`
    /// and `setContributorIndex(_:_:)`, which take the lock's `RefreshScratch`.
    private let contributorIndex = Atomic<Int32>(-1)
    /// The bit pattern of the fraction computed by the last refresh of this node. When neither `dirty` nor
    /// `refreshing` is set, it is the node's fraction: a clean read is that load and this one, no lock.
    @usableFromInline let cachedFraction = Atomic<UInt64>(0)
    /// The parent's address while attached (0 otherwise), for the walk up an update makes without locks.
    /// Safe to follow only inside a walk of the tree's domain (`RefreshDomain.enterWalk`): a parent going
    /// away clears it in each of its children and then waits for the walks in progress.
    let parentAddress = Atomic<UInt>(0)
    /// The share of the parent's units this node stands for, while attached.
    let pendingInParent = Atomic<Int64>(0)
    /// The refresh domain of this node's tree (see `RefreshDomain`), shared by every node of the tree: set
    /// when the node first gets a child, is first read, or is attached. Then, from before its first child is
    /// attached, what only a node with children needs, in one object that also holds the domain (`childPart`,
    /// a `ChildSums`): the weighted sum of the attached children's progress, kept by refreshes under the
    /// domain lock, and the tops of its dirty queue and of its stack of fresh children. One word for both
    /// (`DomainAndParentPart`): a leaf pays 8 bytes for all of it.
    @usableFromInline let domainAndPart = DomainAndParentPart()
    /// The next node in the parent's dirty queue (`ChildSums.queueHead`), while `queued`.
    let queueNext = Atomic<UInt>(0)
    /// Two values in one word, never needed at once: while this node is on its parent's stack of fresh
    /// children (`ChildSums.freshChildren`), the next node of that stack (`freshNext`, set before the push);
    /// otherwise its slot in its parent's `ChildTable` (`slotInParent`, -1 when it has none), written only
    /// under the parent's lock. A node is pushed onto a fresh stack once, in its initializer, before it can
    /// have a slot, and gets its first slot in the settle that has taken it off the stack, after the settle's
    /// last read of its link (a node that pops itself off the stack clears the word to -1 once it is off).
    let freshNextOrSlot = Atomic<UInt>(UInt(bitPattern: -1))

    // MARK: Structure (guarded by the node's lock)

    let state: Lock<NodeState>

    /// Cancellation, pausing and failure bits, readable without the lock (see `ControlFlags`).
    let controlFlags = Atomic<UInt8>(0)

    // MARK: Creating nodes

    /// Creates a node with no parent and no implicit attachment.
    init(detachedTotalUnitCount total: Int64, userInfo: [UserInfoKey: any Sendable]? = nil) {
        completedStorage = Atomic(0)
        totalStorage = Atomic(total)
        flags = Atomic(Metadata.describesFiles(userInfo) ? NodeFlags.filesFromTheStart : 0)
        // Built in place: a `NodeState` made first and then handed to the lock is copied and destroyed,
        // which costs more than the rest of creating a node.
        state = Lock(NodeState(attached: false, userInfo: userInfo))
    }

    /// Creates a node attached to `parent`, as `addChild` would leave it, and pushes it onto the parent's
    /// fresh children (`attachFreshChild(_:withPendingUnitCount:)`). (`parent` is borrowed, here and in the
    /// initializers that lead here: each retain and release of a parent is an atomic operation on its
    /// reference count.) A negative `pendingUnitCount` stops the program with a message that names `call`.
    private init(
        total: Int64, userInfo: [UserInfoKey: any Sendable]? = nil, freshChildOf parent: borrowing ProgressNode,
        pendingUnitCount: Int64, call: StaticString = "addChild(_:withPendingUnitCount:)",
        prepare: (ProgressNode) -> Void = { _ in }
    ) {
        ProgressNode.checkPendingUnitCount(pendingUnitCount, in: call)
        completedStorage = Atomic(0)
        totalStorage = Atomic(total)
        // Clean, and not queued: a node with no progress adds nothing to its parent, so there is nothing to
        // refresh until its first update. Attached from the start: nobody can update the node before the
        // parent's table publishes it.
        flags = Atomic(NodeFlags.attached | (Metadata.describesFiles(userInfo) ? NodeFlags.filesFromTheStart : 0))
        state = Lock(NodeState(attached: true, userInfo: userInfo))
        pendingInParent.store(pendingUnitCount, ordering: .relaxed)
        // No domain yet: the node takes its parent's when it first needs one (`adoptDomain`). A child that
        // finishes without ever being read or partly updated, the usual short-lived one, never does.
        parentAddress.store(UnownedNode(parent).address, ordering: .releasing)
        // Before the push that publishes the node: nobody else can reach it yet.
        prepare(self)
        // Here rather than in the convenience initializer, where `self` would be retained around the call.
        parent.attachFreshChild(UnownedNode(self), withPendingUnitCount: pendingUnitCount)
        // Files from the start: the parent's summaries count them at the next read (Summaries/).
        if userInfo != nil && flags.load(ordering: .relaxed) & NodeFlags.summarized != 0 { markChanged() }
    }

    /// Stops the program if `pendingUnitCount` is negative (a share of a parent cannot be), with a message
    /// that names `call`, the call the user made.
    @inline(__always)
    static func checkPendingUnitCount(_ pendingUnitCount: Int64, in call: StaticString) {
        precondition(
            pendingUnitCount >= 0, "\(call): the pending unit count must not be negative (got \(pendingUnitCount))")
    }

    /// Creates a node attached to `parent`, as `init(totalUnitCount:parent:pendingUnitCount:)` does, after
    /// running `prepare` on it while nobody else can reach it: a mount installs a mirrored node's command
    /// handlers there, so that no cancel or pause made on the node can come before them.
    package convenience init(
        totalUnitCount: Int64, parent: borrowing ProgressNode, pendingUnitCount: Int64,
        prepare: (ProgressNode) -> Void
    ) {
        self.init(total: totalUnitCount, freshChildOf: parent, pendingUnitCount: pendingUnitCount, prepare: prepare)
    }

    /// Creates a node for `totalUnitCount` units and, if a node is current on this thread or task with an
    /// unclaimed pending count, attaches to it with that count.
    ///
    /// Only the first node created in a `becomeCurrent(withPendingUnitCount:)` or
    /// `withCurrent(pendingUnitCount:_:)` scope attaches; later ones stay roots (as in Foundation).
    ///
    /// - Complexity: O(1).
    public convenience init(totalUnitCount: Int64) {
        if let scope = ImplicitScope.innermost(), scope.claim() {
            self.init(total: totalUnitCount, freshChildOf: scope.node, pendingUnitCount: scope.pendingUnitCount)
        } else {
            self.init(detachedTotalUnitCount: totalUnitCount)
        }
    }

    /// Foundation's `Progress()` (`NSObject`'s `init()`) has no counterpart: a node is made with a total or
    /// a parent. This declaration only turns a ported `ProgressNode()` into an error that says what to
    /// write instead.
    @available(
        *, unavailable,
        message:
            "ProgressNode has no init(): write ProgressNode.discreteProgress(totalUnitCount: 0) (never attaches to the current node) or ProgressNode(totalUnitCount: 0) (attaches as Progress(totalUnitCount:) does), then set totalUnitCount"
    )
    public convenience init() {
        fatalError("unavailable")
    }

    /// Creates a node with counts of 0 of 0 and, when `parent` is given, attaches it to `parent` with the
    /// pending count of `parent`'s current scope (Foundation's semantics).
    ///
    /// - Parameters:
    ///   - parent: `nil` never attaches. Otherwise `parent` must be current on this thread or task (inside
    ///     `becomeCurrent(withPendingUnitCount:)` or `withCurrent(pendingUnitCount:_:)`); if its pending
    ///     count was already claimed by an earlier node, this node is not attached.
    ///   - userInfo: initial metadata, as with `setUserInfoObject(_:forKey:)`.
    /// - Precondition: `parent` is `nil` or the current node. To attach to a node that is not current, use
    ///   `init(totalUnitCount:parent:pendingUnitCount:)` or `addChild(_:withPendingUnitCount:)`.
    public convenience init(parent: ProgressNode?, userInfo: [UserInfoKey: any Sendable]? = nil) {
        // No parent: no scope, and the node is a root. Otherwise the innermost scope must be the parent's.
        let scope = parent == nil ? nil : ImplicitScope.innermost()
        guard scope?.node === parent else {
            preconditionFailure(
                "ProgressNode(parent:userInfo:): the parent must be the current node (call it inside "
                    + "parent.becomeCurrent(withPendingUnitCount:) or parent.withCurrent(pendingUnitCount:)); "
                    + "to attach to any node use ProgressNode(totalUnitCount:parent:pendingUnitCount:)")
        }
        if let scope, scope.claim() {
            self.init(total: 0, userInfo: userInfo, freshChildOf: scope.node, pendingUnitCount: scope.pendingUnitCount)
        } else {
            self.init(detachedTotalUnitCount: 0, userInfo: userInfo)
        }
    }

    /// Creates a node for `totalUnitCount` units that never attaches implicitly, even when a node is
    /// current. Add it to a parent explicitly with `addChild(_:withPendingUnitCount:)`.
    public static func discreteProgress(totalUnitCount: Int64) -> ProgressNode {
        ProgressNode(detachedTotalUnitCount: totalUnitCount)
    }

    /// Creates a node for `totalUnitCount` units attached to `parent`, standing for `pendingUnitCount` of
    /// the parent's units. Equivalent to creating a discrete node and calling
    /// `parent.addChild(_:withPendingUnitCount:)`, and cheaper: a node nobody has seen yet can have no
    /// parent and be nobody's ancestor, so it is attached without the checks `addChild` makes.
    ///
    /// - Precondition: `pendingUnitCount` is not negative.
    /// - Complexity: O(1): no lock, one compare-and-swap on `parent` (it joins the parent's fresh children).
    public convenience init(totalUnitCount: Int64, parent: borrowing ProgressNode, pendingUnitCount: Int64) {
        self.init(
            total: totalUnitCount, freshChildOf: parent, pendingUnitCount: pendingUnitCount,
            call: "ProgressNode(totalUnitCount:parent:pendingUnitCount:)")
    }

    /// Releases the attached children one after the other rather than one inside the other, so that
    /// releasing the root of a deep unfinished tree needs no deep stack (see `IterativeRelease`).
    deinit {
        // Nothing to do for a node that never had a child and is not observed, the usual leaf. (Nobody else
        // can reach a node in its `deinit`, and its last release ordered every earlier store before this load.)
        let flags = flags.load(ordering: .relaxed)
        if flags & NodeFlags.observed != 0 { tellObserversTheNodeWentAway() }
        guard flags & NodeFlags.hasHadChildren != 0 else { return }
        var children = state.withLock { state in
            var nodes = state.children.removeAllNodes()
            takeFreshChildren(appendingTo: &nodes)
            return nodes
        }
        // Each child may still point here: clear the pointers (under each child's lock, where a finish
        // retains the parent), then wait for the walks that may have read one before it was cleared (see
        // `parentAddress`). No walk starts here afterwards.
        for child in children { child.orphan() }
        if let domain = domainAndPart.loadDomain() { domain.waitForWalksAlongForwards() }
        // Children that finished into this node and wait in its queue hold a reference handed to the queue.
        var entry = domainAndPart.takeQueue()
        while let node = UnownedNode(address: entry) {
            entry = node.nextInQueue
            if node.flags & NodeFlags.retired != 0 { children.append(node.takeRetained()) }
        }
        if !children.isEmpty { IterativeRelease.release(&children) }
    }

    // MARK: Counts

    /// The number of units of work this node stands for.
    ///
    /// Setting it re-weights at once: a parent's children keep their pending counts, now measured against
    /// the new total. A negative total makes the node indeterminate. Changing the total can finish the node
    /// (for example lowering it to the completed count).
    ///
    /// - Complexity: O(1) amortized: an atomic store. The first update after a read also walks up, without
    ///   a lock, marking the path to the first ancestor already marked, or refreshes its own path under the
    ///   tree's refresh lock when that lock is free; finishing an attached node also credits its parent
    ///   (an atomic add) and takes it out of the parent's children.
    public var totalUnitCount: Int64 {
        get { totalStorage.load(ordering: .sequentiallyConsistent) }
        set {
            totalStorage.store(newValue, ordering: .sequentiallyConsistent)
            countsDidChange(completed: completedStorage.load(ordering: .sequentiallyConsistent), total: newValue)
        }
    }

    /// The number of units completed: the node's own units plus the pending counts of children that have
    /// finished. Partial progress of unfinished children shows in `fractionCompleted`, not here.
    ///
    /// Raw values are kept as set (negative values mean indeterminate, values above the total are kept and
    /// clamped only in `fractionCompleted`).
    ///
    /// > Important: `completedUnitCount += 1` is a read followed by a write, as in Foundation: two threads
    /// > doing it at once can lose an increment. Use `advance(by:)` from several threads.
    ///
    /// - Complexity: O(1) amortized: an atomic store, allocation-free between two reads. The first update
    ///   after a read also walks up, without a lock, marking the path to the first ancestor already marked
    ///   (queueing each node in its parent's lock-free queue), or refreshes its own path under the tree's
    ///   refresh lock when that lock is free; finishing an attached node also credits its parent (an atomic
    ///   add) and takes it out of the parent's children.
    public var completedUnitCount: Int64 {
        get { completedStorage.load(ordering: .sequentiallyConsistent) }
        set {
            completedStorage.store(newValue, ordering: .sequentiallyConsistent)
            countsDidChange(completed: newValue, total: totalStorage.load(ordering: .sequentiallyConsistent))
        }
    }

    /// Adds `units` to `completedUnitCount` atomically: N threads calling `advance(by: 1)` M times each
    /// add exactly N·M. The sum saturates at `Int64.max` and `Int64.min` instead of overflowing (an add
    /// that passes `Int64.max` while other threads update the same node may be read, for that instant, as a
    /// negative, indeterminate count before it saturates).
    ///
    /// Negative units take work back: they are not an error. A count taken below zero makes the node
    /// indeterminate, by Foundation's rule for a negative `completedUnitCount` (`advance(by: -3)` on a
    /// 10-unit node at 0: -3 of 10, indeterminate, fraction 0, shown as "-3 of 10"), until it is 0 or more
    /// again. A negative *pending* count is different: a share of a parent cannot be negative, so
    /// `addChild`, `ProgressNode(totalUnitCount:parent:pendingUnitCount:)` and the implicit composition
    /// calls stop the program with a message that names the call.
    ///
    /// - Complexity: O(1) amortized: one atomic add and, while nobody reads the tree, one atomic load, with
    ///   no allocation. Only the first update after a read walks up, without a lock: it marks the path to
    ///   the root as changed (an atomic OR per level, queueing each node in its parent's lock-free queue),
    ///   stopping at the first ancestor already marked. When the tree was read since, that update instead
    ///   refreshes its own path under the tree's refresh lock, if the lock is free (it never waits for it).
    @inlinable @inline(__always)
    public func advance(by units: Int64 = 1) {
        let completed = addToCompleted(units)
        let total = totalStorage.load(ordering: .sequentiallyConsistent)
        // The common case, inlined into the caller: the node did not finish and its path is marked already
        // (nobody read the tree since the last update). Everything else is `countsDidChange`'s.
        if _fastPath(
            !FractionMath.isFinished(completed: completed, total: total)
                && flags.load(ordering: .sequentiallyConsistent) & NodeFlags.dirty != 0)
        {
            return
        }
        countsDidChangeOutOfLine(completed: completed, total: total)
    }

    /// `countsDidChange` as a call, for the inlined `advance(by:)`: the caller's code stays small.
    @usableFromInline @inline(never)
    func countsDidChangeOutOfLine(completed: Int64, total: Int64) {
        countsDidChange(completed: completed, total: total)
    }

    /// Atomically adds `units` to the completed count, saturating, and returns the new count.
    ///
    /// Units of at least 0 (every `advance(by:)` of a reporter, every credit) take one `lock xadd`, the
    /// cost of a bare atomic add: a compare-and-swap loop needs a load first, and on Intel processors that
    /// load waits for the previous update's locked instruction (1.8× an atomic add there, against 1.2×).
    /// The add wraps only from within `units` of `Int64.max`; the updater that wrapped it sees its new
    /// count below its old one and saturates it (`saturateAfterOverflow`). Negative units saturate at
    /// `Int64.min` in a compare-and-swap loop (`addNegative`).
    @inlinable @inline(__always)
    func addToCompleted(_ units: Int64) -> Int64 {
        guard _fastPath(units >= 0) else { return addNegative(units) }
        let (old, new) = completedStorage.wrappingAdd(units, ordering: .sequentiallyConsistent)
        if _fastPath(new >= old) { return new }
        return saturateAfterOverflow()
    }

    /// After an add of units ≥ 0 wrapped past `Int64.max`: sets the count to `Int64.max` while it is still
    /// negative, and returns the count. Adds of units ≥ 0 keep a wrapped count negative (another 2⁶³ units
    /// would be needed to make it non-negative again), so a negative count here is the wrapped one, moved on
    /// by other updaters meanwhile, whose units saturate too. Until then the count reads negative: a reader
    /// or another updater of this node may see it for that instant as an indeterminate count; nothing
    /// finishes or credits on it. A count stored meanwhile by `completedUnitCount`'s setter stays if it is
    /// at least 0, and is taken as wrapped (and saturates) if negative: the one race between a store and an
    /// update whose order is not kept.
    @usableFromInline @inline(never)
    func saturateAfterOverflow() -> Int64 {
        var current = completedStorage.load(ordering: .sequentiallyConsistent)
        while current < 0 {
            let (exchanged, original) = completedStorage.compareExchange(
                expected: current, desired: .max, successOrdering: .sequentiallyConsistent,
                failureOrdering: .sequentiallyConsistent)
            if exchanged { return .max }
            current = original
        }
        return current
    }

    /// Adds negative `units`, saturating at `Int64.min`: a compare-and-swap loop (a wrapped negative add
    /// would read as a large count, which may finish the node).
    @usableFromInline @inline(never)
    func addNegative(_ units: Int64) -> Int64 {
        var current = completedStorage.load(ordering: .relaxed)
        while true {
            let next = current.addingSaturated(units)
            let (exchanged, original) = completedStorage.compareExchange(
                expected: current, desired: next,
                successOrdering: .sequentiallyConsistent, failureOrdering: .relaxed)
            if exchanged { return next }
            current = original
        }
    }

    /// How much of the work is done, from 0 to 1, including the partial progress of attached children.
    ///
    /// `(completedUnitCount + Σ pendingᵢ × fractionᵢ) / totalUnitCount` over the attached, unfinished
    /// children, clamped to `0...1`. Always finite: an indeterminate node reports 0 (and adds 0 to its
    /// parent), a finished node reports 1, overshoot is clamped.
    ///
    /// - Complexity: O(changed nodes below this one since the last read); O(1) when nothing changed.
    ///   Never proportional to the number of children.
    @inlinable
    public var fractionCompleted: Double {
        refresh()
    }

    /// `true` when progress cannot be measured: `totalUnitCount < 0`, `completedUnitCount < 0`, or both 0.
    /// An indeterminate node reports `fractionCompleted == 0`; it does not make its parent indeterminate.
    public var isIndeterminate: Bool {
        FractionMath.isIndeterminate(completed: completedUnitCount, total: totalUnitCount)
    }

    /// `true` when `completedUnitCount >= totalUnitCount > 0`, or `completedUnitCount > 0` with a total of 0,
    /// unless the node failed: a failed node never becomes finished, whatever its counts.
    public var isFinished: Bool {
        // Failure hook (ProgressNode+Failure.swift): finished and failed are exclusive final outcomes.
        !isFailed && FractionMath.isFinished(completed: completedUnitCount, total: totalUnitCount)
    }
}

extension ProgressNode {
    /// This node's index among its parent's contributors (-1: none); `scratch` is the domain lock's.
    @inline(__always)
    func contributorIndex(_ scratch: borrowing RefreshScratch) -> Int { Int(contributorIndex.load(ordering: .relaxed)) }

    /// Records `index` (-1: none) as this node's index among its parent's contributors.
    @inline(__always)
    func setContributorIndex(_ index: Int, _ scratch: borrowing RefreshScratch) {
        contributorIndex.store(Int32(truncatingIfNeeded: index), ordering: .relaxed)
    }
}
