import Synchronization
import ProgressTreePlatform

/// The weighted sum of a node's attached children's progress, in the node's units, as of the last refresh:
/// Σ pendingᵢ × fractionᵢ over the children a refresh has recorded (`ContributionBuffer`), and the columns of
/// the node's summaries of its children (the summary engine, Summaries/).
///
/// Owned by the tree's refresh domain: every method that reads or writes what the domain lock owns asks for
/// the lock's `RefreshScratch` (only the lock lends one), so code without the lock does not compile; the
/// atomics `creditSequence`, `publishedSum`, `queueHead` and `freshChildren` are read and written without
/// it. That is the proof behind `@unchecked Sendable`: the lock orders every other access, and `Lock` makes
/// that order visible to ThreadSanitizer. Updates never touch the sums: a child that finishes while a
/// refresh runs is *retired* into its parent's dirty queue instead, and the next refresh of the parent
/// removes its share (see `ProgressNode.finishAndCreditAncestors`).
///
/// It is also the part of a node that only a parent needs, so that a leaf (most nodes) pays nothing for it
/// beyond the word that holds its domain: the tops of the node's two intrusive stacks of children,
/// `queueHead` and `freshChildren`, atomics that children push onto without a lock, and the node's domain,
/// which the node's word holds no more once it holds this part (`DomainAndParentPart`). It is created
/// before the node's first child is attached (`ProgressNode.attachFreshChild`, `addChild`) and lives as
/// long as the node.
@usableFromInline
final class ChildSums: @unchecked Sendable {
    /// The node's refresh domain, which the node reaches through this part once it has the part (see
    /// `DomainAndParentPart`). A domain never changes (a merge forwards it to a representative instead).
    @usableFromInline let retainedDomain: RefreshDomain

    /// The domain, without a reference count: valid while this part is.
    @inlinable var domain: UnownedDomain {
        @inline(__always) get { UnownedDomain(retainedDomain) }
    }

    init(domain: RefreshDomain) {
        retainedDomain = domain
    }

    /// The node's children queued for the next refresh: the top of an intrusive stack linked by their
    /// `queueNext` (see ProgressNode+Propagation.swift).
    let queueHead = Atomic<UInt>(0)
    /// The node's children created attached to it (`init(totalUnitCount:parent:pendingUnitCount:)`) and not
    /// yet moved into its `ChildTable`: the top of an intrusive stack linked by their `freshNext` (the word
    /// `freshNextOrSlot`), which holds a reference to each (see ProgressNode+FreshChildren.swift).
    let freshChildren = Atomic<UInt>(0)

    /// Moved before and after a child's credit that races with a refresh, so that the refresh reads the
    /// credit and the child's removal together (see `ProgressNode.retire(_:crediting:failedShare:)`): the
    /// low 32 bits count the credits in progress (`beginCredit`), the high 32 bits the credits completed
    /// (`endCredit`). Settled when the low half is 0; two reads of equal values saw no credit begin or end
    /// between them, however many credits overlap. The one field updates touch, outside the domain lock:
    /// an atomic.
    let creditSequence = Atomic<UInt64>(0)

    /// Whether `sequence` (a value of `creditSequence`) has no credit in progress.
    static func isSettled(_ sequence: UInt64) -> Bool { sequence & 0xFFFF_FFFF == 0 }

    /// A credit begins: readers of the parent wait for it to end before they trust its count and sums.
    func beginCredit() { creditSequence.add(1, ordering: .sequentiallyConsistent) }

    /// A credit ends: one fewer in progress, one more completed, in one step.
    func endCredit() { creditSequence.add((1 << 32) - 1, ordering: .sequentiallyConsistent) }

    /// `total`, for readers outside the domain lock that only need a recent value (a failing node's share).
    let publishedSum = Atomic<UInt64>(0)

    /// What the domain lock owns, in one field. Without the dynamic exclusivity checks (a `swift_beginAccess`
    /// and its thread-local set per access, on every level a refresh records): proof: every access is in a
    /// method of this class that takes the lock's `RefreshScratch`, so accesses from two threads are ordered
    /// by that lock; and no two accesses overlap on one thread, because each method makes its accesses one
    /// after the other and calls nothing that reaches this part meanwhile (`record` and `memberEntry` touch
    /// only the child's atomics; a column step runs on a copy of `columns`, outside any access).
    @exclusivity(unchecked) private var owned = Owned()

