import CProgressTreePlatform
import Synchronization

/// `Synchronization.Mutex`, with critical sections that ThreadSanitizer can see.
///
/// On Linux, `Mutex` locks through a futex in the Synchronization library, which is not built with
/// ThreadSanitizer's instrumentation, so under `--sanitize=thread` the ordering the lock provides is
/// invisible and every access to the protected state is reported as a race. This wrapper tells the
/// sanitizer about each critical section (`__tsan_acquire` after locking, `__tsan_release` before
/// unlocking). The two functions are looked up once in the running process, by a constructor that runs
/// when the image is loaded (CProgressTreePlatform's `progresstree_sanitizer_annotations_found`): without
/// the sanitizer they are absent and each lock pays a load and an untaken branch, with no check of a lazy
/// initialization.
///
/// Used for every lock of the package (library, terminal module and tests), so that the concurrency tests
/// run clean under ThreadSanitizer without suppressions.
///
/// `public` and `@inlinable`, though no product exports this module: Swift 6.3 does not inline or
/// specialize a `package` declaration in another module, even an `@inlinable` one, and an unspecialized
/// generic lock costs the model about 770 instructions per child's life cycle (1,750 against 979,
/// `Benchmarks/instructions.sh`). Declared `public`, each module that locks gets it specialized for its
/// value and inlined, as if `Lock` were declared there. Not API: a program cannot depend on this module.
public struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline
    let mutex: Mutex<Value>

    /// A lock guarding `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock` does.
    @inlinable @inline(__always)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
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
    @inlinable @inline(__always)
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
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
@usableFromInline
enum ThreadSanitizerAnnotations {
    @usableFromInline
    typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    @usableFromInline
    struct Functions {
        @usableFromInline let acquire: Annotation
        @usableFromInline let release: Annotation

        @inlinable
        init(acquire: Annotation, release: Annotation) {
            self.acquire = acquire
            self.release = release
        }
    }

    /// The functions, found once per process when the image is loaded; `nil` without the sanitizer. A C
    /// global rather than a `static let`: a Swift global's every access checks that it is initialized (a
    /// call to `swift_once`), which every critical section of the package paid.
    @inlinable
    static var available: Functions? {
        @inline(__always) get {
            let found = progresstree_sanitizer_annotations_found()
            // Both set or neither (the constructor): one test.
            guard let acquire = found.acquire else { return nil }
            return Functions(acquire: acquire, release: found.release.unsafelyUnwrapped)
        }
    }
}
