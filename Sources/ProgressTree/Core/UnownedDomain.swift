import ProgressTreePlatform
import Synchronization

/// A tree's refresh domain without a reference count: what a read, an update's walk and a refresh use to
/// reach the representative domain and its lock. A domain is shared by every node of its tree, so a retain
/// and release of it on every read would be two atomic operations on a word all the tree's threads write.
///
/// Contract: the domain is alive while a handle to it is used, because the caller holds a node of the
/// tree: a node holds its domain (`DomainAndParentPart`), and each domain holds the one it forwards to
/// (`RefreshDomain.forward`), so the whole chain to the representative outlives the call. Checked under
/// PROGRESSTREE_INTERNAL_CHECKS: every handle made from an address is to a live domain (its first word is
/// `RefreshDomain`'s metadata).
@frozen @usableFromInline
struct UnownedDomain {
    @usableFromInline let reference: Unmanaged<RefreshDomain>

    /// A handle to `domain`, which the caller holds (or a node of its tree does).
    @inlinable @inline(__always)
    init(_ domain: RefreshDomain) { reference = .passUnretained(domain) }

    /// The domain at `address` (a word that holds one), `nil` for 0.
    @inlinable @inline(__always)
    init?(address: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            pointer.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(RefreshDomain.self)),
            "ProgressTree internal check failed: a word names no live refresh domain")
        #endif
        reference = .fromOpaque(pointer)
    }

    /// The domain's address.
    var address: UInt { UInt(bitPattern: reference.toOpaque()) }

    /// The domain as a reference (a retain): for code off the reads' paths.
    var domain: RefreshDomain { reference.takeUnretainedValue() }

    /// The domain this one forwards to, following every forward; itself when it was never merged.
    @inlinable
    var representative: UnownedDomain {
        @inline(__always) get {
            var current = self
            while let next = current.forward { current = next }
            return current
        }
    }

    /// The domain this one forwards to directly, `nil` when it was never merged.
    @inlinable
    var forward: UnownedDomain? {
        @inline(__always) get {
            UnownedDomain(address: reference._withUnsafeGuaranteedRef { $0.forward.address.load(ordering: .acquiring) })
        }
    }

    // MARK: The reader hint (`RefreshDomain.lastReader`)

    /// Records a clean read: only when no reader is recorded since the last path refresh (the reader that
    /// polls after every update), so that a clean read costs one more load and no thread lookup otherwise.
    @inlinable @inline(__always)
    func noteCleanRead() {
        representative.reference._withUnsafeGuaranteedRef { domain in
            if domain.lastReader.load(ordering: .relaxed) == 0 { RefreshDomain.recordReader(in: domain) }
        }
    }

    /// Records that a node of the tree was read by this thread (a read that refreshed): a store only when
    /// the hint changes.
    @inline(__always)
    func noteRead() {
        let reader = CurrentThread.identifier
        representative.reference._withUnsafeGuaranteedRef { domain in
            if domain.lastReader.load(ordering: .relaxed) != reader {
                domain.lastReader.store(reader, ordering: .relaxed)
            }
        }
    }

    /// Whether this thread is the last reader recorded in this domain (not its representative).
    @inline(__always)
    var isLastReadByThisThread: Bool {
        reference._withUnsafeGuaranteedRef { $0.lastReader.load(ordering: .relaxed) == CurrentThread.identifier }
    }

    // MARK: The lock

    /// Runs `body` under the lock of the representative, with its scratch buffers (the proof of holding it).
    /// A merge may forward the representative between the look-up and the lock: then it follows the forward.
    func withRepresentativeLock<Result>(_ body: (inout RefreshScratch) -> Result) -> Result {
        var domain = representative
        while true {
            var result: Result?
            domain.reference._withUnsafeGuaranteedRef { locked in
                locked.lock.withLock { result = domain.unlessForwarded(locked, &$0, body) }
            }
            if let result { return result }
            domain = domain.representative
        }
    }

    /// Runs `body` under the representative's lock if nobody holds it, and returns `nil` otherwise: for
    /// updates, which never wait for a refresh.
    func withRepresentativeLockIfAvailable<Result>(_ body: (inout RefreshScratch) -> Result) -> Result? {
        var domain = representative
        while true {
            guard let result = domain.withLockIfAvailable(body) else { return nil }
            if let result { return result }
            domain = domain.representative
        }
    }

    /// Runs `body` under this domain's own lock if nobody holds it and this domain forwards nowhere; returns
    /// `nil` when the lock was busy, `.some(nil)` when the domain was forwarded.
    @inline(__always)
    func withLockIfAvailable<Result>(_ body: (inout RefreshScratch) -> Result) -> Result?? {
        var result: Result?
        let locked: Bool = reference._withUnsafeGuaranteedRef { domain in
            domain.lock.withLockIfAvailable { result = unlessForwarded(domain, &$0, body) } != nil
        }
        return locked ? .some(result) : nil
    }

    /// Under `locked`'s lock (this domain's): runs `body` with the lock's `scratch`, recording this domain as
    /// its lender (PROGRESSTREE_INTERNAL_CHECKS), unless the domain was forwarded meanwhile (`nil` then).
    @inline(__always)
    private func unlessForwarded<Result>(
        _ locked: RefreshDomain, _ scratch: inout RefreshScratch, _ body: (inout RefreshScratch) -> Result
    ) -> Result? {
        guard !locked.isForwarded else { return nil }
        #if PROGRESSTREE_INTERNAL_CHECKS
        scratch.lender = address
        #endif
        return body(&scratch)
    }

    /// Clears the reader hint of this domain: an update refreshed a path.
    func clearLastReader() { reference._withUnsafeGuaranteedRef { $0.lastReader.store(0, ordering: .relaxed) } }

    // MARK: Walks

    /// Registers a walk up from a node of this domain's tree, in its representative (`RefreshDomain.Walk`).
    @inline(__always)
    func enterWalk() -> RefreshDomain.Walk {
        while true {
            let domain = representative
            if let parity = domain.reference._withUnsafeGuaranteedRef({ $0.registerWalk() }) {
                return RefreshDomain.Walk(domain: domain, parity: parity)
            }
        }
    }

    /// Ends a walk registered in this domain with `parity`.
    func endWalk(parity: UInt64) { reference._withUnsafeGuaranteedRef { $0.addWalk(parity, -1) } }

    /// Waits for the walks registered in this domain or a domain it forwards to
    /// (`RefreshDomain.waitForWalksAlongForwards()`).
    func waitForWalksAlongForwards() { reference._withUnsafeGuaranteedRef { $0.waitForWalksAlongForwards() } }
}
