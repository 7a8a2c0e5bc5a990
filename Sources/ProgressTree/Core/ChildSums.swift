import Synchronization
import ProgressTreePlatform

/// The weighted sum of a node's attached children's progress, in the node's units, as of the last refresh:
/// Σ pendingᵢ × fractionᵢ over the children a refresh has recorded.
///
/// Owned by the tree's refresh domain: only code holding the domain lock (`RefreshDomain`) reads or writes
/// it (but for the atomics `creditSequence`, `publishedSum`, `queueHead` and `freshChildren`), and the children's `contributorIndex`. That is the proof behind
/// `@unchecked Sendable`: the lock orders every access, and `Lock` makes that order visible to
/// ThreadSanitizer. Updates never touch it: a child that finishes while a refresh runs is *retired* into
/// its parent's dirty queue instead, and the next refresh of the parent removes its share (see
/// `ProgressNode.finishAndCreditAncestors`).
///
/// The sum is exact where it matters: a node with at most 16 entries (contributions and the holes between
/// them), the usual case, is summed from scratch at every change (a handful of additions). A wider node is
/// adjusted by the difference and summed again from scratch when that could have lost more than the last
/// bits: when the sum fell below 2⁻²⁰ of the largest contribution it held since it was last summed (a huge
/// child that came and went would otherwise take a small sibling's progress with it), or after more
/// incremental steps than entries plus 1,024 (drift). Each case needs as many changes to happen again, so
/// updates stay O(1) amortized.
///
/// It is also the part of a node that only a parent needs, so that a leaf (most nodes) pays nothing for it
/// beyond the word that holds its domain: the tops of the node's two intrusive stacks of children,
/// `queueHead` and `freshChildren`, atomics that children push onto without a lock, and the node's domain,
/// which the node's word holds no more once it holds this part (`DomainAndParentPart`). It is created
/// before the node's first child is attached (`ProgressNode.childPart`) and lives as long as the node.
@usableFromInline
final class ChildSums: @unchecked Sendable {
    /// The node's refresh domain, which the node reaches through this part once it has the part (see
    /// `DomainAndParentPart`). A domain never changes (a merge forwards it to a representative instead).
    @usableFromInline let domain: RefreshDomain

    /// The domain, unretained: valid while this part is.
    @inlinable var unretainedDomain: Unmanaged<RefreshDomain> {
        @inline(__always) get { .passUnretained(domain) }
    }

    init(domain: RefreshDomain) {
        self.domain = domain
    }

    /// The node's children queued for the next refresh: the top of an intrusive stack linked by their
    /// `queueNext` (see ProgressNode+Propagation.swift).
    let queueHead = Atomic<UInt>(0)
    /// The node's children created attached to it (`init(totalUnitCount:parent:pendingUnitCount:)`) and not
    /// yet moved into its `ChildTable`: the top of an intrusive stack linked by their `freshNext` (the word
    /// `freshNextOrSlot`), which
    /// holds a reference to each (see ProgressNode+FreshChildren.swift).
    let freshChildren = Atomic<UInt>(0)

    /// Moved before and after a child's credit that races with a refresh, so that the refresh reads the
    /// credit and the child's removal together (see `ProgressNode.retire(_:crediting:failedShare:)`): the
    /// low 32 bits count the credits in progress (`beginCredit`), the high 32 bits the credits completed
    /// (`endCredit`). Settled when the low half is 0; two reads of equal values saw no credit begin or end
    /// between them, however many credits overlap. The one field updates touch, outside the domain lock:
    /// an atomic.
    let creditSequence = Atomic<UInt64>(0)

    /// Whether `sequence` (a value of `creditSequence`) has no credit in progress.
    @inline(__always)
    static func isSettled(_ sequence: UInt64) -> Bool { sequence & 0xFFFF_FFFF == 0 }

    /// A credit begins: readers of the parent wait for it to end before they trust its count and sums.
    func beginCredit() { creditSequence.add(1, ordering: .sequentiallyConsistent) }

    /// A credit ends: one fewer in progress, one more completed, in one step.
    func endCredit() { creditSequence.add((1 << 32) - 1, ordering: .sequentiallyConsistent) }

