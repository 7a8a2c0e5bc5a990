import Synchronization

/// A flag shared by the threads of a test. Only `Atomic` (inlined into the code that uses it, so ThreadSanitizer
/// sees it), no `Mutex`: on Linux `Synchronization.Mutex` locks with raw futexes that ThreadSanitizer
/// cannot see, so a `Mutex` in a test itself would be reported as a race.
package final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)
    package init() {}
    package func set() { storage.store(true, ordering: .sequentiallyConsistent) }
    package var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }
}

/// A counter shared by the threads of a test (see `Flag`).
package final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    package init() {}
    package func add(_ amount: Int = 1) { storage.add(amount, ordering: .sequentiallyConsistent) }
    package var count: Int { storage.load(ordering: .sequentiallyConsistent) }
}
