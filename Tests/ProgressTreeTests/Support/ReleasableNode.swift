import ProgressTree
import Synchronization

/// A strong reference another thread (or a handler) can drop: the node's last one, so that its `deinit`
/// runs where `release()` is called. Atomic only (ThreadSanitizer sees it).
final class ReleasableNode: Sendable {
    private let address = Atomic<UInt>(0)
    init(_ node: ProgressNode) {
        address.store(UInt(bitPattern: Unmanaged.passRetained(node).toOpaque()), ordering: .releasing)
    }
    /// Drops the reference (once).
    func release() {
        let old = address.exchange(0, ordering: .acquiringAndReleasing)
        guard let pointer = UnsafeRawPointer(bitPattern: old) else { return }
        Unmanaged<ProgressNode>.fromOpaque(pointer).release()
    }
    deinit { release() }
}
