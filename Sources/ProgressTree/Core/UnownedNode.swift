import Synchronization

/// A node without a reference count: what the lock-free walks up the tree pass from level to level, and
/// what a dirty queue, a stack of fresh children or a refresh's frames link by address. Each retain and
/// release of a node is an atomic operation on its reference count, shared by every thread that touches
/// the node, so walks take none.
///
/// Its accessors are the node's atomics a walk reads and writes (`flags`, `parent`, the queue and fresh
/// links) and the walks' steps, each run on the node through `Unmanaged._withUnsafeGuaranteedRef`: the only
/// way the node is reached, so that nothing retains it.
///
/// Contract: the node is alive while a handle to it is used, because one of these holds:
/// - the caller is inside a walk registered in the node's domain (`RefreshDomain.enterWalk`), and reached
///   the node by `parent` from a node it holds: a parent going away clears its children's `parentAddress`
///   and then waits for those walks (ProgressNode+Propagation.swift);
/// - the node is in a dirty queue or a stack of fresh children that the caller took (one exchange) or
///   drains under the domain lock, or in a refresh's frames: the queue, the stack or the node above holds
///   a reference to it;
/// - the caller holds a reference to it (`init(_:)`);
/// - the node is a member of a summary start (`ProgressNode.beginSummaries`) and the caller holds the domain
///   lock it held then: the member is in its parent's table while attached, and, having an entry in the
///   parent's sums, its finish or failure goes through `retire`, which hands the dirty queue a reference
///   under that lock (so the queue holds it until a read drains it, after the start).
/// Checked under PROGRESSTREE_INTERNAL_CHECKS: every handle made from an address is to a live node (its
/// first word is `ProgressNode`'s metadata, which `free` overwrites), so a walk that follows a link to a
/// freed node stops there.
@frozen @usableFromInline
struct UnownedNode {
    @usableFromInline let reference: Unmanaged<ProgressNode>

    /// A handle to `node`, which the caller holds.
    init(_ node: borrowing ProgressNode) { reference = .passUnretained(node) }

