import Dispatch
@testable import ProgressTree
import XCTest

/// A maximum: its `merge` cannot be undone, so a parent re-merges its children's summaries.
private enum LargestFile: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary = max(summary, value) }
    static func merge(_ a: Int, _ b: Int) -> Int { max(a, b) }
}

/// Property summaries are kept by the summary engine (Summaries/), as the file summary is: a read after a
/// change computes the contributions of the changed nodes and their ancestors only, whatever the number of
/// their siblings.
final class KeptPropertySummaryTests: XCTestCase {
    func test_a_read_after_one_value_set_computes_no_sibling() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        let children = (0..<1_000).map { _ in ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1) }
        children[10][PhotosSkipped.self] = 2
        // The first read starts the root's summaries: only the child that set a value contributes.
        XCTAssertEqual(root.summaryWork { XCTAssertEqual(root.summary(of: PhotosSkipped.self), 2) }, 1)
        let work = root.summaryWork {
            children[500][PhotosSkipped.self] = 5
            XCTAssertEqual(root.summary(of: PhotosSkipped.self), 7)
        }
        XCTAssertEqual(work, 1, "the child that changed, and no sibling")
    }

    func test_a_value_set_deep_is_read_through_its_path_only() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 100)
        var folders: [ProgressNode] = []
        for _ in 0..<100 {
            let folder = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
            for _ in 0..<100 { _ = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 1) }
            folders.append(folder)
        }
        // The first read computes each folder (they have children), and none of their children (no value).
        XCTAssertEqual(root.summaryWork { XCTAssertEqual(root.summary(of: PhotosSkipped.self), 0) }, 100)
        let leaf = ProgressNode(totalUnitCount: 1, parent: folders[42], pendingUnitCount: 0)
        // The leaf, in its folder, and the folder, in the root: the path of the change.
        let first = root.summaryWork {
            leaf[PhotosSkipped.self] = 3
            XCTAssertEqual(root.summary(of: PhotosSkipped.self), 3)
        }
        XCTAssertEqual(first, 2)
        let again = root.summaryWork {
            leaf[PhotosSkipped.self] = 5
            XCTAssertEqual(root.summary(of: PhotosSkipped.self), 5)
        }
        XCTAssertEqual(again, 2)
        XCTAssertEqual(folders[42].summary(of: PhotosSkipped.self), 5)
        XCTAssertEqual(folders[41].summary(of: PhotosSkipped.self), 0)
    }

    func test_a_maximum_falls_back_when_its_largest_child_is_lowered_or_fails() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 300)
        let children = (0..<300).map { _ in ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1) }
        for (index, child) in children.enumerated() { child[LargestFile.self] = index }
        XCTAssertEqual(root.summary(of: LargestFile.self), 299)
        children[299][LargestFile.self] = 7
        XCTAssertEqual(root.summary(of: LargestFile.self), 298)
        // A failed child leaves its summary by default: a maximum keeps it.
        children[298].fail(NSErrorLike())
        XCTAssertEqual(root.summary(of: LargestFile.self), 298)
        // A finished child leaves its summary too; lowering the rest changes nothing then.
        children[297].advance(by: 1)
        for child in children[0..<297] { child[LargestFile.self] = 1 }
        XCTAssertEqual(root.summary(of: LargestFile.self), 298)
    }

    /// Values set on deep leaves from several threads while readers read the root and the folders, and
    /// leaves finish: the final summaries are exact (the setters' path updates and the readers' logs never
    /// lose or double a change).
    func test_values_set_deep_from_many_threads_while_readers_read_are_exact() {
        let threads = 4
        let leavesPerFolder = 50
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(threads))
        let folders = (0..<threads).map { _ in
            ProgressNode(totalUnitCount: Int64(leavesPerFolder), parent: root, pendingUnitCount: 1)
        }
        let leaves = folders.map { folder in
            (0..<leavesPerFolder).map { _ in
                let group = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 1)
                return ProgressNode(totalUnitCount: 1, parent: group, pendingUnitCount: 1)
            }
        }
        XCTAssertEqual(root.summary(of: LargestFile.self), 0)
        DispatchQueue.concurrentPerform(iterations: threads + 2) { thread in
            guard thread < threads else {
                for round in 0..<300 {
                    _ = root.summary(of: PhotosSkipped.self)
                    _ = folders[round % threads].summary(of: LargestFile.self)
                }
                return
            }
            for round in 1...20 {
                for (index, leaf) in leaves[thread].enumerated() {
                    leaf[PhotosSkipped.self] = round
                    leaf[LargestFile.self] = thread * 1_000 + round * 10 + index % 7
                }
            }
            // Every other leaf finishes, leaving its values in its group, which finishes into the folder.
            for (index, leaf) in leaves[thread].enumerated() where index % 2 == 0 { leaf.advance(by: 1) }
        }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), threads * leavesPerFolder * 20)
        XCTAssertEqual(root.summary(of: LargestFile.self), (threads - 1) * 1_000 + 200 + 6)
        for (thread, folder) in folders.enumerated() {
            XCTAssertEqual(folder.summary(of: PhotosSkipped.self), leavesPerFolder * 20)
            XCTAssertEqual(folder.summary(of: LargestFile.self), thread * 1_000 + 206)
        }
        #if PROGRESSTREE_INTERNAL_CHECKS
        root.checkInvariants()
        #endif
    }

    /// A value set's walk holds its ancestors by a registered walk of the domain, not by a reference each:
    /// the tree above a leaf going away (its root's last reference dropped on another thread, each ancestor's
    /// `deinit` in turn) while values are set on the leaf neither crashes nor hangs, and the leaf keeps its
    /// exact summary.
    func test_values_set_on_a_leaf_while_the_tree_above_it_goes_away_are_safe() {
        for round in 0..<200 {
            var root: ProgressNode? = ProgressNode.discreteProgress(totalUnitCount: 1)
            var node = root!
            for _ in 0..<7 { node = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1) }
            let leaf = ProgressNode(totalUnitCount: 2, parent: node, pendingUnitCount: 1)
            node = leaf
            leaf[PhotosSkipped.self] = 1
            XCTAssertEqual(root!.summary(of: PhotosSkipped.self), 1)  // the path keeps summaries from here on
            let owner = ReleasableNode(root!)
            let weakRoot = { [weak root] in root }
            root = nil
            let returned = returnsInTime {
                DispatchQueue.concurrentPerform(iterations: 2) { thread in
                    if thread == 0 {
                        for value in 2...101 { leaf[PhotosSkipped.self] = value }
                    } else {
                        for _ in 0..<(round % 50) { _ = leaf.fractionCompleted }
                        owner.release()  // the root goes, and with it every ancestor of the leaf
                    }
                }
            }
            guard returned else {
                return XCTFail("round \(round): a value set or a deinit waits for the other")
            }
            XCTAssertNil(weakRoot(), "round \(round)")
            XCTAssertEqual(leaf[PhotosSkipped.self], 101)
            XCTAssertEqual(leaf.summary(of: PhotosSkipped.self), 101)
            XCTAssertNil(leaf.parent)
        }
    }

    /// The file counts are properties of the same kind: one storage with `fileTotalCount` and `userInfo`,
    /// and the file summary's rules for the summary.
    func test_the_file_counts_read_and_set_as_properties() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        folder[ProgressNode.FileTotalCount.self] = 10
        folder[ProgressNode.FileCompletedCount.self] = 4
        XCTAssertEqual(folder.fileTotalCount, 10)
        XCTAssertEqual(folder.userInfo[.fileCompletedCountKey] as? Int, 4)
        let file = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        file.kind = .file
        let done = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        done.kind = .file
        done.completedUnitCount = 100
        XCTAssertEqual(root.summary(of: ProgressNode.FileTotalCount.self), 12)
        XCTAssertEqual(root.summary(of: ProgressNode.FileCompletedCount.self), 5)
        XCTAssertEqual(root.summary(of: ProgressNode.FileTotalCount.self), root.fileSummary.fileTotalCount)
        XCTAssertEqual(file[ProgressNode.FileTotalCount.self], 0, "a value is what the node set")
        XCTAssertEqual(folder[ProgressNode.FileTotalCount.self], 10)
    }

    func test_children_that_never_set_a_property_keep_no_storage_for_it() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        let plain = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let counted = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        counted[PhotosSkipped.self] = 4
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 4)
        XCTAssertFalse(plain.state.withLock { $0.hasExtras })
        XCTAssertEqual(plain.flags.load(ordering: .relaxed) & NodeFlags.summarized, 0)
        XCTAssertNotEqual(counted.flags.load(ordering: .relaxed) & NodeFlags.summarized, 0)
    }

    func test_a_file_summary_read_keeps_the_property_summaries_current() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let file = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        file.kind = .file
        let other = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(root.fileSummary.fileTotalCount, 1)
        other[PhotosSkipped.self] = 6
        file.advance(by: 50)
        XCTAssertEqual(root.fileSummary.completedByteCount, 50)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 6)
        other.advance(by: 1)  // finishes: leaves its 6 in the root
        XCTAssertEqual(root.fileSummary.fileTotalCount, 1)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 6)
    }
}

private struct NSErrorLike: Error {}
