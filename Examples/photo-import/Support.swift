import Synchronization

/// Counts Ctrl-C presses.
final class InterruptCount: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
