#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import CProgressTreePlatform
import Dispatch

// What the model calls on a hot path is `public` and `@inlinable` (see `Lock` for why not `package`).

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

    /// Names the calling thread (at most 15 bytes on Linux), as `top -H` and debuggers show it.
    package static func setName(_ name: String) {
        progresstree_name_thread(name)
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
        // The destructor's argument is optional on Linux, not on Darwin: `releaseSlotObject` takes either.
        let result = pthread_key_create(&key) { pointer in releaseSlotObject(pointer) }
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
        releaseSlotObject(previous)
    }
}

/// Releases the object a `ThreadLocalReference` slot held (retained by `set`), if any.
private func releaseSlotObject(_ pointer: UnsafeMutableRawPointer?) {
    if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
}

/// A thread of its own for work that waits for as long as it lasts.
package enum DetachedThread {
    /// The closure a thread started by `start` runs (retained across `pthread_create`).
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread: the streaming module's reactor loop, and a process's wait
    /// where the system gives no descriptor for it. On a dispatch queue they would hold threads of the
    /// shared pool (which Swift concurrency uses too) for as long as they last.
    package static func start(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let result = progresstree_start_detached_thread(
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        if result != 0 {
            // No thread to be had: run it on the shared pool rather than not at all.
            let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
            DispatchQueue.global().async { body.run() }
        }
    }
}
