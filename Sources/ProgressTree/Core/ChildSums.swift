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
/// The sum is exact where it matters: a node with at most 16 contributors, the usual case, is summed from
/// scratch at every change (a handful of additions). A wider node is adjusted by the difference and summed
/// again from scratch when that could have lost more than the last bits: when the sum fell below 2⁻²⁰ of the
/// largest contribution it held since it was last summed (a huge child that came and went would otherwise
/// take a small sibling's progress with it), or after more incremental steps than contributors plus 1,024
/// (drift). Each case needs as many changes to happen again, so updates stay O(1) amortized.
///
/// It is also the part of a node that only a parent needs, so that a leaf (most nodes) pays one word for
/// all of it: the tops of the node's two intrusive stacks of children, `queueHead` and `freshChildren`,
/// atomics that children push onto without a lock. It is created before the node's first child is
/// attached (`ProgressNode.childPart`) and lives as long as the node.
final class ChildSums: @unchecked Sendable {
    /// The node's children queued for the next refresh: the top of an intrusive stack linked by their
    /// `queueNext` (see ProgressNode+Propagation.swift).
    let queueHead = Atomic<UInt>(0)
    /// The node's children created attached to it (`init(totalUnitCount:parent:pendingUnitCount:)`) and not
    /// yet moved into its `ChildTable`: the top of an intrusive stack linked by their `freshNext`, which
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

    /// A child with a recorded contribution, and what it adds (`pendingInParent × fraction` at its last
    /// record): kept here rather than in the child, so that a node without progress costs no word for it.
    private struct Contributor {
        let node: Unmanaged<ProgressNode>
        var contribution: Double
    }

    /// The children with a recorded contribution; each knows its index (`contributorIndex`). A buffer of
    /// its own rather than an `Array`: a refresh records one child per level it walks, and an array's
    /// uniqueness check and bounds check on each write were a fifth of that walk.
    @exclusivity(unchecked) private var contributors = UnsafeMutablePointer<Contributor>(bitPattern: 0)
    @exclusivity(unchecked) private var contributorCount = 0
    @exclusivity(unchecked) private var contributorCapacity = 0

    deinit {
        contributors?.deallocate()  // `Contributor` is trivial: nothing to deinitialize
    }

    private func appendContributor(_ contributor: Contributor) {
        if contributorCount == contributorCapacity {
            let capacity = max(4, contributorCapacity * 2)
            let grown = UnsafeMutablePointer<Contributor>.allocate(capacity: capacity)
            if let old = contributors {
                grown.moveInitialize(from: old, count: contributorCount)
                old.deallocate()
            }
            contributors = grown
            contributorCapacity = capacity
        }
        (contributors! + contributorCount).initialize(to: contributor)
        contributorCount += 1
    }
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
                child.contributorIndex.store(Int32(truncatingIfNeeded: contributorCount), ordering: .relaxed)
                appendContributor(Contributor(node: .passUnretained(child), contribution: contribution))
            } else {
                old = contributors![index].contribution
                if old == contribution { return }
                contributors![index].contribution = contribution
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
        let contribution = contributors![index].contribution
        contributorCount -= 1
        let last = contributors![contributorCount]
        if index < contributorCount {
            contributors![index] = last
            last.node._withUnsafeGuaranteedRef {
                $0.contributorIndex.store(Int32(truncatingIfNeeded: index), ordering: .relaxed)
            }
        }
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

    private func settle() {
        incrementalSteps += 1
        if contributorCount <= Self.alwaysSummedCount || sum < largestContribution * 0x1p-20
            || incrementalSteps > contributorCount + 1_024
        {
            sumFromScratch()
        } else if sum < 0 {
            sum = 0
        }
    }

    private func sumFromScratch() {
        var total = 0.0
        var largest = 0.0
        var index = 0
        while index < contributorCount {
            let contribution = contributors![index].contribution
            total += contribution
            if contribution > largest { largest = contribution }
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
        childSums.load() ?? childSums.storeIfNil(ChildSums())
    }

    /// This node's parent part (`ChildSums`: sums, dirty queue, fresh stack), created on first use, without
    /// a reference count: valid while this node is. Created before a child is attached (whose walks push
    /// onto `queueHead`), so that the walks find it; the creation here is a fallback that never runs then.
    @inline(__always)
    var childPart: Unmanaged<ChildSums> {
        if let part = childSums.unretained() { return part }
        return .passUnretained(childSumsForRefresh)
    }

    /// The top of this node's dirty queue (0 when it has no parent part: no child ever attached).
    @inline(__always)
    func queueTop() -> UInt {
        guard let part = childSums.unretained() else { return 0 }
        return part._withUnsafeGuaranteedRef { $0.queueHead.load(ordering: .sequentiallyConsistent) }
    }

    /// Takes this node's whole dirty queue (one exchange), 0 when it is empty.
    @inline(__always)
    func takeQueue() -> UInt {
        guard let part = childSums.unretained() else { return 0 }
        return part._withUnsafeGuaranteedRef { $0.queueHead.exchange(0, ordering: .sequentiallyConsistent) }
    }

    /// Records `child`'s new fraction in this node's sums (created on first use), without retaining them.
    /// Under the domain lock.
    @inline(__always)
    func recordInSums(_ child: Unmanaged<ProgressNode>, fraction: Double) {
        if let sums = childSums.unretained() {
            sums._withUnsafeGuaranteedRef { $0.record(child, fraction: fraction) }
        } else {
            childSumsForRefresh.record(child, fraction: fraction)
        }
    }

    /// The children's sum as of the last refresh (0 before any), for readers outside the domain lock that
    /// only need a recent value (file summaries).
    var recentChildUnits: Double {
        guard let sums = childSums.load() else { return 0 }
        return Double(bitPattern: sums.publishedSum.load(ordering: .relaxed))
    }
}

#if PROGRESSTREE_INTERNAL_CHECKS
extension ChildSums {
    /// These sums as they stand, for `ProgressNode.invariantViolations()` (ProgressNode+Invariants.swift).
    /// Under the domain lock.
    struct CheckedState {
        /// Each contributor's address, and its contribution, in index order.
        let contributorAddresses: [UInt]
        let contributions: [Double]
        let sum: Double
        let failedUnits: Double
        let largestContribution: Double
        let incrementalSteps: Int
        /// Whether every change sums the contributors from scratch (`alwaysSummedCount`), so that `sum` is
        /// exactly their sum in index order.
        let isSummedFromScratch: Bool
    }

    var checkedState: CheckedState {
        CheckedState(
            contributorAddresses: (0..<contributorCount).map { UInt(bitPattern: contributors![$0].node.toOpaque()) },
            contributions: (0..<contributorCount).map { contributors![$0].contribution },
            sum: sum, failedUnits: failedUnits, largestContribution: largestContribution,
            incrementalSteps: incrementalSteps, isSummedFromScratch: contributorCount <= Self.alwaysSummedCount)
    }
}
#endif
