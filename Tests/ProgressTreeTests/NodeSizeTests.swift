import ProgressTreePlatform
import Synchronization
import XCTest

@testable import ProgressTree

#if canImport(Glibc)
/// glibc's `malloc_usable_size(3)`: the bytes malloc gave a block, less its own 8.
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeRawPointer) -> Int
#endif

/// The node's size is part of its design (Docs/Architecture.md, "What a node holds"): 102 bytes with the
/// object header, which malloc (adding 8 and rounding to 16) serves from its 112-byte class. A field more, or
/// 3 bytes more, would take the 128-byte class: 16 bytes a node, which issue 35's memory goal (128 B a live
/// node, the parent's contribution entry included) cannot spare.
final class NodeSizeTests: XCTestCase {
    #if canImport(Glibc)
    func test_every_kind_of_node_is_served_from_mallocs_112_byte_class() {
        let root = ProgressNode(totalUnitCount: 10)
        let fresh = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        let added = ProgressNode.discreteProgress(totalUnitCount: 5)
        root.addChild(added, withPendingUnitCount: 1)
        let running = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        running.advance(by: 1)
        XCTAssertEqual(root.fractionCompleted, 0.05)
        // glibc's malloc gives 104 usable bytes in its 112-byte class (128 would give 120); ThreadSanitizer's
        // allocator reports the size asked for, the node's 102.
        let expected = [102, 104]
        for (name, node) in [("root", root), ("fresh", fresh), ("added", added), ("running", running)] {
            let usable = mallocUsableSize(Unmanaged.passUnretained(node).toOpaque())
            XCTAssertTrue(expected.contains(usable), "\(name): \(usable) usable bytes, expected one of \(expected)")
        }
    }
    #endif

    /// The words that an update and a read of a tree touch come first, `domainAndPart` among them (and the
    /// private `contributorIndex`, beside `flags` at 36), and end at
    /// byte 72: 40 bytes before the next block of malloc's 112-byte class begins, so that whatever their
    /// alignment to 16 they never share a 64-byte cache line with the next node's (`CacheLinePadding`).
    func test_the_words_updates_and_reads_touch_end_at_byte_72() {
        let node = ProgressNode(totalUnitCount: 1)
        let offsets = [
            ("completedStorage", offset(of: node.completedStorage, in: node)),
            ("totalStorage", offset(of: node.totalStorage, in: node)),
            ("flags", offset(of: node.flags, in: node)),
            ("cachedFraction", offset(of: node.cachedFraction, in: node)),
            ("parentAddress", offset(of: node.parentAddress, in: node)),
            ("pendingInParent", offset(of: node.pendingInParent, in: node)),
            ("domainAndPart", offset(of: node.domainAndPart, in: node)),
            ("queueNext", offset(of: node.queueNext, in: node)),
            ("freshNextOrSlot", offset(of: node.freshNextOrSlot, in: node)),
            ("state", offset(of: node.state, in: node)),
            ("controlFlags", offset(of: node.controlFlags, in: node)),
        ]
        XCTAssertEqual(offsets.map(\.0), offsets.sorted { $0.1 < $1.1 }.map(\.0), "declaration order is the layout")
        XCTAssertEqual(offsets.map(\.1), [16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 101])
    }

    #if canImport(Glibc)
    /// A parent part and a domain, every word of which a refresh touches, end with the 64 bytes of
    /// `CacheLinePadding`: its last stored property, up to the end of malloc's block.
    func test_a_parent_part_and_a_domain_end_with_64_bytes_nothing_touches() {
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        child.advance(by: 1)
        XCTAssertEqual(root.fractionCompleted, 0.25)
        let part = root.domainAndPart.loadPart()!
        let domain = part.domain.domain
        // The padding ends the object: after it, only what malloc rounds the block up to (less than 16 bytes:
        // glibc's usable size is the block less its 8, ThreadSanitizer's the size asked for). The offsets
        // depend on the build (the domain keeps more under PROGRESSTREE_INTERNAL_CHECKS): 144 in a part and
        // 104 in a domain in a release build.
        for (name, object, padding) in [
            ("part", part as AnyObject, offset(of: part.trailingPadding, in: part)),
            ("domain", domain, offset(of: domain.trailingPadding, in: domain)),
        ] {
            let usable = mallocUsableSize(Unmanaged.passUnretained(object).toOpaque())
            XCTAssertTrue(
                (0..<16).contains(usable - (padding + 64)),
                "the \(name)'s padding at \(padding), \(usable) usable bytes: something after the padding")
            XCTAssertEqual(padding % 8, 0, name)
        }
    }
    #endif

    /// Two trees built by one thread, as a program that hands each worker a tree builds them, again and again
    /// so that malloc hands each the other's freed blocks: no 64-byte cache line holds words that updates and
    /// reads of both trees touch (a node's first 72 bytes, a parent part's and a domain's up to their
    /// padding), wherever malloc put the blocks.
    func test_two_trees_built_by_one_thread_share_no_cache_line_their_updates_touch() {
        var shared: [String] = []
        for round in 0..<12 {
            let trees = (0..<2).map { _ in chain(depth: 8) }
            var owner: [Int: Int] = [:]  // cache line → the tree whose touched words it holds
            func claim(_ object: AnyObject, _ range: Range<Int>, tree: Int, _ what: String) {
                let base = Int(bitPattern: Unmanaged.passUnretained(object).toOpaque())
                for line in ((base + range.lowerBound) >> 6)...((base + range.upperBound - 1) >> 6) {
                    if let other = owner[line], other != tree { shared.append("round \(round): \(what)") }
                    owner[line] = tree
                }
            }
            for (tree, nodes) in trees.enumerated() {
                nodes.last!.advance(by: 1)
                XCTAssertEqual(nodes[0].fractionCompleted, 0.5)
                for (level, node) in nodes.enumerated() {
                    claim(node, 16..<72, tree: tree, "node \(level) of tree \(tree)")
                    guard let part = node.domainAndPart.loadPart() else { continue }
                    claim(part, 16..<offset(of: part.trailingPadding, in: part), tree: tree, "part \(level)")
                }
                let domain = nodes[0].domain
                claim(domain, 16..<offset(of: domain.trailingPadding, in: domain), tree: tree, "domain \(tree)")
            }
        }
        XCTAssertEqual(shared, [])
    }

    /// A root and `depth` nodes below it, one under the other, the leaf standing for 2 units.
    private func chain(depth: Int) -> [ProgressNode] {
        var nodes = [ProgressNode(totalUnitCount: 1)]
        for level in 1...depth {
            nodes.append(ProgressNode(totalUnitCount: level == depth ? 2 : 1, parent: nodes.last!, pendingUnitCount: 1))
        }
        return nodes
    }

    /// The byte offset of `field`, a stored property of `object` that is not copyable (so borrowed in place).
    private func offset<Field: ~Copyable>(of field: borrowing Field, in object: AnyObject) -> Int {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return withUnsafePointer(to: field) { UnsafeRawPointer($0) - base }
    }

    /// The lock is a 4-byte word and the state after it, aligned to 4: the extras' address in two halves
    /// and the link, 13 bytes with no padding, so that `controlFlags` takes the byte after them.
    func test_the_lock_and_its_state_pack_into_13_bytes() {
        XCTAssertEqual(MemoryLayout<NodeState>.alignment, 4)
        XCTAssertEqual(MemoryLayout<NodeState>.size, 9)
        XCTAssertEqual(MemoryLayout<Lock<NodeState>>.size, 13)
    }
}
