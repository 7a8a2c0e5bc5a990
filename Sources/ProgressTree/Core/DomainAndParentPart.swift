import Synchronization

/// A node's refresh domain (`RefreshDomain`) and its parent part (`ChildSums`), in one word: a leaf (most
/// nodes) needs only the domain, and a node with children holds its domain in its parent part. Its
/// accessors are what the node's reads, walks and refreshes use of the two, reached without a reference
/// count: each retain and release would be an atomic operation on an object every thread of the tree reads.
///
/// The word holds one of:
/// - 0: neither yet;
/// - a domain's address (bit 0 clear): the node's domain, retained by the word;
/// - a parent part's address with bit 0 set (`partTag`; objects are aligned to 16 bytes): the node's parent
///   part, retained by the word, whose `domain` (retained by the part) is the node's domain.
///
/// Contract: it only moves forward, each step one compare-and-exchange: 0 to a domain (`storeDomainIfNone`),
/// then a domain to a part holding that same domain (`partCreatingIfNone`), which takes over the word's
/// reference to it. So a node's domain, once set, never changes, and whatever a reader loads stays valid,
/// without a reference count, while the node is alive (the caller holds it, or reaches it as `UnownedNode`'s
/// contract allows): a domain loaded before the word moved on is the part's, and the part lives as long as
/// the node. Loads are acquiring and the exchanges releasing, so that an instance's initialization is visible
/// to whoever loads it (as `OnceReference`). Checked under PROGRESSTREE_INTERNAL_CHECKS: a part read from the
/// word is a live `ChildSums` (its first word is that class's metadata), and a domain is a live one
/// (`UnownedDomain`).
@usableFromInline
struct DomainAndParentPart: ~Copyable, Sendable {
    @usableFromInline let word = Atomic<UInt>(0)

    /// Bit 0: the word holds a parent part.
    @usableFromInline static var partTag: UInt { 1 }

    init() {}

    deinit {
        let bits = word.load(ordering: .acquiring)
        if bits & Self.partTag != 0 {
            Self.part(bits).release()
        } else if let domain = UnownedDomain(address: bits) {
            domain.reference.release()
        }
    }

