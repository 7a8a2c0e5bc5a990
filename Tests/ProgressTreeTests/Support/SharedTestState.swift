import Synchronization

/// A flag shared by the threads of a test. Only `Atomic` (compiled into the test module, so ThreadSanitizer
/// sees it), no `Mutex`: on Linux `Synchronization.Mutex` locks with raw futexes that ThreadSanitizer
/// cannot see, so a `Mutex` in a test itself would be reported as a race.
final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)
    func set() { storage.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }
}

/// A counter shared by the threads of a test (see `Flag`).
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    func add(_ amount: Int = 1) { storage.add(amount, ordering: .sequentiallyConsistent) }
    var count: Int { storage.load(ordering: .sequentiallyConsistent) }
}
