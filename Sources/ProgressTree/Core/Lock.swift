#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import Synchronization

/// `Synchronization.Mutex`, with critical sections that ThreadSanitizer can see.
///
/// On Linux, `Mutex` locks through a futex in the Synchronization library, which is not built with
/// ThreadSanitizer's instrumentation, so under `--sanitize=thread` the ordering the lock provides is
/// invisible and every access to the protected state is reported as a race. This wrapper tells the
/// sanitizer about each critical section (`__tsan_acquire` after locking, `__tsan_release` before
/// unlocking). The two functions are looked up once in the running process: without the sanitizer they
/// are absent and each lock pays one load and one untaken branch.
///
/// Used for every lock of the package (library, terminal module and tests), so that the concurrency tests
/// run clean under ThreadSanitizer without suppressions.
package struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    fileprivate let mutex: Mutex<Value>

    package init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock` does.
    @inline(__always)
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        guard let annotations = ThreadSanitizerAnnotations.available else {
            return try mutex.withLock(body)
        }
        // The mutex's address, taken without touching the value: the sanitizer must learn of the acquire
        // before the first access to the value inside the critical section.
        let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            annotations.acquire(address)
            defer { annotations.release(address) }
            return try body(&value)
        }
    }
}

extension Lock where Value: ~Copyable {
    /// Runs `body` with exclusive access to the value if the lock is free, and returns `nil` without
    /// waiting otherwise, as `Mutex.withLockIfAvailable` does.
    @inline(__always)
    package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard let annotations = ThreadSanitizerAnnotations.available else {
            return try mutex.withLockIfAvailable(body)
        }
        let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            annotations.acquire(address)
            defer { annotations.release(address) }
            return try body(&value)
        }
    }
}

/// The ThreadSanitizer runtime's annotation functions, when the process runs under it.
enum ThreadSanitizerAnnotations {
    typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    struct Functions: Sendable {
        let acquire: Annotation
        let release: Annotation
    }

    static let available: Functions? = {
        guard let process = dlopen(nil, RTLD_LAZY) else { return nil }
        guard let acquire = dlsym(process, "__tsan_acquire"), let release = dlsym(process, "__tsan_release")
        else { return nil }
        return Functions(
            acquire: unsafeBitCast(acquire, to: Annotation.self), release: unsafeBitCast(release, to: Annotation.self))
    }()
}