    /// The part `bits` names; bit 0 is set. Untagged by a subtraction rather than a mask, so that the
    /// compiler folds it into the offset of the load that follows (a clean read of a parent: one
    /// instruction fewer).
    @inlinable @inline(__always)
    static func part(_ bits: UInt) -> Unmanaged<ChildSums> {
        let address = bits &- partTag
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            address & 0xF == 0
                && UnsafeRawPointer(bitPattern: address)?.load(as: UInt.self)
                    == UInt(bitPattern: ObjectIdentifier(ChildSums.self)),
            "ProgressTree internal check failed: a node's word names no live parent part")
        #endif
        return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
    }

    /// The node's part, without a reference count, `nil` before its first child.
    @inline(__always)
    private var unretainedPart: Unmanaged<ChildSums>? {
        let bits = word.load(ordering: .acquiring)
        return bits & Self.partTag != 0 ? Self.part(bits) : nil
    }

    /// The node's part as a handle, for code that reads several of its fields in a row (one load of the
    /// word); `nil` before its first child.
    var sums: UnownedSums? { unretainedPart.map(UnownedSums.init) }

    // MARK: The domain

    /// The node's domain, `nil` before it has one.
    ///
    /// A parent's part first, as the code falls through: the clean read inlines this, and what a program
    /// reads over and over is a root. (Its loop was bound by taken branches: a taken branch more for a
    /// parent measured 1.1 → 1.4 ns a clean read.)
    @inlinable
    var domain: UnownedDomain? {
        @inline(__always) get {
            let bits = word.load(ordering: .acquiring)
            if _fastPath(bits & Self.partTag != 0) { return Self.part(bits)._withUnsafeGuaranteedRef { $0.domain } }
            return UnownedDomain(address: bits)
        }
    }

    /// The node's domain, retained, `nil` before it has one.
    func loadDomain() -> RefreshDomain? { domain?.domain }

    /// Stores `domain` if the node has no domain yet; returns the node's domain then.
    func storeDomainIfNone(_ domain: RefreshDomain) -> RefreshDomain {
        let retained = Unmanaged.passRetained(domain)
        let (exchanged, original) = word.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        if exchanged { return domain }
        retained.release()
        return Self.domain(original).domain
    }

    /// The domain `bits` names: its own, or its part's. `bits` is not 0.
    private static func domain(_ bits: UInt) -> UnownedDomain {
        if bits & partTag != 0 { return part(bits)._withUnsafeGuaranteedRef { $0.domain } }
        return UnownedDomain(address: bits).unsafelyUnwrapped
    }

    // MARK: The part

    /// The node's parent part, retained, `nil` before its first child.
    func loadPart() -> ChildSums? { unretainedPart?.takeUnretainedValue() }

    /// The node's parent part, created with its domain if it has none yet; returns it. The node has its
    /// domain already (a node gets it before its first child: `attachFreshChild`, `RefreshDomain.merge`).
    @discardableResult
    func partCreatingIfNone() -> ChildSums {
        var bits = word.load(ordering: .acquiring)
        if bits & Self.partTag != 0 { return Self.part(bits).takeUnretainedValue() }
        guard bits != 0 else { preconditionFailure("a node gets its refresh domain before its parent part") }
        let part = ChildSums(domain: Self.domain(bits).domain)
        let retained = Unmanaged.passRetained(part)
        let tagged = UInt(bitPattern: retained.toOpaque()) | Self.partTag
        while true {
            let (exchanged, original) = word.compareExchange(
                expected: bits, desired: tagged, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if exchanged {
                // The part holds the domain now; the word's reference to it goes.
                Self.domain(bits).reference.release()
                return part
            }
            bits = original
            if bits & Self.partTag != 0 {
                retained.release()  // another thread's part won
                return Self.part(bits).takeUnretainedValue()
            }
        }
    }

    /// The part, for a walk that pushes onto it: created before the node's first child was attached (whose
    /// walks push), so the creation here is a fallback that never runs then.
    @inline(__always)
    private var existingPart: Unmanaged<ChildSums> {
        if let part = unretainedPart { return part }
        return .passUnretained(partCreatingIfNone())
    }

    // MARK: The part's atomics (no lock)

    /// The top of the node's dirty queue (0: empty, or no part: no child ever attached).
    var queueTop: UInt { sums?.queueTop ?? 0 }

    /// Takes the node's whole dirty queue (one exchange), 0 when it is empty.
    @inline(__always)
    func takeQueue() -> UInt {
        unretainedPart?._withUnsafeGuaranteedRef { $0.queueHead.exchange(0, ordering: .sequentiallyConsistent) } ?? 0
    }

    /// Pushes `child` onto the node's dirty queue, linking it by its `queueNext`; the caller set its `queued`.
    @inline(__always)
    func push(queued child: ProgressNode) {
        existingPart._withUnsafeGuaranteedRef { part in
            Self.push(UnownedNode(child).address, onto: part.queueHead) {
                child.queueNext.store($0, ordering: .relaxed)
            }
        }
    }

    /// Pushes the node at `address` onto the intrusive stack whose top is `top`, `link` storing the node
    /// below it in the node (before the exchange that publishes it).
    @inline(__always)
    private static func push(_ address: UInt, onto top: borrowing Atomic<UInt>, link: (UInt) -> Void) {
        var below = top.load(ordering: .relaxed)
        while true {
            link(below)
            let (exchanged, original) = top.compareExchange(
                expected: below, desired: address, successOrdering: .sequentiallyConsistent, failureOrdering: .relaxed)
            if exchanged { return }
            below = original
        }
    }

    /// The top of the node's stack of fresh children (0: none).
    @inline(__always)
    var freshTop: UInt {
        unretainedPart?._withUnsafeGuaranteedRef { $0.freshChildren.load(ordering: .sequentiallyConsistent) } ?? 0
    }

    /// Takes the node's whole stack of fresh children (one exchange), 0 when it is empty.
    func takeFresh() -> UInt {
        unretainedPart?._withUnsafeGuaranteedRef { $0.freshChildren.exchange(0, ordering: .sequentiallyConsistent) }
            ?? 0
    }

    /// Pushes `child`, retained for the stack, onto the node's stack of fresh children, linking it by its
    /// `freshNext`.
    @inline(__always)
    func push(fresh child: UnownedNode) {
        existingPart._withUnsafeGuaranteedRef { part in
            Self.push(child.address, onto: part.freshChildren) { child.freshNext = $0 }
        }
    }

    /// Takes `child` off the node's stack of fresh children if it is on top; returns whether it did (see
    /// ProgressNode+FreshChildren.swift).
    @inline(__always)
    func popFresh(_ child: UnownedNode) -> Bool {
        guard let part = unretainedPart else { return false }
        return part._withUnsafeGuaranteedRef { part in
            // On top: the push (releasing) is seen, and with it `freshNext`.
            guard part.freshChildren.load(ordering: .acquiring) == child.address else { return false }
            // Read while a settle may be writing the child's slot into the same word: then the settle's
            // exchange has taken the stack, and the compare-and-exchange below fails whatever was read.
            return part.freshChildren.compareExchange(
                expected: child.address, desired: child.freshNext, successOrdering: .sequentiallyConsistent,
                failureOrdering: .relaxed
            ).exchanged
        }
    }

    /// The node's credit sequence (`ChildSums.creditSequence`), 0 (settled) before it has a part.
    var creditSequence: UInt64 { sums?.creditSequence ?? 0 }

    /// The children's sum as of the last refresh (0 before any), for readers outside the domain lock that
    /// only need a recent value (a failing node's share).
    var recentChildUnits: Double {
        Double(bitPattern: unretainedPart?._withUnsafeGuaranteedRef { $0.publishedSum.load(ordering: .relaxed) } ?? 0)
    }

    // MARK: The part's sums (the domain lock's)

    /// What the children add to the node's units (`ChildSums.total`), 0 before it has a part.
    func childUnits(_ scratch: borrowing RefreshScratch) -> Double { sums?.total(scratch) ?? 0 }

    /// Records `child`'s new fraction in the node's sums (`ChildSums.record`); returns whether the node's
    /// summaries have started (then its record of the child's summary may be due).
    @inline(__always)
    func record(_ child: ProgressNode, fraction: Double, _ scratch: borrowing RefreshScratch) -> Bool {
        existingPart._withUnsafeGuaranteedRef { part in
            part.record(child, fraction: fraction, scratch)
            return part.summariesStarted(scratch)
        }
    }

    /// Removes `child`'s contribution from the node's sums, if it has one (`ChildSums.remove`).
    func remove(_ child: ProgressNode, _ scratch: borrowing RefreshScratch) {
        unretainedPart?._withUnsafeGuaranteedRef { $0.remove(child, scratch) }
    }

    /// Whether the node's summaries have started (`ChildSums.summariesStarted`); `false` without a part.
    func summariesStarted(_ scratch: borrowing RefreshScratch) -> Bool {
        unretainedPart?._withUnsafeGuaranteedRef { $0.summariesStarted(scratch) } ?? false
    }

    /// `child`'s entry in the node's sums, claimed if it has none (`ChildSums.memberEntry(for:_:)`).
    func memberEntry(for child: ProgressNode, _ scratch: borrowing RefreshScratch) -> Int? {
        unretainedPart?._withUnsafeGuaranteedRef { $0.memberEntry(for: child, scratch) }
    }

    /// The node's columns of its summaries (`ChildSums.columns(_:)`), none without a part.
    func columns(_ scratch: borrowing RefreshScratch) -> [ColumnReference] {
        unretainedPart?._withUnsafeGuaranteedRef { $0.columns(scratch) } ?? []
    }

    /// Sets the contribution at `entry` of a member without values or files of its own, `member` its word:
    /// in each of its columns, what it keeps of its children (`ChildSums.setContribution(at:ofColumnsOf:_:)`).
    func setContribution(
        at entry: Int, ofColumnsOf member: borrowing DomainAndParentPart, merging: Bool,
        _ scratch: borrowing RefreshScratch
    ) {
        guard let memberPart = member.unretainedPart else { return }
        existingPart._withUnsafeGuaranteedRef { part in
            memberPart._withUnsafeGuaranteedRef {
                part.setContribution(at: entry, ofColumnsOf: $0, merging: merging, scratch)
            }
        }
    }

    /// Sets the contribution at `entry` of a member with values or files of its own, from its parts, a column
    /// made for each property it has and the node has not (`ChildSums.addColumns(for:_:)`,
    /// `setContribution(at:of:_:)`).
    func setContribution(
        at entry: Int, of member: SummaryParts, merging: Bool, _ scratch: borrowing RefreshScratch
    ) {
        existingPart._withUnsafeGuaranteedRef { part in
            part.addColumns(for: member, scratch)
            part.setContribution(at: entry, of: member, merging: merging, scratch)
        }
    }

    /// Merges every column of the node's summaries again, at the end of a start (`SummaryTree.rebuild`).
    func rebuildColumns(_ scratch: borrowing RefreshScratch) {
        unretainedPart?._withUnsafeGuaranteedRef { $0.forEachColumn(.rebuild, scratch) }
    }
}