    /// What each child with a recorded contribution adds (`pendingInParent × fraction` at its last record),
    /// at the index the child keeps (`contributorIndex`): kept here rather than in the child, so that a node
    /// without progress costs no word for it. 8 bytes an entry, the contribution alone: nothing here needs
    /// the child's address, because an entry never moves. A removed entry becomes a hole, on a list of free
    /// entries that the next new contributor reuses (a hole is a NaN whose payload is the index of the next
    /// free entry; a contribution is never NaN: it is finite and at least 0). A buffer of its own rather than
    /// an `Array`: a refresh records one child per level it walks, and an array's uniqueness check and
    /// bounds check on each write were a fifth of that walk.
    ///
    /// Invariants: `contributorCount` entries below `slotCount` are contributions, and the others below it
    /// are holes, each once on the free list that starts at `freeSlot`; each contribution belongs to exactly
    /// one child (attached, or retired and still in the queue) whose `contributorIndex` is its index.
    @exclusivity(unchecked) private var contributions = UnsafeMutablePointer<Double>(bitPattern: 0)
    /// The entries in use, contributions and holes: every entry from `slotCount` on is unused.
    @exclusivity(unchecked) private var slotCount = 0
    @exclusivity(unchecked) private var contributorCount = 0
    @exclusivity(unchecked) private var contributionCapacity = 0
    /// The first hole, `noSlot` when there is none.
    @exclusivity(unchecked) private var freeSlot = ChildSums.noSlot

    private static let noSlot = Int(UInt32.max)

    deinit {
        contributions?.deallocate()  // `Double` is trivial: nothing to deinitialize
    }

    /// A hole whose next free entry is `next` (`noSlot`: none): a quiet NaN carrying it.
    @inline(__always)
    private static func hole(next: Int) -> Double {
        Double(bitPattern: Double.nan.bitPattern | UInt64(truncatingIfNeeded: next))
    }

    /// The next free entry after the hole `entry`.
    @inline(__always)
    private static func nextFree(after entry: Double) -> Int { Int(truncatingIfNeeded: entry.bitPattern & 0xFFFF_FFFF) }

    /// An entry for a new contributor of `contribution`: a hole if there is one, otherwise one past the last.
    private func addContribution(_ contribution: Double) -> Int {
        contributorCount += 1
        if freeSlot != Self.noSlot {
            let index = freeSlot
            freeSlot = Self.nextFree(after: contributions![index])
            contributions![index] = contribution
            return index
        }
        if slotCount == contributionCapacity {
            // Whole cache lines (8 entries, 64 bytes, aligned to 64): a refresh writes an entry on every read
            // of a changed child, and a block of another tree in the same line would move between two cores
            // on every write (see `CacheLinePadding`).
            let capacity = max(Self.entriesPerLine, contributionCapacity * 2)
            let grown = UnsafeMutableRawPointer.allocate(
                byteCount: capacity * MemoryLayout<Double>.stride, alignment: Self.entriesPerLine * 8
            ).bindMemory(to: Double.self, capacity: capacity)
            if let old = contributions {
                grown.moveInitialize(from: old, count: slotCount)
                old.deallocate()
            }
            contributions = grown
            contributionCapacity = capacity
        }
        (contributions! + slotCount).initialize(to: contribution)
        slotCount += 1
        return slotCount - 1
    }

    /// Frees the entry `index`: the last entry leaves the used part, any other becomes a hole.
    private func removeContribution(at index: Int) {
        contributorCount -= 1
        if contributorCount == 0 {
            // No contributor left: no hole either. A buffer grown for many children goes back.
            slotCount = 0
            freeSlot = Self.noSlot
            if contributionCapacity > Self.keptCapacity {
                contributions!.deallocate()
                contributions = nil
                contributionCapacity = 0
            }
        } else if index == slotCount - 1 {
            slotCount -= 1
        } else {
            contributions![index] = Self.hole(next: freeSlot)
            freeSlot = index
        }
    }

    /// The entries in a 64-byte cache line: the contributions grow by whole lines.
    private static let entriesPerLine = 8

    /// The capacity kept when the last contributor leaves (8 KB).
    private static let keptCapacity = 1_024

    @exclusivity(unchecked) private var sum: Double = 0 {
        didSet { publishedSum.store(total.bitPattern, ordering: .relaxed) }
    }
    /// Σ pendingᵢ × fractionᵢ over the children that failed, each fraction taken when that child failed:
    /// the share those children keep after they left. Only grows; never credited to `completedUnitCount`
    /// (failure is not done work).
    @exclusivity(unchecked) private var failedUnits: Double = 0 {
        didSet { publishedSum.store(total.bitPattern, ordering: .relaxed) }
    }
    /// What the children add to the node's units: the live children's progress and the failed ones' shares.
    var total: Double { sum + failedUnits }
    /// `total`, for readers outside the domain lock that only need a recent value (file summaries).
    let publishedSum = Atomic<UInt64>(0)

