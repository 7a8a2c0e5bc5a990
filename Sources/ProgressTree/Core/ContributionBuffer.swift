/// What each child with a recorded contribution adds to its parent (`pendingInParent × fraction` at its last
/// record), at the entry the child keeps (`ProgressNode.contributorIndex`), and their sum: the raw storage of
/// a `ChildSums`. Kept here rather than in the children, so that a node without progress costs no word for
/// it.
///
/// 8 bytes an entry, the contribution alone: nothing here needs the child's address, because an entry never
/// moves. A removed entry becomes a hole, on a list of free entries that the next new contributor reuses (a
/// hole is a NaN whose payload is the index of the next free entry; a contribution is never NaN: it is
/// finite and at least 0). A buffer of its own rather than an `Array`: a refresh records one child per level
/// it walks, and an array's uniqueness check and bounds check on each write were a fifth of that walk.
///
/// The sum is exact where it matters: with at most 16 entries (contributions and the holes between them),
/// the usual case, it is summed from scratch at every change (a handful of additions). A wider buffer is
/// adjusted by the difference and summed again from scratch when that could have lost more than the last
/// bits: when the sum fell below 2⁻²⁰ of the largest contribution it held since it was last summed (a huge
/// child that came and went would otherwise take a small sibling's progress with it), or after more
/// incremental steps than entries plus 1,024 (drift). Each case needs as many changes to happen again, so
/// a change stays O(1) amortized.
///
/// Contract: `base` holds `capacity` entries, of which the first `count` are in use (initialized: `Double` is
/// trivial): `contributorCount` contributions and the others holes, each once on the free list that starts
/// at `freeEntry`. Every index a caller passes is an entry in use, a contribution. Checked under
/// PROGRESSTREE_INTERNAL_CHECKS: every index read or written is in use and not a hole, and after each change
/// the counts, and for at most 64 entries the free list and the sum against a sum from scratch
/// (`violations`). Not copyable: it owns its memory. Owned by the tree's domain lock, as its `ChildSums`.
struct ContributionBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<Double>?
    /// The entries in use, contributions and holes: every entry from `count` on is unused.
    private(set) var count = 0
    private(set) var contributorCount = 0
    private var capacity = 0
    /// The first hole, `noEntry` when there is none.
    private var freeEntry = ContributionBuffer.noEntry
    /// Σ contributions, as the rules above keep it.
    private(set) var sum = 0.0
    /// The largest contribution since the last sum from scratch.
    private(set) var largestContribution = 0.0
    private(set) var incrementalSteps = 0

    private static let noEntry = Int(UInt32.max)
    /// The capacity kept when the last contributor leaves (8 KB).
    private static let keptCapacity = 1_024
    /// The entries in a 64-byte cache line.
    private static let entriesPerLine = 8
    private static let alwaysSummedCount = 16

    deinit { base?.deallocate() }  // `Double` is trivial: nothing to deinitialize

    /// The contribution at `index`, an entry in use that is no hole.
    subscript(index: Int) -> Double {
        @inline(__always) get {
            checkContribution(at: index)
            return base.unsafelyUnwrapped[index]
        }
    }

    /// Adds an entry for a new contributor of `contribution`: a hole if there is one, otherwise one past the
    /// last. Returns its index.
    mutating func add(_ contribution: Double) -> Int {
        contributorCount += 1
        let index: Int
        if freeEntry != Self.noEntry {
            index = freeEntry
            freeEntry = Int(truncatingIfNeeded: base.unsafelyUnwrapped[index].bitPattern & 0xFFFF_FFFF)
            base.unsafelyUnwrapped[index] = contribution
        } else {
            if count == capacity { grow() }
            index = count
            (base.unsafelyUnwrapped + index).initialize(to: contribution)
            count += 1
        }
        changed(from: 0, to: contribution)
        return index
    }

    /// Replaces the contribution at `index`; returns whether it changed.
    @inline(__always)
    mutating func set(_ index: Int, to contribution: Double) -> Bool {
        let old = self[index]
        if old == contribution { return false }
        base.unsafelyUnwrapped[index] = contribution
        changed(from: old, to: contribution)
        return true
    }

    /// Frees the entry `index`: the last entry leaves the part in use, any other becomes a hole.
    mutating func remove(at index: Int) {
        let contribution = self[index]
        contributorCount -= 1
        if contributorCount == 0 {
            // No contributor left: no hole either, and exactly 0 (no rounding residue survives the last
            // child). A buffer grown for many children goes back.
            count = 0
            freeEntry = Self.noEntry
            if capacity > Self.keptCapacity {
                base.unsafelyUnwrapped.deallocate()
                base = nil
                capacity = 0
            }
            (sum, largestContribution, incrementalSteps) = (0, 0, 0)
        } else {
            if index == count - 1 {
                count -= 1
            } else {
                // A quiet NaN carrying the next free entry.
                base.unsafelyUnwrapped[index] = Double(
                    bitPattern: Double.nan.bitPattern | UInt64(truncatingIfNeeded: freeEntry))
                freeEntry = index
            }
            sum -= contribution
            settle()
        }
        checkInvariants()
    }

    /// Grows by whole cache lines (8 entries, 64 bytes, aligned to 64): a refresh writes an entry on every
    /// read of a changed child, and a block of another tree in the same line would move between two cores
    /// on every write (see `CacheLinePadding`).
    private mutating func grow() {
        let grown = max(Self.entriesPerLine, capacity * 2)
        let buffer = UnsafeMutableRawPointer.allocate(
            byteCount: grown * MemoryLayout<Double>.stride, alignment: Self.entriesPerLine * MemoryLayout<Double>.stride
        ).bindMemory(to: Double.self, capacity: grown)
        if let old = base {
            buffer.moveInitialize(from: old, count: count)
            old.deallocate()
        }
        base = buffer
        capacity = grown
    }

    /// After the contribution of one entry went from `old` to `new`.
    @inline(__always)
    private mutating func changed(from old: Double, to new: Double) {
        if contributorCount == 1 {
            // The only contributor: its contribution is the sum, exactly (the usual chain of nodes).
            (sum, largestContribution, incrementalSteps) = (new, new, 0)
        } else {
            if new > largestContribution { largestContribution = new }
            sum += new - old
            settle()
        }
        checkInvariants()
    }

    /// After an incremental change: sums from scratch when that is cheap (at most `alwaysSummedCount`
    /// entries) or when rounding could have lost more than the last bits. Counted in entries, holes
    /// included, since that is what a sum from scratch reads: each case needs as many changes to come
    /// again, so a change stays O(1) amortized.
    private mutating func settle() {
        incrementalSteps += 1
        if count <= Self.alwaysSummedCount || sum < largestContribution * 0x1p-20 || incrementalSteps > count + 1_024 {
            (sum, largestContribution) = sumFromScratch()
            incrementalSteps = 0
        } else if sum < 0 {
            sum = 0
        }
    }

    /// The sum of the contributions in index order, holes skipped, and the largest of them.
    private func sumFromScratch() -> (sum: Double, largest: Double) {
        var (total, largest) = (0.0, 0.0)
        for index in 0..<count {
            let contribution = base.unsafelyUnwrapped[index]
            if !contribution.isNaN {
                total += contribution
                if contribution > largest { largest = contribution }
            }
        }
        return (total, largest)
    }

    // MARK: Checks (PROGRESSTREE_INTERNAL_CHECKS)

    /// Each entry in use, in index order: its contribution, or `nil` for a hole.
    var entries: [Double?] { (0..<count).map { base.unsafelyUnwrapped[$0].isNaN ? nil : base.unsafelyUnwrapped[$0] } }

    /// The invariants of the contract, one line each, empty when they hold: the free list is the holes, each
    /// once; the counts; the sum is the contributions' sum, exactly (in index order) where every change sums
    /// from scratch, otherwise within the rounding of the incremental steps since the last sum from scratch;
    /// no contribution exceeds the largest recorded since.
    func violations() -> [String] {
        var found: [String] = []
        let entries = self.entries
        for case let (index, entry?) in entries.enumerated() where !(entry >= 0) {
            found.append("contributor \(index) contributes \(entry)")
        }
        let holes = entries.count { $0 == nil }
        let (recomputed, largest) = sumFromScratch()
        // Exactly `holes` steps, each to a hole in use, and then the end: a list that visited an entry twice
        // would loop (each entry has one next), so it is the holes, each once.
        var (entry, steps) = (freeEntry, 0)
        while entry != Self.noEntry, steps <= holes, entry >= 0, entry < count, base.unsafelyUnwrapped[entry].isNaN {
            entry = Int(truncatingIfNeeded: base.unsafelyUnwrapped[entry].bitPattern & 0xFFFF_FFFF)
            steps += 1
        }
        if entry != Self.noEntry || steps != holes { found.append("its sums' free list is not exactly their holes") }
        if count - holes != contributorCount {
            found.append("its sums count \(contributorCount) contributors and hold \(count - holes) contributions")
        }
        if largest > largestContribution {
            found.append("a contribution of \(largest) above the largest its sums recorded")
        }
        // Each incremental step rounds once below the largest contribution and once below the sum, at most
        // (entries + steps) of them; the clamp at 0 only undoes such rounding.
        let bound =
            count <= Self.alwaysSummedCount  // every change sums from scratch
            ? 0 : Double(incrementalSteps + 1) * Double(count + incrementalSteps + 1) * largestContribution * .ulpOfOne
        if !(sum >= 0) || abs(sum - recomputed) > bound {
            found.append("its sums hold \(sum), its contributors add up to \(recomputed)")
        }
        return found
    }

    /// Stops the process if the index is no contribution in use.
    @inline(__always)
    private func checkContribution(at index: Int) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            index >= 0 && index < count && !base.unsafelyUnwrapped[index].isNaN,
            "ProgressTree internal check failed: contributor index \(index) names no contribution (of \(count) entries)"
        )
        #endif
    }

    /// After each change: the counts always; the free list and the sum for at most 64 entries (a wider
    /// buffer would make each change O(entries)).
    @inline(__always)
    private func checkInvariants() {
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            contributorCount >= 0 && contributorCount <= count && count <= capacity && sum >= 0,
            "ProgressTree internal check failed: sums of \(contributorCount) contributors in \(count) entries")
        if count <= 64, let first = violations().first {
            preconditionFailure("ProgressTree internal check failed: \(first)")
        }
        #endif
    }
}