/// A node's `ChildSums` without a reference count, for code that reads several of its fields in a row:
/// valid while the node is, as `DomainAndParentPart`'s contract says.
@frozen @usableFromInline
struct UnownedSums {
    @usableFromInline let reference: Unmanaged<ChildSums>

    /// The credit sequence (`ChildSums.creditSequence`).
    @inline(__always)
    var creditSequence: UInt64 {
        reference._withUnsafeGuaranteedRef { $0.creditSequence.load(ordering: .sequentiallyConsistent) }
    }

    /// The top of the dirty queue (`ChildSums.queueHead`), 0 when it is empty.
    var queueTop: UInt { reference._withUnsafeGuaranteedRef { $0.queueHead.load(ordering: .sequentiallyConsistent) } }

    /// What the children add to the node's units (`ChildSums.total(_:)`).
    func total(_ scratch: borrowing RefreshScratch) -> Double {
        reference._withUnsafeGuaranteedRef { $0.total(scratch) }
    }

    /// How many columns the node's summaries have (`ChildSums.columnCount(_:)`).
    func columnCount(_ scratch: borrowing RefreshScratch) -> Int {
        reference._withUnsafeGuaranteedRef { $0.columnCount(scratch) }
    }

    /// The column at `index` (`ChildSums.column(at:_:)`).
    func column(at index: Int, _ scratch: borrowing RefreshScratch) -> ColumnReference {
        reference._withUnsafeGuaranteedRef { $0.column(at: index, scratch) }
    }

    /// The column of the property `key` names, `nil` when there is none (`ChildSums.column(for:_:)`).
    func column(for key: ObjectIdentifier, _ scratch: borrowing RefreshScratch) -> ColumnReference? {
        reference._withUnsafeGuaranteedRef { $0.column(for: key, scratch) }
    }

    /// Takes the note that a column changed (`ChildSums.takeColumnsChanged(_:)`).
    func takeColumnsChanged(_ scratch: borrowing RefreshScratch) -> Bool {
        reference._withUnsafeGuaranteedRef { $0.takeColumnsChanged(scratch) }
    }
}