    /// Keeps the share of a child that failed and left.
    func addFailedShare(_ share: Double) {
        if share > 0 { failedUnits += share }
    }
    @exclusivity(unchecked) private var largestContribution: Double = 0
    @exclusivity(unchecked) private var incrementalSteps = 0

    private static let alwaysSummedCount = 16

    /// While this node keeps a file summary (Summaries/FileSums.swift): the children recorded since its
    /// last read. `nil` otherwise, so that a record costs the others one load.
    @exclusivity(unchecked) var fileChanges: FileChangeLog?

    /// The last stored property: a refresh writes this part's sums on every read of a changed tree, and
    /// whatever malloc places after it belongs to no tree or to another (see `CacheLinePadding`).
    let trailingPadding = CacheLinePadding()

    /// From the first custom property a member of this node's kept file summary contributed on: the
    /// members' slots and the property totals (Summaries/PropertySums.swift), which the log holds (`nil`
    /// before).
    var propertySums: PropertySums? {
        @inline(__always) get { fileChanges?.propertySums }
    }

    /// Records `child`'s new contribution (`pendingInParent × fraction`), and, while this node keeps a file
    /// summary, notes that `child` changed (whatever its fraction: its bytes or metadata may have).
    func record(_ child: Unmanaged<ProgressNode>, fraction: Double) {
        if let fileChanges { fileChanges.note(child) }
        child._withUnsafeGuaranteedRef { child in
            let contribution = Double(child.pendingInParent.load(ordering: .relaxed)) * fraction
            let index = Int(child.contributorIndex.load(ordering: .relaxed))
            var old = 0.0
            if index < 0 {
                if contribution == 0 { return }  // nothing to record, and nothing to remove later
                // A child that finished and was credited without a share (never `shared`) stays out.
                guard child.claimShare() else { return }
                let index = addContribution(contribution)
                child.contributorIndex.store(Int32(truncatingIfNeeded: index), ordering: .relaxed)
            } else {
                old = contributions![index]
                if old == contribution { return }
                contributions![index] = contribution
            }
            if contributorCount == 1 {
                // The only contributor: its contribution is the sum, exactly (the usual chain of nodes).
                sum = contribution
                largestContribution = contribution
                incrementalSteps = 0
                return
            }
            if contribution > largestContribution { largestContribution = contribution }
            sum += contribution - old
            settle()
        }
    }

    /// Removes `child`'s contribution (a child that finished and was credited instead, or left).
    func remove(_ child: Unmanaged<ProgressNode>) {
        let index = Int(child._withUnsafeGuaranteedRef { $0.contributorIndex.load(ordering: .relaxed) })
        guard index >= 0 else { return }
        child._withUnsafeGuaranteedRef { $0.contributorIndex.store(-1, ordering: .relaxed) }
        let contribution = contributions![index]
        removeContribution(at: index)
        if contributorCount == 0 {
            // Exactly 0: no rounding residue survives the last child.
            sum = 0
            largestContribution = 0
            incrementalSteps = 0
            return
        }
        sum -= contribution
        settle()
    }

    /// After an incremental change: sums from scratch when that is cheap (at most `alwaysSummedCount`
    /// entries) or when rounding could have lost more than the last bits. Counted in entries, holes
    /// included, since that is what a sum from scratch reads: each case needs as many changes to come
    /// again, so a change stays O(1) amortized.
    private func settle() {
        incrementalSteps += 1
        if slotCount <= Self.alwaysSummedCount || sum < largestContribution * 0x1p-20
            || incrementalSteps > slotCount + 1_024
        {
            sumFromScratch()
        } else if sum < 0 {
            sum = 0
        }
    }

    /// The sum of the contributions in index order, holes skipped.
    private func sumFromScratch() {
        var total = 0.0
        var largest = 0.0
        var index = 0
        while index < slotCount {
            let contribution = contributions![index]
            if !contribution.isNaN {
                total += contribution
                if contribution > largest { largest = contribution }
            }
            index += 1
        }
        sum = total
        largestContribution = largest
        incrementalSteps = 0
    }
}

