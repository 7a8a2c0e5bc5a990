import Synchronization

/// A node's refresh domain (`RefreshDomain`) and its parent part (`ChildSums`), in one word: a leaf (most
/// nodes) needs only the domain, and a node with children holds its domain in its parent part.
///
/// The word holds one of:
/// - 0: neither yet;
/// - a domain's address (bit 0 clear): the node's domain, retained by the word;
/// - a parent part's address with bit 0 set (`partTag`; objects are aligned to 16 bytes): the node's parent
///   part, retained by the word, whose `domain` (retained by the part) is the node's domain.
///
/// It only moves forward, each step one compare-and-exchange: 0 to a domain (`storeDomainIfNone`), then a
/// domain to a part holding that same domain (`partCreatingIfNone`), which takes over the word's reference
/// to it. So a node's domain, once set, never changes, and whatever a reader loads stays valid, without a
/// reference count, while the node is alive: a domain loaded before the word moved on is the part's, and the
/// part lives as long as the node. Loads are acquiring and the exchanges releasing, so that an instance's
/// initialization is visible to whoever loads it (as `OnceReference`).
@usableFromInline
struct DomainAndParentPart: ~Copyable, Sendable {
    @usableFromInline let word = Atomic<UInt>(0)

    /// Bit 0: the word holds a parent part.
    @usableFromInline static var partTag: UInt { 1 }

    init() {}

    /// The node's domain without retaining it, `nil` before it has one: valid while the node is alive.
    ///
    /// A parent's part first, as the code falls through: the clean read inlines this, and what a program
    /// reads over and over is a root. (Its loop was bound by taken branches: a taken branch more for a
    /// parent measured 1.1 → 1.4 ns a clean read.)
    @inlinable @inline(__always)
    func unretainedDomain() -> Unmanaged<RefreshDomain>? {
        let bits = word.load(ordering: .acquiring)
        if _fastPath(bits & Self.partTag != 0) {
            return Self.part(bits)._withUnsafeGuaranteedRef { $0.unretainedDomain }
        }
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged.fromOpaque(pointer)
    }

    /// The node's domain, `nil` before it has one.
    func loadDomain() -> RefreshDomain? { unretainedDomain()?.takeUnretainedValue() }

    /// The node's parent part without retaining it, `nil` before its first child: valid while the node is
    /// alive.
    @inline(__always)
    func unretainedPart() -> Unmanaged<ChildSums>? {
        let bits = word.load(ordering: .acquiring)
        guard bits & Self.partTag != 0 else { return nil }
        return Self.part(bits)
    }

    /// The node's parent part, `nil` before its first child.
    func loadPart() -> ChildSums? { unretainedPart()?.takeUnretainedValue() }

    /// Stores `domain` if the node has no domain yet; returns the node's domain then.
    func storeDomainIfNone(_ domain: RefreshDomain) -> RefreshDomain {
        let retained = Unmanaged.passRetained(domain)
        let (exchanged, original) = word.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        if exchanged { return domain }
        retained.release()
        return Self.domain(original).takeUnretainedValue()
    }

    /// The node's parent part, created with its domain if it has none yet; returns it. The node has its
    /// domain already (a node gets it before its first child: `attachFreshChild`, `RefreshDomain.merge`).
    func partCreatingIfNone() -> ChildSums {
        var bits = word.load(ordering: .acquiring)
        if bits & Self.partTag != 0 { return Self.part(bits).takeUnretainedValue() }
        guard bits != 0 else { preconditionFailure("a node gets its refresh domain before its parent part") }
        let part = ChildSums(domain: Self.domain(bits).takeUnretainedValue())
        let retained = Unmanaged.passRetained(part)
        let tagged = UInt(bitPattern: retained.toOpaque()) | Self.partTag
        while true {
            let (exchanged, original) = word.compareExchange(
                expected: bits, desired: tagged, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if exchanged {
                // The part holds the domain now; the word's reference to it goes.
                Self.domain(bits).release()
                return part
            }
            bits = original
            if bits & Self.partTag != 0 {
                retained.release()  // another thread's part won
                return Self.part(bits).takeUnretainedValue()
            }
        }
    }

    /// The part `bits` names; bit 0 is set. Untagged by a subtraction rather than a mask, so that the
    /// compiler folds it into the offset of the load that follows (a clean read of a parent: one
    /// instruction fewer).
    @inlinable @inline(__always)
    static func part(_ bits: UInt) -> Unmanaged<ChildSums> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits &- partTag).unsafelyUnwrapped)
    }

    /// The domain `bits` names: its own, or its part's. `bits` is not 0.
    static func domain(_ bits: UInt) -> Unmanaged<RefreshDomain> {
        if bits & partTag != 0 { return part(bits)._withUnsafeGuaranteedRef { $0.unretainedDomain } }
        return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    }

    deinit {
        let bits = word.load(ordering: .acquiring)
        if bits & Self.partTag != 0 {
            Self.part(bits).release()
        } else if let pointer = UnsafeRawPointer(bitPattern: bits) {
            Unmanaged<RefreshDomain>.fromOpaque(pointer).release()
        }
    }
}
