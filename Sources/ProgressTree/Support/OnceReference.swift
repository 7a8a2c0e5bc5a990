import Synchronization

/// A strong reference that is set at most once and read without a lock: `Synchronization`'s
/// `AtomicLazyReference`, specialized in this module.
///
/// `AtomicLazyReference.load()` is not inlinable, and its generic code looks its metadata up at every call
/// (hundreds of instructions); this one compiles to one atomic load. Memory order: `storeIfNil` publishes
/// the instance with a releasing compare-and-exchange, and `load` reads it with an acquiring load, so the
/// instance's initialization is visible to whoever loads it.
///
/// Contract: `address` is 0 or the address of an instance this reference retained (released in `deinit`),
/// so an address loaded from it names a live instance while the owner of this reference is alive (readers
/// that skip the reference count, such as `UnownedDomain.forward`, rely on it). Checked under
/// PROGRESSTREE_INTERNAL_CHECKS: what `load` reads is a live instance of `Instance`'s class.
@usableFromInline
struct OnceReference<Instance: AnyObject & Sendable>: ~Copyable, Sendable {
    @usableFromInline let address = Atomic<UInt>(0)

    init() {}

    @inline(__always)
    func load() -> Instance? {
        guard let pointer = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) else { return nil }
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            pointer.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(Instance.self)),
            "ProgressTree internal check failed: a once-set reference names no live \(Instance.self)")
        #endif
        return Unmanaged<Instance>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Stores `instance` if nothing is stored yet; returns what is stored then.
    func storeIfNil(_ instance: Instance) -> Instance {
        let retained = Unmanaged.passRetained(instance)
        let (exchanged, _) = address.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        if exchanged { return instance }
        retained.release()
        return load().unsafelyUnwrapped
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) {
            Unmanaged<Instance>.fromOpaque(pointer).release()
        }
    }
}
