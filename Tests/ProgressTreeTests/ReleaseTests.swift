import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// An object that cancels its node when it goes away: a common way to tie work to its owner's lifetime.
/// Captured by one of the node's own handlers, it forms a cycle (node → handler → object → node) that
/// replacing or clearing the handler breaks, so its `deinit` runs inside the setter.
private final class CancelsNodeOnDeinit: Sendable {
    let node: ProgressNode
    init(_ node: ProgressNode) { self.node = node }
    deinit { node.cancel() }
}

/// Reports, from its `deinit`, the fraction of a node: user code that reads the tree while going away.
private final class ReadsFractionOnDeinit: Sendable {
    let node: ProgressNode
    init(_ node: ProgressNode) { self.node = node }
    deinit { _ = node.fractionCompleted }
}

/// A weak reference to a node, to check that a node was released.
private struct WeakNode {
    weak var node: ProgressNode?
}

/// What a node lets go of, and where: what the library releases (a replaced handler, a finished child, a
/// whole tree) is released after every lock, since a `deinit` is user code that may use the tree again, and
/// releasing a deep tree needs no deep stack (Docs/Architecture.md, "Lock order").
final class ReleaseTests: XCTestCase {
    // MARK: A replaced or cleared handler

    /// Replacing or clearing a handler releases the old closure after the node's lock, so the `deinit` of
    /// whatever it held last may use the node: here `cancel()` on the same node, which takes its lock.
    func test_replacing_or_clearing_a_handler_releases_what_it_captured_outside_the_nodes_lock() {
        typealias Handler = (@Sendable () -> Void)?
        let handlers: [(String, ReferenceWritableKeyPath<ProgressNode, Handler>)] = [
            ("cancellationHandler", \.cancellationHandler), ("pausingHandler", \.pausingHandler),
            ("resumingHandler", \.resumingHandler),
        ]
        for (name, handler) in handlers {
            for replacement: Handler in [nil, {}] {
                let node = ProgressNode(totalUnitCount: 1)
                do {
                    let owner = CancelsNodeOnDeinit(node)
                    node[keyPath: handler] = { _ = owner }
                }
                node[keyPath: handler] = replacement  // drops the last reference to `owner`, which cancels `node`
                XCTAssertTrue(node.isCancelled, "\(name) \(replacement == nil ? "cleared" : "replaced")")
            }
        }
    }

    // MARK: Releasing deep trees

    /// Releasing the root of an unfinished chain releases its levels one after the other, not each inside the
    /// `deinit` of the level above: a 10,000-deep chain is released on a 512 KB stack (the size of secondary
    /// threads and Dispatch workers on Apple platforms) in a debug build, as it is read, finished, cancelled and
    /// described without recursion.
    func test_releasing_an_unfinished_chain_of_depth_10000_on_a_512_KB_stack() {
        let depth = 10_000
        let released = DispatchSemaphore(value: 0)
        let leafWasReleased = Atomic<Bool>(false)
        let thread = Thread {
            weak var weakLeaf: ProgressNode?
            do {
                let leaf = ProgressNode(totalUnitCount: 2)
                weakLeaf = leaf
                var top = leaf
                for _ in 1..<depth {
                    let parent = ProgressNode(totalUnitCount: 1)
                    parent.addChild(top, withPendingUnitCount: 1)
                    top = parent
                }
                leaf.advance()  // half done at every level, nothing finished: the whole chain stays attached
                _ = top.fractionCompleted
            }  // the root, and with it the chain, is released here
            leafWasReleased.store(weakLeaf == nil, ordering: .relaxed)
            released.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        XCTAssertEqual(released.wait(timeout: .now() + 120), .success)
        XCTAssertTrue(leafWasReleased.load(ordering: .relaxed), "every level of the chain must be released")
    }

    /// The same for a wide and deep tree released on the test's own thread: every node goes away.
    func test_releasing_a_wide_and_deep_tree_releases_every_node() {
        var weakLeaves: [WeakNode] = []
        do {
            let root = ProgressNode(totalUnitCount: 10)
            var level = [root]
            for _ in 0..<6 {
                var next: [ProgressNode] = []
                for node in level {
                    for _ in 0..<4 { next.append(ProgressNode(totalUnitCount: 2, parent: node, pendingUnitCount: 1)) }
                }
                level = next
            }
            weakLeaves = level.map { WeakNode(node: $0) }
            level[0].advance()
            XCTAssertGreaterThan(root.fractionCompleted, 0)
        }
        XCTAssertEqual(weakLeaves.count, 4_096)
        XCTAssertTrue(weakLeaves.allSatisfy { $0.node == nil })
    }

    // MARK: A finished child held by a read

    /// A child that finishes while a read of its tree runs is retired into its parent's dirty queue, which
    /// holds a reference to it until a read drains it. That read may hold the last reference: it must drop
    /// it after the domain lock, since the child's `deinit` (and that of everything it held: handlers, user
    /// info) is user code, which may read the tree again ("Recursive call to lock Mutex" otherwise).
    ///
    /// Deterministic: a helper thread holds the tree's domain lock (as a running read does) while the child
    /// finishes, so the finish retires it into the queue; the test drops its own references, lets the lock
    /// go, and reads.
    func test_a_finished_child_released_last_by_a_read_is_deinitialized_outside_the_domain_lock() {
        let root = ProgressNode(totalUnitCount: 10)
        let sibling = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        let lockHeld = DispatchSemaphore(value: 0)
        let releaseLock = DispatchSemaphore(value: 0)
        let lockReleased = DispatchSemaphore(value: 0)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 5)
            weakChild = child
            let reporter = ReadsFractionOnDeinit(root)
            child.cancellationHandler = { _ = reporter }  // the child is the reporter's last owner
            XCTAssertEqual(root.fractionCompleted, 0)
            child.advance()
            sibling.advance()
            let domain = root.domain
            Thread.detachNewThread {
                domain.withRepresentativeLock { _ in
                    lockHeld.signal()
                    releaseLock.wait()
                }
                lockReleased.signal()
            }
            lockHeld.wait()
            child.completedUnitCount = 2  // credited at once; the child waits in the root's queue
            XCTAssertEqual(root.completedUnitCount, 5)
            XCTAssertEqual(root.queuedChildCount, 2)
        }
        XCTAssertNotNil(weakChild, "the root's queue holds the finished child until a read drains it")
        releaseLock.signal()
        lockReleased.wait()
        // The root's 5 units of the finished child, and a quarter of the sibling's 1.
        XCTAssertEqual(root.fractionCompleted, 0.525, accuracy: 1e-12)
        XCTAssertNil(weakChild, "the read let the child go, after the domain lock")
    }
}
