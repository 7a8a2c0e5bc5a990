import Synchronization

/// A strong reference that is set at most once and read without a lock: `Synchronization`'s
/// `AtomicLazyReference`, specialized in this module.
///
/// `AtomicLazyReference.load()` is not inlinable, and its generic code looks its metadata up at every call
/// (hundreds of instructions); this one compiles to one atomic load. Memory order: `storeIfNil` publishes
/// the instance with a releasing compare-and-exchange, and `load` reads it with an acquiring load, so the
/// instance's initialization is visible to whoever loads it.
@usableFromInline
struct OnceReference<Instance: AnyObject & Sendable>: ~Copyable, Sendable {
    @usableFromInline let address = Atomic<UInt>(0)

    init() {}

    @inline(__always)
    func load() -> Instance? {
        let bits = address.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Instance>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The stored instance without retaining it: valid while the owner of this reference is alive.
    @inlinable @inline(__always)
    func unretained() -> Unmanaged<Instance>? {
        let bits = address.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Instance>.fromOpaque(pointer)
    }

    /// Stores `instance` if nothing is stored yet; returns what is stored then.
    func storeIfNil(_ instance: Instance) -> Instance {
        let retained = Unmanaged.passRetained(instance)
        let bits = UInt(bitPattern: retained.toOpaque())
        let (exchanged, original) = address.compareExchange(
            expected: 0, desired: bits, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return instance }
        retained.release()
        return Unmanaged<Instance>.fromOpaque(UnsafeRawPointer(bitPattern: original)!).takeUnretainedValue()
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) {
            Unmanaged<Instance>.fromOpaque(pointer).release()
        }
    }
}