extension ProgressNode {
    /// Sets `shared` unless this node is `retired`; returns whether it is `shared` now. Under the domain
    /// lock, before a refresh records this node's first contribution to its parent: of this and a finish
    /// that credits the node without the domain lock (it requires `shared` clear and sets `retired`, in
    /// one compare-and-exchange), exactly one happens, so a parent never counts a child's share and its
    /// credit together.
    @inline(__always)
    func claimShare() -> Bool {
        var current = flags.load(ordering: .sequentiallyConsistent)
        while current & NodeFlags.shared == 0 {
            if current & NodeFlags.retired != 0 { return false }
            let (exchanged, original) = flags.compareExchange(
                expected: current, desired: current | NodeFlags.shared,
                successOrdering: .sequentiallyConsistent, failureOrdering: .sequentiallyConsistent)
            if exchanged { return true }
            current = original
        }
        return true
    }

    /// This node's children's sum, for code under the domain lock; created on first use.
    var childSumsForRefresh: ChildSums {
        domainAndPart.partCreatingIfNone()  // the part if there is one, else a new one
    }

    /// This node's parent part (`ChildSums`: sums, dirty queue, fresh stack), created on first use, without
    /// a reference count: valid while this node is. Created before a child is attached (whose walks push
    /// onto `queueHead`), so that the walks find it; the creation here is a fallback that never runs then.
    @inline(__always)
    var childPart: Unmanaged<ChildSums> {
        if let part = domainAndPart.unretainedPart() { return part }
        return .passUnretained(childSumsForRefresh)
    }

    /// The top of this node's dirty queue (0 when it has no parent part: no child ever attached).
    @inline(__always)
    func queueTop() -> UInt {
        guard let part = domainAndPart.unretainedPart() else { return 0 }
        return part._withUnsafeGuaranteedRef { $0.queueHead.load(ordering: .sequentiallyConsistent) }
    }

    /// Takes this node's whole dirty queue (one exchange), 0 when it is empty.
    @inline(__always)
    func takeQueue() -> UInt {
        guard let part = domainAndPart.unretainedPart() else { return 0 }
        return part._withUnsafeGuaranteedRef { $0.queueHead.exchange(0, ordering: .sequentiallyConsistent) }
    }

    /// Records `child`'s new fraction in this node's sums (created on first use), without retaining them.
    /// Under the domain lock.
    @inline(__always)
    func recordInSums(_ child: Unmanaged<ProgressNode>, fraction: Double) {
        if let sums = domainAndPart.unretainedPart() {
            sums._withUnsafeGuaranteedRef { $0.record(child, fraction: fraction) }
        } else {
            childSumsForRefresh.record(child, fraction: fraction)
        }
    }

    /// The children's sum as of the last refresh (0 before any), for readers outside the domain lock that
    /// only need a recent value (file summaries).
    var recentChildUnits: Double {
        guard let sums = domainAndPart.loadPart() else { return 0 }
        return Double(bitPattern: sums.publishedSum.load(ordering: .relaxed))
    }
}

#if PROGRESSTREE_INTERNAL_CHECKS
extension ChildSums {
    /// These sums as they stand, for `ProgressNode.invariantViolations()` (ProgressNode+Invariants.swift).
    /// Under the domain lock.
    struct CheckedState {
        /// Each entry in index order: its contribution, or `nil` for a hole.
        let contributions: [Double?]
        /// Whether the free list holds exactly the holes, each once.
        let freeListIsTheHoles: Bool
        let contributorCount: Int
        let sum: Double
        let failedUnits: Double
        let largestContribution: Double
        let incrementalSteps: Int
        /// Whether every change sums the entries from scratch (`alwaysSummedCount`), so that `sum` is
        /// exactly their sum in index order.
        let isSummedFromScratch: Bool
    }

    var checkedState: CheckedState {
        let entries: [Double?] = (0..<slotCount).map { contributions![$0].isNaN ? nil : contributions![$0] }
        var free: Set<Int> = []
        var slot = freeSlot
        var freeListIsTheHoles = true
        while slot != Self.noSlot {
            guard slot >= 0, slot < slotCount, entries[slot] == nil, free.insert(slot).inserted else {
                freeListIsTheHoles = false
                break
            }
            slot = Self.nextFree(after: contributions![slot])
        }
        if free.count != entries.count(where: { $0 == nil }) { freeListIsTheHoles = false }
        return CheckedState(
            contributions: entries, freeListIsTheHoles: freeListIsTheHoles, contributorCount: contributorCount,
            sum: sum, failedUnits: failedUnits, largestContribution: largestContribution,
            incrementalSteps: incrementalSteps, isSummedFromScratch: slotCount <= Self.alwaysSummedCount)
    }
}
#endif
