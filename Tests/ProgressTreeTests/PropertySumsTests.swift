import Dispatch
@testable import ProgressTree
import Synchronization
import XCTest

/// Work in progress: a child that leaves takes it with it.
private enum Busy: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
    static func summaryLeftBehind(_ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? { nil }
}

private struct Broken: Error {}

/// Property summaries (Summaries/), case by case, beside the random
/// runs of `ModelBasedTests` (whose bursts set values among finishes and failures with no read in
/// between): a member that leaves a node before a value set's walk passes it, value sets that pass nodes
/// without their locks while siblings come and go on another thread, and children without properties,
/// which must leave nothing to drain. `PhotosSkipped` is the sum every outcome
/// keeps (Support/PhotosSkipped.swift); `Busy`, a count that leaves with its child.
final class PropertySumsTests: XCTestCase {
    /// A sibling leaves a node that the walk of a later value set passes, before any read: the node's kept
    /// summary counts the sibling once (what it left behind, not also its last contribution), and the
    /// node's own entries (what the sibling left) are counted by the walk.
    func test_a_value_set_after_a_sibling_left_counts_the_sibling_once() {
        let root = ProgressNode(totalUnitCount: 1)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        let first = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        let second = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        first[PhotosSkipped.self] = 3
        first[Busy.self] = 5
        second[PhotosSkipped.self] = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 4)  // both members now, each with its slot
        XCTAssertEqual(root.summary(of: Busy.self), 5)
        first.completedUnitCount = 1  // leaves 3 skips behind in the folder, takes its 5 busy with it
        second[PhotosSkipped.self] = 4
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 7)
        XCTAssertEqual(root.summary(of: Busy.self), 0)
        // The folder holds what `first` left: later walks through it count that too.
        second[PhotosSkipped.self] = 6
        second[Busy.self] = 2
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 9)
        XCTAssertEqual(root.summary(of: Busy.self), 2)
        XCTAssertEqual(folder.summary(of: PhotosSkipped.self), 9)
        let third = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        third[PhotosSkipped.self] = 10
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 19)
    }

    /// One thread sets values on a leaf 8 deep, whose walks pass its ancestors without their locks, while
    /// another attaches siblings at every level of the path and gives them values (each walks up too), and
    /// lets three in four go: finished or failed, they take their busy with them, and, at the even levels,
    /// leave their skips behind (so the odd levels hold no entry, and stay passable without their lock while
    /// members leave them). A third thread reads. Once all are done, every summary on the path is exact:
    /// no leave counted twice, no contribution of a sibling that stays lost (a sibling made where one
    /// that left lived takes none of its slot).
    func test_value_sets_that_pass_ancestors_while_their_siblings_come_and_go_are_exact() {
        let depth = 8
        let rounds = 4_000
        let root = ProgressNode(totalUnitCount: 1)
        var chain = [root]
        for _ in 1..<depth { chain.append(ProgressNode(totalUnitCount: 1, parent: chain.last!, pendingUnitCount: 0)) }
        let path = chain
        let leaf = ProgressNode(totalUnitCount: 1, parent: path.last!, pendingUnitCount: 0)
        leaf[PhotosSkipped.self] = 0
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 0)  // the path keeps summaries from here on
        let staying = Mutex<[ProgressNode]>([])  // kept alive and attached to the end
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            switch thread {
            case 0:
                for value in 1...rounds {
                    leaf[PhotosSkipped.self] = value
                    leaf[Busy.self] = value
                }
            case 1:
                var kept: [ProgressNode] = []
                for round in 0..<rounds {
                    let level = round % depth
                    let sibling = ProgressNode(totalUnitCount: 1, parent: path[level], pendingUnitCount: 0)
                    sibling[Busy.self] = 1
                    if level % 2 == 0 { sibling[PhotosSkipped.self] = 1 }
                    switch round / depth % 4 {
                    case 0: kept.append(sibling)
                    case 1: sibling.fail(Broken())
                    default: sibling.completedUnitCount = 1
                    }
                }
                staying.withLock { $0 = kept }
            default:
                for round in 0..<(rounds / 4) { _ = path[round % depth].summary(of: Busy.self) }
            }
        }
        XCTAssertEqual(staying.withLock(\.count), rounds / 4)
        for (level, node) in path.enumerated() {
            var skips = rounds
            var busy = rounds
            for round in 0..<rounds where round % depth >= level {
                if round % depth % 2 == 0 { skips += 1 }
                if round / depth % 4 == 0 { busy += 1 }
            }
            XCTAssertEqual(node.summary(of: PhotosSkipped.self), skips, "level \(level)")
            XCTAssertEqual(node.summary(of: Busy.self), busy, "level \(level)")
        }
        #if PROGRESSTREE_INTERNAL_CHECKS
        root.checkInvariants()
        #endif
    }

    /// Children that never contributed a property come and go under a node whose summary holds one: the
    /// node keeps nothing for them (no entry, no leaf), and its summary stays exact.
    func test_children_without_a_property_leave_nothing_to_drain() {
        let root = ProgressNode(totalUnitCount: 1)
        let tagged = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        tagged[PhotosSkipped.self] = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 1)  // `tagged` is a member of the root's summaries
        for _ in 0..<10_000 {
            let child = ProgressNode(totalUnitCount: 1)
            root.addChild(child, withPendingUnitCount: 0)
            child.completedUnitCount = 1
        }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 1)
        XCTAssertEqual(leaves(of: root), 1, "one leaf, the tagged child's")
        tagged.completedUnitCount = 1  // leaves what it counted in the root
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 1, "left behind, counted once")
        XCTAssertEqual(leaves(of: root), 0, "no member left: no leaf kept")
        #if PROGRESSTREE_INTERNAL_CHECKS
        root.checkInvariants()
        #endif
    }

    /// The leaves of `node`'s column of `PhotosSkipped`.
    private func leaves(of node: ProgressNode) -> Int {
        node.domain.withRepresentativeLock { scratch in
            node.domainAndPart.loadPart()?.column(for: ObjectIdentifier(PhotosSkipped.self), scratch)?.leafCount ?? 0
        }
    }
}