    /// The last stored property: a refresh writes this part's sums on every read of a changed tree, and
    /// whatever malloc places after it belongs to no tree or to another (see `CacheLinePadding`).
    let trailingPadding = CacheLinePadding()

    /// What the domain lock owns: the contributions and their sum, the failed children's shares, the columns.
    private struct Owned: ~Copyable {
        var contributions = ContributionBuffer()
        /// Σ pendingᵢ × fractionᵢ over the children that failed, each fraction taken when that child failed:
        /// the share those children keep after they left. Only grows; never credited to `completedUnitCount`
        /// (failure is not done work).
        var failedUnits = 0.0
        /// The node's summaries of its children: one column a property, each a reference this part holds
        /// (retained when added, released in `deinit`; columns are only ever added). Empty until the node's
        /// summary is first read with children or a child first leaves it something.
        var columns: [ColumnReference] = []
        /// Whether the node's members are counted in `columns`: from the first read of its summary on
        /// (`startSummaries`). The one load a refresh's record makes for the summaries.
        var summariesStarted = false
        /// Whether a column changed (a member's contribution set, a member left) since this node was last
        /// recorded in its parent's summaries: the refresh's own mark, set and taken under the lock, where
        /// writers outside it use `NodeFlags.summaryChanged` (an atomic read-modify-write on each, two a
        /// level a value set's read passed through).
        var columnsChanged = false
    }

    deinit {
        for column in owned.columns { column.release() }
    }

    /// What the children add to the node's units: the live children's progress and the failed ones' shares.
    func total(_ scratch: borrowing RefreshScratch) -> Double { owned.contributions.sum + owned.failedUnits }

    /// Stops the process unless `scratch` is lent by the lock of this part's tree: a token proves that some
    /// domain lock is held, this checks it is the right one (PROGRESSTREE_INTERNAL_CHECKS).
    @inline(__always)
    private func check(_ scratch: borrowing RefreshScratch) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            scratch.lender == domain.representative.address,
            "ProgressTree internal check failed: a node's sums used under the lock of another tree")
        #endif
    }

    private func publish() {
        publishedSum.store((owned.contributions.sum + owned.failedUnits).bitPattern, ordering: .relaxed)
    }

    /// Keeps the share of a child that failed and left.
    func addFailedShare(_ share: Double, _ scratch: borrowing RefreshScratch) {
        guard share > 0 else { return }
        check(scratch)
        owned.failedUnits += share
        publish()
    }

    /// Notes that a column changed (`Owned.columnsChanged`).
    func noteColumnsChanged(_ scratch: borrowing RefreshScratch) { owned.columnsChanged = true }

    /// Whether a column changed since the last call, which clears the note.
    func takeColumnsChanged(_ scratch: borrowing RefreshScratch) -> Bool {
        defer { owned.columnsChanged = false }
        return owned.columnsChanged
    }

    /// The node's columns of its summaries.
    func columns(_ scratch: borrowing RefreshScratch) -> [ColumnReference] { owned.columns }
    /// How many columns there are: with `column(at:_:)`, a walk over them that copies no array (a retain and
    /// a release of its storage, locked instructions, on every level a record passes).
    func columnCount(_ scratch: borrowing RefreshScratch) -> Int { owned.columns.count }
    /// The column at `index` (`0..<columnCount`): a reference without a count, copied out of the array.
    func column(at index: Int, _ scratch: borrowing RefreshScratch) -> ColumnReference { owned.columns[index] }

    /// Adds `column`, whose reference this part takes over (released in `deinit`).
    func add(_ column: ColumnReference, _ scratch: borrowing RefreshScratch) {
        check(scratch)
        owned.columns.append(column)
    }

    /// Whether the node's members are counted in its columns (see `Owned.summariesStarted`).
    func summariesStarted(_ scratch: borrowing RefreshScratch) -> Bool { owned.summariesStarted }

    /// Starts counting the node's members in its columns (`startSummaries`).
    func setSummariesStarted(_ scratch: borrowing RefreshScratch) {
        check(scratch)
        owned.summariesStarted = true
    }

    /// `child`'s entry, claimed for it (with a contribution of 0) if it has none: a member of the node's
    /// summaries has one, so that its finish goes through `retire` (`claimShare`). `nil` when the child has
    /// no entry and finished or failed (`retired`): it left, or leaves, through `leaveSummaries`, and an
    /// entry given now would outlive it.
    func memberEntry(for child: ProgressNode, _ scratch: borrowing RefreshScratch) -> Int? {
        check(scratch)
        let index = child.contributorIndex(scratch)
        if index >= 0 { return index }
        guard child.flags.load(ordering: .sequentiallyConsistent) & NodeFlags.retired == 0, child.claimShare(scratch)
        else { return nil }
        let entry = owned.contributions.add(0)
        child.setContributorIndex(entry, scratch)
        return entry
    }

    /// Records `child`'s new contribution (`pendingInParent × fraction`).
    @inline(__always)
    func record(_ child: ProgressNode, fraction: Double, _ scratch: borrowing RefreshScratch) {
        check(scratch)
        let contribution = Double(child.pendingInParent.load(ordering: .relaxed)) * fraction
        let index = child.contributorIndex(scratch)
        if index >= 0 {
            if owned.contributions.set(index, to: contribution) { publish() }
            return
        }
        // Nothing to record, and nothing to remove later; and a child that finished and was credited without a
        // share (never `shared`) stays out.
        guard contribution != 0, child.claimShare(scratch) else { return }
        child.setContributorIndex(owned.contributions.add(contribution), scratch)
        publish()
    }

    /// Removes `child`'s contribution (a child that finished and was credited instead, or left).
    func remove(_ child: ProgressNode, _ scratch: borrowing RefreshScratch) {
        check(scratch)
        let index = child.contributorIndex(scratch)
        guard index >= 0 else { return }
        child.setContributorIndex(-1, scratch)
        owned.contributions.remove(at: index)
        publish()
        // No member left: no contribution to keep in the summaries either.
        if owned.contributions.contributorCount == 0 && !owned.columns.isEmpty { forEachColumn(.removeLeaves, scratch) }
    }
}

