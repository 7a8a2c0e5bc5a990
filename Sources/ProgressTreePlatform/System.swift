#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

// The C library calls of the package's model and presentation modules, behind one wrapper each: this is
// the one file of those modules that imports the C library, so a new platform is one `#elseif` here.
// What the model calls on a hot path is `public` and `@inlinable` (see `Lock` for why not `package`).

/// Symbols of the running process (the Swift runtime's entry points, ThreadSanitizer's annotations).
package enum ProcessSymbols {
    /// The address of the symbol `name` in the running process, or `nil` where it is not exported.
    package static func address(of name: String) -> UnsafeMutableRawPointer? {
        guard let process = dlopen(nil, RTLD_LAZY) else { return nil }
        return dlsym(process, name)
    }
}

/// The calling thread.
public enum CurrentThread {
    /// A number that identifies the calling thread among the threads alive (its `pthread_t`'s bits); never 0.
    @inlinable
    public static var identifier: UInt {
        withUnsafeBytes(of: pthread_self()) { bytes in
            bytes.count >= MemoryLayout<UInt>.size
                ? bytes.loadUnaligned(as: UInt.self) : UInt(bytes.loadUnaligned(as: UInt32.self))
        }
    }

    /// Gives the processor to another thread (`sched_yield`), in a wait that spins.
    @inlinable
    public static func yield() {
        sched_yield()
    }
}

/// A reference per thread, kept in a POSIX thread-specific slot: each thread reads and sets its own, and a
/// thread's reference is released when the thread exits. Only its own thread touches a thread's object, so
/// the object needs no lock.
public struct ThreadLocalReference<Object: AnyObject>: Sendable {
    @usableFromInline
    let key: pthread_key_t

    /// A new slot, `nil` on every thread. Stops the program where the system has no key left (a few hundred
    /// a process: the package makes two).
    public init() {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(result == 0, "ProgressTree: pthread_key_create failed (\(result)); no thread-local key left")
        self.key = key
    }

    /// The calling thread's object, or `nil` (not retained: the slot holds it until `set` or the thread's end).
    @inlinable
    public var current: Object? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Replaces the calling thread's object, releasing the previous one.
    public func set(_ object: Object?) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, object.map { Unmanaged.passRetained($0).toOpaque() })
        if let previous { Unmanaged<AnyObject>.fromOpaque(previous).release() }
    }
}

/// eˣ, from the C library (the toolchain's modules have no elementary functions of their own).
@inlinable
public func exponential(_ x: Double) -> Double {
    exp(x)
}

/// eˣ − 1, exact near 0, from the C library.
@inlinable
public func exponentialMinusOne(_ x: Double) -> Double {
    expm1(x)
}