    /// The node at `address` (a link: `parentAddress`, `queueNext`, `freshNext`), `nil` for 0.
    init?(address: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            address & 0xF == 0 && pointer.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(ProgressNode.self)),
            "ProgressTree internal check failed: a link names no live node (0x\(String(address, radix: 16)))")
        #endif
        reference = .fromOpaque(pointer)
    }

    /// The node's address: what a link holds.
    var address: UInt { UInt(bitPattern: reference.toOpaque()) }

    /// The node as a reference (a retain): for code off the walks' paths.
    var node: ProgressNode { reference.takeUnretainedValue() }

    // MARK: Reference counts handed over

    /// Retains the node for a queue, a stack or a table that takes it over.
    func retain() { _ = reference.retain() }

    /// Releases a reference a queue, a stack or a table held.
    func release() { reference.release() }

    /// The reference a queue, a stack or a table held, taken over by the caller.
    func takeRetained() -> ProgressNode { reference.takeRetainedValue() }

    // MARK: The atomics a walk reads and writes

    /// `flags`, sequentially consistent (see the top of ProgressNode+Propagation.swift).
    var flags: UInt32 { reference._withUnsafeGuaranteedRef { $0.flags.load(ordering: .sequentiallyConsistent) } }

    /// Sets `bits` in `flags`; returns the flags as they were.
    func setFlags(_ bits: UInt32) -> UInt32 {
        reference._withUnsafeGuaranteedRef { $0.flags.bitwiseOr(bits, ordering: .sequentiallyConsistent).oldValue }
    }

    /// The parent while attached (`parentAddress`), `nil` otherwise: to be followed inside a walk only.
    var parent: UnownedNode? {
        UnownedNode(
            address: reference._withUnsafeGuaranteedRef { $0.parentAddress.load(ordering: .sequentiallyConsistent) })
    }

    /// The node's refresh domain, `nil` before it has one (`DomainAndParentPart.domain`).
    var domain: UnownedDomain? { reference._withUnsafeGuaranteedRef { $0.domainAndPart.domain } }

    /// The next node of the dirty queue this node is in (`queueNext`), 0 at the end.
    var nextInQueue: UInt { reference._withUnsafeGuaranteedRef { $0.queueNext.load(ordering: .relaxed) } }

    /// The next node of the stack of fresh children this node is on (`freshNextOrSlot`), 0 at the end.
    var freshNext: UInt {
        get { reference._withUnsafeGuaranteedRef { $0.freshNextOrSlot.load(ordering: .relaxed) } }
        nonmutating set {
            reference._withUnsafeGuaranteedRef { $0.freshNextOrSlot.store(newValue, ordering: .relaxed) }
        }
    }

    /// Records `slot` (-1: none) as the node's slot in its parent's `ChildTable` (`setSlotInParent`).
    func setSlotInParent(_ slot: Int) { reference._withUnsafeGuaranteedRef { $0.setSlotInParent(slot) } }

    // MARK: Steps of the walks, run on the node

    /// Queues the node in `parent`'s dirty queue (`ProgressNode.enqueue(in:)`).
    func enqueue(in parent: UnownedNode) { reference._withUnsafeGuaranteedRef { $0.enqueue(in: parent) } }

    /// Pushes `child` onto this node's dirty queue (`DomainAndParentPart.push(queued:)`).
    func push(queued child: ProgressNode) {
        reference._withUnsafeGuaranteedRef { $0.domainAndPart.push(queued: child) }
    }

    /// Appends the node's observations to `signals` (`ProgressNode.collectObservers(into:)`: its lock). No
    /// retain, even here: the node may be a parent whose `deinit` has begun and waits for this walk.
    func collectObservers(into signals: inout [any ChangeSignalReceiver]?) {
        reference._withUnsafeGuaranteedRef { $0.collectObservers(into: &signals) }
    }

    /// The node taken from the dirty queue it is in: its link to the next one (read first) and its flags
    /// as they were (`ProgressNode.takeFromQueue()`).
    func takeFromQueue() -> (next: UInt, flags: UInt32) {
        reference._withUnsafeGuaranteedRef { ($0.queueNext.load(ordering: .relaxed), $0.takeFromQueue()) }
    }

    /// A refresh's frame of the node, its queue drained (`ProgressNode.drainedFrame()`).
    func drainedFrame() -> RefreshFrame { reference._withUnsafeGuaranteedRef { $0.drainedFrame() } }

    /// The node's fraction from its counts and sums, `nil` when a credit moved its sequence since
    /// `sequence` (`ProgressNode.settledFraction(since:_:)`).
    func settledFraction(since sequence: UInt64, _ scratch: borrowing RefreshScratch) -> Double? {
        reference._withUnsafeGuaranteedRef { $0.settledFraction(since: sequence, scratch) }
    }

    /// Publishes the fraction a refresh computed (`ProgressNode.endRefresh(_:)`).
    func endRefresh(_ fraction: Double) { reference._withUnsafeGuaranteedRef { $0.endRefresh(fraction) } }

    /// Records `child`'s new fraction in the node's sums (`ProgressNode.recordInSums(_:fraction:_:)`).
    func recordInSums(_ child: UnownedNode, fraction: Double, _ scratch: inout RefreshScratch) {
        reference._withUnsafeGuaranteedRef { child.record(in: $0, fraction: fraction, &scratch) }
    }

    /// Records the node's new fraction in `parent`'s sums (`ProgressNode.recordInSums(_:fraction:_:)`).
    func record(in parent: ProgressNode, fraction: Double, _ scratch: inout RefreshScratch) {
        reference._withUnsafeGuaranteedRef { parent.recordInSums($0, fraction: fraction, &scratch) }
    }

    /// Takes the retired `child` out of the node's sums and summaries, with the share it kept at failure
    /// (`ProgressNode.takeOut(_:failedShare:_:)`).
    func takeOutRetired(_ child: UnownedNode, _ scratch: inout RefreshScratch) {
        reference._withUnsafeGuaranteedRef { node in
            child.reference._withUnsafeGuaranteedRef {
                node.takeOut($0, failedShare: $0.takeShareAtFailure(), &scratch)
            }
        }
    }

    /// One level of an update's path refresh (`ProgressNode.refreshPathStep`): the node's parent to go on
    /// with, `nil` where the walk stops.
    func refreshPathStep(
        below: UnownedNode?, fraction: inout Double, signals: inout [any ChangeSignalReceiver]?,
        _ scratch: inout RefreshScratch
    ) -> UnownedNode? {
        reference._withUnsafeGuaranteedRef {
            $0.refreshPathStep(below: below, fraction: &fraction, signals: &signals, &scratch)
        }
    }

    // MARK: A summary start (Summaries/ProgressNode+Summaries.swift)

    /// Starts the node's summaries and returns its members (`ProgressNode.beginSummaries`).
    func beginSummaries(_ scratch: inout RefreshScratch) -> [(UnownedNode, Int)]? {
        reference._withUnsafeGuaranteedRef { $0.beginSummaries(&scratch) }
    }

    /// Sets `member`'s contribution at `entry` in the node's columns without merging above it
    /// (`ProgressNode.setContribution(of:at:merging:_:)`): the start merges once at its end.
    func setLeafContribution(of member: UnownedNode, at entry: Int, _ scratch: inout RefreshScratch) {
        reference._withUnsafeGuaranteedRef { node in
            member.reference._withUnsafeGuaranteedRef {
                node.setContribution(of: $0, at: entry, merging: false, &scratch)
            }
        }
    }

    /// Merges the node's columns once every member's contribution is in (`DomainAndParentPart.rebuildColumns`).
    func rebuildColumns(_ scratch: borrowing RefreshScratch) {
        reference._withUnsafeGuaranteedRef { $0.domainAndPart.rebuildColumns(scratch) }
    }
}