extension ProgressNode {
    /// Sets `shared` unless this node is `retired`; returns whether it is `shared` now. Under the domain
    /// lock (`scratch`), before a refresh records this node's first contribution to its parent: of this and
    /// a finish that credits the node without the domain lock (it requires `shared` clear and sets `retired`,
    /// in one compare-and-exchange), exactly one happens, so a parent never counts a child's share and its
    /// credit together.
    @inline(__always)
    func claimShare(_ scratch: borrowing RefreshScratch) -> Bool {
        let old = updateFlags { $0 & (NodeFlags.shared | NodeFlags.retired) == 0 ? $0 | NodeFlags.shared : nil }
        return old & NodeFlags.shared != 0 || old & NodeFlags.retired == 0
    }

    /// Records `child`'s new fraction in this node's sums (created on first use), without retaining them,
    /// and, once this node's summaries have started, its summaries when they may have changed (Summaries/).
    @inline(__always)
    func recordInSums(_ child: ProgressNode, fraction: Double, _ scratch: inout RefreshScratch) {
        // `hasHadChildren`: a child with columns, whose note of a change `recordSummary` reads.
        let changes = NodeFlags.describesFiles | NodeFlags.summaryChanged | NodeFlags.hasHadChildren
        if domainAndPart.record(child, fraction: fraction, scratch),
            child.flags.load(ordering: .sequentiallyConsistent) & changes != 0
        {
            recordSummary(of: child, &scratch)
        }
    }
}

#if PROGRESSTREE_INTERNAL_CHECKS
extension ChildSums {
    /// These sums as they stand, for `ProgressNode.invariantViolations()` (ProgressNode+Invariants.swift).
    struct CheckedState {
        /// Each entry in index order: its contribution, or `nil` for a hole.
        let contributions: [Double?]
        /// The invariants the sums break (`ContributionBuffer.violations()`, and the failed units').
        let violations: [String]
    }

    func checkedState(_ scratch: borrowing RefreshScratch) -> CheckedState {
        let failed = owned.failedUnits >= 0 ? [] : ["its failed children's units are \(owned.failedUnits)"]
        return CheckedState(
            contributions: owned.contributions.entries, violations: owned.contributions.violations() + failed)
    }
}
#endif
