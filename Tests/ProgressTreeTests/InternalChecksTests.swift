import Dispatch
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest

/// The core's invariants checked by code (`ProgressNode.invariantViolations()`,
/// Core/ProgressNode+Invariants.swift): they hold on a tree of every shape, and each kind of check finds a
/// state broken on purpose. Without PROGRESSTREE_INTERNAL_CHECKS the checks are compiled out: the first
/// test then checks nothing, the second is skipped.
final class InternalChecksTests: XCTestCase {
    /// Fresh and added children, a finished node held for the work below it, a failure, files and a kept file
    /// summary, an observer, and a node of 40 children (its sums adjusted incrementally), checked before and
    /// after reads.
    func test_a_tree_of_every_shape_breaks_no_invariant_read_or_not() {
        struct Broken: Error {}
        let root = ProgressNode.discreteProgress(totalUnitCount: 100)
        let folder = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 40)
        let files = (0..<3).map { index in
            let file = ProgressNode(totalUnitCount: 100, parent: folder, pendingUnitCount: 3)
            file.kind = .file
            file.advance(by: Int64(10 * index))
            return file
        }
        let added = ProgressNode.discreteProgress(totalUnitCount: 4)
        added.advance()
        root.addChild(added, withPendingUnitCount: 20)
        let wide = ProgressNode(totalUnitCount: 40, parent: root, pendingUnitCount: 30)
        let leaves = (0..<40).map { _ in ProgressNode(totalUnitCount: 1_000, parent: wide, pendingUnitCount: 1) }
        assertInvariants(root)

        _ = root.fileSummary
        assertInvariants(root)
        // Many incremental steps over 40 contributors, with reads in between.
        var random = SplitMix64(seed: 34)
        for step in 0..<2_000 {
            leaves[random.below(leaves.count)].advance(by: Int64(random.below(3)))
            if step % 7 == 0 { _ = root.fractionCompleted }
        }
        assertInvariants(root)
        // Held: the folder finishes by hand while its files run; one file fails.
        folder.completedUnitCount = 10
        XCTAssertTrue(folder.isHeld)
        files[2].fail(Broken())
        assertInvariants(root, folder)
        _ = root.fileSummary
        assertInvariants(root, folder)

        let observed = Mutex(0)
        let queue = DispatchQueue(label: "InternalChecksTests")
        let observation = added.observe(\.fractionCompleted, on: queue) { _, _ in observed.withLock { $0 += 1 } }
        added.advance()
        queue.sync {}
        assertInvariants(root)
        observation.invalidate()
        assertInvariants(root)

        for file in files.prefix(2) { file.completedUnitCount = 100 }
        XCTAssertFalse(folder.isHeld, "let go once its files ended")
        assertInvariants(root, folder)
        XCTAssertEqual(root.children.count, 2)
        _ = root.fractionCompleted
        assertInvariants(root, folder)
    }

    /// Each kind of invariant, broken on purpose and restored: a flag against the queues, a cached fraction
    /// against the counts, a contribution against the child's fraction, a kept summary against its members.
    func test_the_checks_find_a_broken_flag_fraction_contribution_and_file_summary() throws {
        try XCTSkipUnless(ProgressNode.internalChecksEnabled, "PROGRESSTREE_INTERNAL_CHECKS=1 swift test runs it")
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 5)
        child.advance()
        let sibling = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 5)
        sibling.kind = .file
        let plain = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 0)
        _ = root.fileSummary
        XCTAssertEqual(root.fractionCompleted, 0.125)
        XCTAssertEqual(root.invariantViolations(), [])

        func violations(while corrupt: () -> Void, _ restore: () -> Void) -> [String] {
            corrupt()
            defer {
                restore()
                XCTAssertEqual(root.invariantViolations(), [], "restored")
            }
            return root.invariantViolations()
        }
        func assertFound(_ found: [String], _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertTrue(found.contains { $0.contains(expected) }, "\(found)", file: file, line: line)
        }

        // A child flagged queued that its parent's queue does not hold.
        assertFound(
            violations(
                while: { _ = plain.flags.bitwiseOr(NodeFlags.queued | NodeFlags.shared, ordering: .relaxed) },
                { _ = plain.flags.bitwiseAnd(~(NodeFlags.queued | NodeFlags.shared), ordering: .relaxed) }),
            "root/2: flagged queued but not in its parent's queue")
        // A clean node whose cached fraction is not what its counts and sums give.
        assertFound(
            violations(
                while: { root.cachedFraction.store(0.5.bitPattern, ordering: .relaxed) },
                { root.cachedFraction.store(0.125.bitPattern, ordering: .relaxed) }),
            "root: clean, but its cached fraction 0.5 is not 0.125")
        // A contribution that is not the clean child's pending count × fraction (and a parent's cached
        // fraction that no longer follows from its sums).
        let domain = root.domain
        let found = violations(
            while: {
                domain.withRepresentativeLock { root.recordInSums(child, fraction: 0.5, &$0) }
            },
            { domain.withRepresentativeLock { root.recordInSums(child, fraction: 0.25, &$0) } })
        assertFound(found, "clean and unqueued, but its parent's sums hold 2.5, not 1.25")
        assertFound(found, "root: clean, but its cached fraction")
        // A contribution to the root's started summaries that is not the member's summary.
        let entry = sibling.contributorIndexNow
        XCTAssertGreaterThanOrEqual(entry, 0, "the file is a member of the root's summaries")
        func setContribution(_ summary: ProgressNode.FileSummary) {
            domain.withRepresentativeLock { scratch in
                let column = root.domainAndPart.loadPart()?.column(
                    for: ObjectIdentifier(FileSummaryProperty.self), scratch)
                column?.set(FileSummaryProperty.self, entry: entry, to: summary)
            }
        }
        assertFound(
            violations(
                while: { setContribution(ProgressNode.FileSummary(fileTotalCount: 7)) },
                { setContribution(ProgressNode.FileSummary(fileTotalCount: 1, totalByteCount: 4)) }),
            "root/1: its contribution to its parent's FileSummaryProperty is")
    }
}
