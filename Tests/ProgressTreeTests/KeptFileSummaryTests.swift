import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// The file summary a node keeps once it is read (the summary engine, Summaries/): a later read computes only
/// what changed since (counted by `visits`: the contributions of members the tree computed since the
/// previous visit, in the updates' path refreshes and in the read), and its value is always the one a walk of
/// the whole subtree computes (`computeFileSummary()`), through children attaching (fresh, never queued, or
/// added), updating, finishing, failing, held after they finished, metadata changes, unknown sizes, and
/// concurrent updates read from another thread.
final class KeptFileSummaryTests: XCTestCase {
    private typealias Summary = ProgressNode.FileSummary

    /// Each tree's count of computed contributions at its last visit (`visits`), by domain.
    private var visitedWork: [ObjectIdentifier: Int] = [:]

    /// A root copying `count` files of `size` bytes, each a fresh `.file` child standing for one unit.
    private func makeCopy(count: Int, size: Int64) -> (root: ProgressNode, files: [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(count))
        root.fileOperationKind = .copying
        let files = (0..<count).map { _ in
            let file = ProgressNode(totalUnitCount: size, parent: root, pendingUnitCount: 1)
            file.kind = .file
            return file
        }
        return (root, files)
    }

    /// A `.file` node of `size` bytes, `completed` of them done, attached to nothing yet.
    private func discreteFile(size: Int64, completed: Int64) -> ProgressNode {
        let file = ProgressNode.discreteProgress(totalUnitCount: size)
        file.kind = .file
        file.completedUnitCount = completed
        return file
    }

    /// Reads `node`'s summary, checks it against a walk of the whole subtree (and the core's invariants before
    /// and after the read), and returns how many contributions of members its tree computed since the last
    /// visit of a node of the tree (in the updates since, and in this read).
    private func visits(
        _ node: ProgressNode, expecting expected: Summary? = nil, file: StaticString = #filePath, line: UInt = #line
    ) -> Int {
        assertInvariants(node, file: file, line: line)
        let read = node.readFileSummary()
        let tree = ObjectIdentifier(node.domain.representative)
        let work = node.computedSummaries
        defer { visitedWork[tree] = work }
        assertInvariants(node, file: file, line: line)
        let walked = node.computeFileSummary()
        XCTAssertEqual(
            read.summary, walked.summary, "kept summary against a walk of the subtree", file: file, line: line)
        XCTAssertEqual(read.hasFilesBelow, walked.hasFilesBelow, "files below", file: file, line: line)
        if let expected { XCTAssertEqual(read.summary, expected, file: file, line: line) }
        return work - (visitedWork[tree] ?? 0)
    }

    /// Runs `work` while another thread calls `read` again and again, and returns once that thread ended.
    private func whileAThreadReads(_ read: @escaping @Sendable () -> Void, _ work: () -> Void) {
        let done = Atomic<Bool>(false)
        let readerEnded = DispatchSemaphore(value: 0)
        Thread {
            while !done.load(ordering: .acquiring) { read() }
            readerEnded.signal()
        }.start()
        work()
        done.store(true, ordering: .releasing)
        readerEnded.wait()
    }

    // MARK: Reads cost O(changes)

    func test_a_read_after_one_update_computes_only_the_updated_file() {
        let (root, files) = makeCopy(count: 10_000, size: 1_000)
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 10_000, totalByteCount: 10_000_000)), 10_000,
            "the first read computes each file, once")
        XCTAssertEqual(visits(root), 0, "nothing changed")
        files[1_234].advance(by: 500)
        XCTAssertEqual(
            visits(
                root, expecting: Summary(fileTotalCount: 10_000, totalByteCount: 10_000_000, completedByteCount: 500)),
            1)
        for index in [1, 2, 3, 2] { files[index].advance(by: 1) }  // three files, one of them twice
        XCTAssertEqual(visits(root), 3)
        // Reads of the fraction in between record what changed; the summary learns of both files there.
        files[7].advance(by: 1)
        _ = root.fractionCompleted
        files[8].advance(by: 1)
        _ = root.fractionCompleted
        XCTAssertEqual(visits(root), 2)
        XCTAssertEqual(root.localizedAdditionalDescription, "506 bytes of 10 MB")
    }

    func test_in_nested_folders_a_read_computes_the_path_of_each_change_only() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 20)
        var files: [[ProgressNode]] = []
        for _ in 0..<20 {
            let folder = ProgressNode(totalUnitCount: 50, parent: root, pendingUnitCount: 1)
            files.append(
                (0..<50).map { _ in
                    let file = ProgressNode(totalUnitCount: 100, parent: folder, pendingUnitCount: 1)
                    file.kind = .file
                    return file
                })
        }
        // The root's first read computes each file in its folder, and each folder in the root.
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1_000, totalByteCount: 100_000)), 1_020)
        files[3][7].advance(by: 10)
        XCTAssertEqual(visits(root), 2, "the file in its folder, the folder in the root")
        files[4][0].advance(by: 10)
        files[9][1].advance(by: 10)
        XCTAssertEqual(visits(root), 4)
        files[4][0].completedUnitCount = 100  // finishes into its folder
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 1_000, fileCompletedCount: 1, totalByteCount: 100_000, completedByteCount: 120)),
            1, "the folder it finished into, in the root")
    }

    func test_a_chain_ten_thousand_deep_is_read_without_a_deep_stack() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        var node = root
        for _ in 0..<10_000 { node = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1) }
        let file = ProgressNode(totalUnitCount: 1_000, parent: node, pendingUnitCount: 1)
        file.kind = .file
        // Every level below the root, and the file.
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: 1_000)), 10_001)
        file.advance(by: 1)
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: 1_000, completedByteCount: 1)), 10_001,
            "every level changed")
        XCTAssertEqual(visits(root), 0)
    }

    // MARK: Children joining and leaving

    func test_children_that_join_after_the_first_read_are_counted_whether_queued_or_not() {
        let (root, _) = makeCopy(count: 2, size: 1_000)
        XCTAssertEqual(visits(root), 2)
        // A fresh child with its file count in its user info and no progress: it marks itself changed, so
        // that the summaries above count it.
        let announced = root.withCurrent(pendingUnitCount: 1) {
            ProgressNode(parent: root, userInfo: [.fileTotalCountKey: 3])
        }
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 5, totalByteCount: 2_000, filesOfUnknownSize: 3)), 1)
        // Added, already under way.
        root.addChild(discreteFile(size: 4_000, completed: 1_000), withPendingUnitCount: 1)
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 6, totalByteCount: 6_000, completedByteCount: 1_000, filesOfUnknownSize: 3)), 1)
        // Added finished: folded at once, never a member.
        root.addChild(discreteFile(size: 500, completed: 500), withPendingUnitCount: 1)
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 7, fileCompletedCount: 1, totalByteCount: 6_500, completedByteCount: 1_500,
                    filesOfUnknownSize: 3)), 0)
        withExtendedLifetime(announced) {}
    }

    func test_a_file_that_finishes_is_folded_and_counted_once() {
        let (root, files) = makeCopy(count: 5, size: 1_000)
        files[0].advance(by: 400)
        XCTAssertEqual(visits(root), 5, "the first read computes each file")
        files[0].advance(by: 600)
        XCTAssertEqual(root.children.count, 4, "released")
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 5, fileCompletedCount: 1, totalByteCount: 5_000, completedByteCount: 1_000)), 0,
            "nothing: the file left with its fold")
        // A fresh file that finishes on top of the fresh children, before any read: folded, never computed as
        // a member.
        let quick = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 0)
        quick.kind = .file
        quick.completedUnitCount = 10
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 6, fileCompletedCount: 2, totalByteCount: 5_010, completedByteCount: 1_010)), 0)
    }

    func test_a_file_that_fails_leaves_the_summary() {
        struct Broken: Error {}
        let (root, files) = makeCopy(count: 3, size: 1_000)
        files[1].advance(by: 300)
        XCTAssertEqual(visits(root), 3)
        files[1].fail(Broken())
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 2, totalByteCount: 2_000)), 0)
        XCTAssertEqual(root.localizedDescription, "Copying 2 files…")
    }

    func test_a_folder_finished_by_hand_is_folded_as_its_files_were_and_left_when_they_end() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let folder = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        let files = (0..<2).map { _ in
            let file = ProgressNode(totalUnitCount: 1_000, parent: folder, pendingUnitCount: 1)
            file.kind = .file
            return file
        }
        files[0].advance(by: 300)
        XCTAssertEqual(visits(root), 3, "the folder and its two files")
        folder.completedUnitCount = 2  // finished by hand: held by the root, its files folded as they are
        XCTAssertTrue(folder.isHeld)
        let folded = Summary(fileTotalCount: 2, totalByteCount: 2_000, completedByteCount: 300)
        XCTAssertEqual(visits(root, expecting: folded), 0)
        files[0].advance(by: 700)  // below the held folder: finishing is permanent for the root
        XCTAssertEqual(visits(root, expecting: folded), 0)
        XCTAssertEqual(
            visits(
                folder,
                expecting: Summary(
                    fileTotalCount: 2, fileCompletedCount: 1, totalByteCount: 2_000, completedByteCount: 1_000)), 0,
            "its file left it with its fold")
        files[1].completedUnitCount = 1_000  // the folder's last file: the root lets the folder go
        XCTAssertFalse(folder.isHeld)
        XCTAssertEqual(visits(root, expecting: folded), 0)
    }

    func test_a_held_folder_let_go_by_the_root_before_its_fold_is_counted_until_the_fold() {
        // The root's table lets go of a held folder once nothing is attached below it, which can come before
        // the finish folds it into the root's summaries. Here the folder's resuming handler, which its finish
        // runs between the detach and the fold (a paused node that finishes leaves its pause), finishes the
        // folder's file.
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let other = ProgressNode(totalUnitCount: 1_000, parent: root, pendingUnitCount: 1)
        other.kind = .file
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let file = ProgressNode(totalUnitCount: 1_000, parent: folder, pendingUnitCount: 1)
        file.kind = .file
        XCTAssertEqual(visits(root), 3, "the first read: the two files and the folder")
        let seen = Box<(summary: Summary, listed: Bool, member: Bool)?>(nil)
        folder.pause()
        XCTAssertEqual(visits(root), 3, "the pause marked the folder and its file: computed again")
        folder.resumingHandler = {
            file.completedUnitCount = 1_000
            let listed = root.state.withLock { state in state.children.entries.contains { $0.node === folder } }
            seen.set((root.fileSummary, listed, folder.contributorIndexNow >= 0))
        }
        folder.completedUnitCount = 1  // finished by hand while paused, with the file attached: held
        let inHandler = seen.value
        XCTAssertEqual(inHandler?.listed, false, "the root's table let go of the folder")
        XCTAssertEqual(inHandler?.member, true, "its files still counted, as a member")
        XCTAssertEqual(inHandler?.summary.fileTotalCount, 2, "each file counted once")
        XCTAssertEqual(folder.contributorIndexNow, -1, "folded")
        let expected = Summary(
            fileTotalCount: 2, fileCompletedCount: 1, totalByteCount: 2_000, completedByteCount: 1_000)
        XCTAssertEqual(visits(root, expecting: expected), 0, "folded as it was after its handler ran")
    }

    // MARK: What a child's summary is made of

    /// A change of a child's kind or file count is an update of its summary: the child alone is computed
    /// again (here, by the update's own path refresh: this thread reads between updates). A file URL moves
    /// no file, and the node's own metadata no child.
    func test_metadata_changes_of_children_reach_the_kept_summary_through_their_setters() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        let first = ProgressNode(totalUnitCount: 1_000, parent: root, pendingUnitCount: 1)
        let second = ProgressNode(totalUnitCount: 1_000, parent: root, pendingUnitCount: 1)
        let generic = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        first.kind = .file
        second.kind = .file
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 2, totalByteCount: 2_000)), 2)
        generic.kind = .file
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 3, totalByteCount: 2_010)), 1)
        first.fileTotalCount = 4  // one node standing for four files
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 6, totalByteCount: 2_010)), 1)
        second.fileURL = URL(fileURLWithPath: "/tmp/second.dat")
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 6, totalByteCount: 2_010)), 0)
        root.fileCompletedCount = 2  // the root's own metadata
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 6, fileCompletedCount: 2, totalByteCount: 2_010)), 0)
        first.kind = nil  // four files announced, none of known size
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 6, fileCompletedCount: 2, totalByteCount: 1_010, filesOfUnknownSize: 4)), 1)
        first.setUserInfoObject(nil, forKey: .fileTotalCountKey)
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 2, fileCompletedCount: 2, totalByteCount: 1_010)), 1)
        // A count change is progress: the child it moved is computed (`first`, no file any more, moves no byte).
        first.completedUnitCount = 10
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 2, fileCompletedCount: 2, totalByteCount: 1_010)), 1)
        second.completedUnitCount = 10
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 2, fileCompletedCount: 2, totalByteCount: 1_010, completedByteCount: 10)), 1)
    }

    /// A setter in a folder deep in the tree marks the file, as any change does, so a read computes that
    /// path only: the file in its folder, the folder in the root.
    func test_a_kind_set_deep_in_the_tree_reaches_the_root_through_the_path_of_its_folder() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let folders = (0..<2).map { _ in ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1) }
        let files = folders.map { folder in ProgressNode(totalUnitCount: 100, parent: folder, pendingUnitCount: 1) }
        XCTAssertEqual(visits(root, expecting: Summary()), 2, "the two folders, which have children")
        files[1].kind = .file
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: 100)), 2, "the file and the folder")
        files[1].fileTotalCount = 3
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 3, totalByteCount: 100)), 2)
        withExtendedLifetime(files) {}
    }

    func test_a_file_of_unknown_size_is_sized_when_its_total_is_set() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.fileOperationKind = .copying
        let file = ProgressNode(totalUnitCount: -1, parent: root, pendingUnitCount: 1)
        file.kind = .file
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1, filesOfUnknownSize: 1)), 1)
        file.totalUnitCount = 500
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: 500)), 1)
        XCTAssertEqual(root.localizedAdditionalDescription, "Zero KB of 500 bytes")
    }

    func test_sums_beyond_the_integer_range_saturate_and_come_back_when_a_child_leaves() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 3)
        let files = (0..<3).map { _ in
            let file = ProgressNode(totalUnitCount: .max, parent: root, pendingUnitCount: 1)
            file.kind = .file
            return file
        }
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 3, totalByteCount: .max)), 3)
        struct Broken: Error {}
        files[0].fail(Broken())
        files[1].fail(Broken())
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: .max)), 0)
        files[2].totalUnitCount = 7
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 1, totalByteCount: 7)), 1)
    }

    // MARK: What it costs the nodes nobody reads the summary of

    func test_nodes_keep_summaries_only_once_read_with_children_or_left_something() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let children = (0..<3).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        /// Whether `node` keeps summaries: `nil` for none, else whether they started.
        func table(_ node: ProgressNode) -> Bool? {
            guard let part = node.domainAndPart.loadPart() else { return nil }
            return node.domain.withRepresentativeLock { scratch in
                part.summariesStarted(scratch) || !part.columns(scratch).isEmpty ? part.summariesStarted(scratch) : nil
            }
        }
        children[0].advance(by: 1)
        _ = root.fractionCompleted
        children[1].advance(by: 1)
        children[1].fileURL = URL(fileURLWithPath: "/tmp/a")  // moves no file
        _ = root.fractionCompleted
        XCTAssertNil(table(root), "fraction reads and file URLs keep no summaries")
        children[2].kind = .file
        _ = root.fractionCompleted
        XCTAssertNil(table(root), "nor a file, until the root's summary is read")
        XCTAssertEqual(children[2].fileSummary, Summary(fileTotalCount: 1, totalByteCount: 10))
        XCTAssertNil(table(children[2]), "a node without children keeps none")
        XCTAssertEqual(root.fileSummary.fileTotalCount, 1)
        XCTAssertEqual(table(root), true, "read with children")
        let other = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: other, pendingUnitCount: 1)
        child.kind = .file
        child.advance()
        XCTAssertEqual(table(other), false, "a child that left its files: kept, not started")
        XCTAssertEqual(
            other.fileSummary,
            Summary(fileTotalCount: 1, fileCompletedCount: 1, totalByteCount: 1, completedByteCount: 1))
        XCTAssertEqual(table(other), true)
    }

    /// A read that starts a summary computes only the children that may have files: those that described
    /// files once, and those that had children. The others count zero, without a look under their lock.
    func test_a_summary_starts_by_computing_only_the_children_that_may_have_files() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_003)
        let plain = (0..<1_000).map { _ in ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1) }
        plain[7].advance(by: 5)
        let announced = root.withCurrent(pendingUnitCount: 1) {
            ProgressNode(parent: root, userInfo: [.fileTotalCountKey: 3])
        }
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let inner = ProgressNode(totalUnitCount: 10, parent: folder, pendingUnitCount: 1)
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 3, filesOfUnknownSize: 3)), 2,
            "the child announcing files, the folder")
        XCTAssertEqual(visits(root), 0)
        withExtendedLifetime((announced, inner)) {}
    }

    /// A change of a child's files is an update: giving 10,000 children a kind queues each once, and the next
    /// read computes each once; a file URL moves no file, and computes nothing.
    func test_children_given_a_kind_and_a_url_are_computed_once_by_the_next_read() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10_000)
        root.fileOperationKind = .copying
        let files = (0..<10_000).map { index in
            let file = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
            file.kind = .file
            file.fileURL = URL(fileURLWithPath: "/data/file-\(index)")
            return file
        }
        XCTAssertEqual(root.queuedChildCount, 10_000, "each file queued once")
        XCTAssertEqual(visits(root, expecting: Summary(fileTotalCount: 10_000, totalByteCount: 1_000_000)), 10_000)
        XCTAssertEqual(root.localizedAdditionalDescription, "Zero KB of 1 MB")
        for file in files.prefix(100) { file.fileURL = URL(fileURLWithPath: "/data/moved") }
        XCTAssertEqual(visits(root), 0, "no file moved")
        files[42].advance(by: 100)
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: 10_000, fileCompletedCount: 1, totalByteCount: 1_000_000, completedByteCount: 100)),
            0, "finished and folded")
    }

    /// Four threads create files and set their kind and file counts while another thread reads the root's
    /// summary: the values the setters computed add up exactly, as a walk of the tree says.
    func test_kinds_and_file_counts_set_on_several_threads_while_a_reader_reads_add_up_exactly() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        let all = Mutex<[ProgressNode]>([])
        whileAThreadReads({ _ = root.fileSummary }) {
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                var mine: [ProgressNode] = []
                for index in 0..<250 {
                    let file = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
                    file.kind = .file
                    if index % 5 == 0 { file.fileTotalCount = 2 }
                    if index % 7 == 0 { file.kind = nil }
                    if index % 10 == 3 { file.advance(by: 4) }
                    mine.append(file)
                }
                all.withLock { $0.append(contentsOf: mine) }
            }
        }
        // What each worker's 250 children add up to, by the rules the loop followed.
        var expected = Summary()
        for index in 0..<250 {
            let announced = index % 5 == 0 ? 2 : nil
            var summary = Summary()
            if index % 7 != 0 {
                summary = Summary(
                    fileTotalCount: announced ?? 1, totalByteCount: 10, completedByteCount: index % 10 == 3 ? 4 : 0)
            } else if let announced {
                summary = Summary(fileTotalCount: announced, filesOfUnknownSize: announced)
            }
            for _ in 0..<4 { expected.add(summary) }
        }
        // 214 files per worker, 42 of them announcing 2, and 8 other children announcing 2: 272.
        XCTAssertEqual(expected.fileTotalCount, 4 * 272)
        _ = visits(root, expecting: expected)
        withExtendedLifetime(all) {}
    }

    /// Kinds and file counts set while the same files move, finish and fail on four threads, and a reader
    /// reads the root: the summary the setters and reads kept equals a walk of the tree at the end.
    func test_metadata_setters_racing_updates_finishes_and_failures_keep_the_summary_exact() {
        struct Broken: Error {}
        let root = ProgressNode.discreteProgress(totalUnitCount: 4 * 300)
        let folders = (0..<4).map { _ in ProgressNode(totalUnitCount: 300, parent: root, pendingUnitCount: 300) }
        whileAThreadReads({
            _ = root.fileSummary
            _ = folders[0].fileSummary
        }) {
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                var open: [ProgressNode] = []
                for index in 0..<300 {
                    // Every other file goes into a neighbour's folder, so that two threads share each folder.
                    let folder = folders[(worker + index % 2) % 4]
                    let file = ProgressNode(totalUnitCount: 10, parent: folder, pendingUnitCount: 1)
                    file.kind = .file
                    file.advance(by: 3)
                    if index % 3 == 0 { file.fileTotalCount = 3 }
                    switch index % 5 {
                    case 0: file.completedUnitCount = 10
                    case 1: file.fail(Broken())
                    case 2: file.kind = nil
                    default: open.append(file)
                    }
                    if open.count > 8 { open.removeFirst().completedUnitCount = 10 }
                }
                for file in open { file.fileCompletedCount = 1 }
            }
        }
        for folder in folders { _ = visits(folder) }
        // Each worker's files by the rules the loop followed (the same for every worker): a finished one
        // counts its files done and 10 bytes of 10; a failed one nothing; one that is no file any more its
        // announced files, of unknown size; one still open at the end 10 bytes, 3 done, and 1 file done.
        var expected = Summary()
        var open: [Int] = []
        func finished(_ index: Int) -> Summary {
            let files = index % 3 == 0 ? 3 : 1
            return Summary(
                fileTotalCount: files, fileCompletedCount: files, totalByteCount: 10, completedByteCount: 10)
        }
        for index in 0..<300 {
            switch index % 5 {
            case 0: expected.add(finished(index))
            case 1: break
            case 2:
                if index % 3 == 0 { expected.add(Summary(fileTotalCount: 3, filesOfUnknownSize: 3)) }
            default: open.append(index)
            }
            if open.count > 8 { expected.add(finished(open.removeFirst())) }
        }
        for index in open {
            expected.add(
                Summary(
                    fileTotalCount: index % 3 == 0 ? 3 : 1, fileCompletedCount: 1, totalByteCount: 10,
                    completedByteCount: 3))
        }
        var all = Summary()
        for _ in 0..<4 { all.add(expected) }
        _ = visits(root, expecting: all)
    }

    func test_each_recorded_change_computes_its_member_once() {
        let (root, files) = makeCopy(count: 10, size: 100_000)
        XCTAssertEqual(visits(root), 10)
        // Each update after a read of the fraction is recorded on its own, by its own path refresh: the file,
        // in the root, once an update.
        for step in 0..<1_100 {
            files[step % 2].advance(by: 1)
            _ = root.fractionCompleted
        }
        XCTAssertEqual(
            visits(root, expecting: Summary(fileTotalCount: 10, totalByteCount: 1_000_000, completedByteCount: 1_100)),
            1_100)
        files[5].advance(by: 1)
        XCTAssertEqual(visits(root), 1)
    }

    // MARK: Concurrent updates, read from another thread

    /// Four threads advance and finish 400 files while another reads the root's summary: at every read each
    /// file is counted once, attached or folded (the file count and bytes in all never move), and the bytes
    /// and finished files done never go back.
    func test_files_finishing_on_several_threads_are_counted_once_at_every_read() {
        let count = 400
        let size: Int64 = 64
        let (root, files) = makeCopy(count: count, size: size)
        _ = root.fileSummary
        let done = Flag()
        let problems = Counter()
        let readerEnded = DispatchSemaphore(value: 0)
        let readerStarted = DispatchSemaphore(value: 0)
        let reader = Thread {
            var last = Summary()
            readerStarted.signal()
            while !done.isSet {
                let summary = root.fileSummary
                if summary.fileTotalCount != count || summary.totalByteCount != size * Int64(count)
                    || summary.filesOfUnknownSize != 0 || summary.completedByteCount < last.completedByteCount
                    || summary.fileCompletedCount < last.fileCompletedCount
                    || summary.completedByteCount > summary.totalByteCount
                {
                    problems.add()
                }
                last = summary
            }
            readerEnded.signal()
        }
        reader.start()
        readerStarted.wait()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            let mine = stride(from: thread, to: count, by: 4).map { files[$0] }
            for _ in 0..<size / 8 {
                for file in mine { file.advance(by: 8) }
            }
        }
        done.set()
        XCTAssertEqual(readerEnded.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(problems.count, 0, "reads that counted a file twice or not at all, or went back")
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(
            visits(
                root,
                expecting: Summary(
                    fileTotalCount: count, fileCompletedCount: count, totalByteCount: size * Int64(count),
                    completedByteCount: size * Int64(count))), root.computedSummaries,
            "every contribution the tree computed, since the test visited it first")
    }

    /// One thread attaches files (fresh, and in folders), updates, finishes and fails them, while another
    /// reads the root's summary. The writer counts each of those operations when it begins and when it has
    /// returned (`Operations`), so every read must count at least the files announced before it began less
    /// those whose failure began by its end, and at most those whose announcement began by its end less
    /// those failed before it began; finished files likewise. Once the writer is done, the kept summary is
    /// the walked one.
    func test_a_reader_thread_sees_files_attach_update_finish_and_fail_exactly() {
        struct Broken: Error {}
        let size: Int64 = 100
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        root.fileOperationKind = .copying
        _ = root.fileSummary
        let (announced, failed, finished) = (Operations(), Operations(), Operations())
        let done = Flag()
        let readerStarted = DispatchSemaphore(value: 0)
        let readerEnded = DispatchSemaphore(value: 0)
        let problems = Counter()
        let firstProblem = Box("")
        let reader = Thread {
            readerStarted.signal()
            while !done.isSet {
                let before = (
                    announced: announced.ended.count, failed: failed.ended.count, finished: finished.ended.count
                )
                let summary = root.fileSummary
                let after = (
                    announced: announced.begun.count, failed: failed.begun.count, finished: finished.begun.count
                )
                if summary.fileTotalCount < before.announced - after.failed
                    || summary.fileTotalCount > after.announced - before.failed
                    || summary.fileCompletedCount < before.finished || summary.fileCompletedCount > after.finished
                    || summary.totalByteCount != size * Int64(summary.fileTotalCount)
                    || summary.completedByteCount > summary.totalByteCount
                {
                    if problems.count == 0 { firstProblem.set("\(summary), writer before \(before), after \(after)") }
                    problems.add()
                }
            }
            readerEnded.signal()
        }
        reader.start()
        readerStarted.wait()
        var random = SplitMix64(seed: 26)
        var folders = [root]
        var running: [ProgressNode] = []
        for _ in 0..<600 {
            switch random.below(10) {
            case 0 where folders.count < 8:
                let parent = folders[random.below(folders.count)]
                folders.append(ProgressNode(totalUnitCount: 1_000, parent: parent, pendingUnitCount: 1))
            case 1..<5:
                let file = ProgressNode(
                    totalUnitCount: size, parent: folders[random.below(folders.count)], pendingUnitCount: 1)
                announced.run { file.kind = .file }
                running.append(file)
            case 5..<8 where !running.isEmpty:
                let file = running[random.below(running.count)]
                if file.completedUnitCount < size - 10 { file.advance(by: 10) }  // finishes only below
            case 8 where !running.isEmpty:
                let file = running.remove(at: random.below(running.count))
                finished.run { file.completedUnitCount = size }
            case 9 where !running.isEmpty:
                let file = running.remove(at: random.below(running.count))
                failed.run { file.fail(Broken()) }
            default:
                break
            }
        }
        done.set()
        XCTAssertEqual(readerEnded.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(problems.count, 0, "reads outside what the writer had done: \(firstProblem.value)")
        let files = announced.ended.count - failed.ended.count
        XCTAssertGreaterThan(files, 0)
        XCTAssertGreaterThan(finished.ended.count, 0)
        XCTAssertGreaterThan(failed.ended.count, 0)
        _ = visits(
            root,
            expecting: Summary(
                fileTotalCount: files, fileCompletedCount: finished.ended.count, totalByteCount: size * Int64(files),
                completedByteCount: root.computeFileSummary().summary.completedByteCount))
        for folder in folders { _ = visits(folder) }
    }
}

/// Operations of one kind by one thread, counted when each begins and once it has returned.
private final class Operations: Sendable {
    let begun = Counter()
    let ended = Counter()

    func run(_ operation: () -> Void) {
        begun.add()
        operation()
        ended.add()
    }
}

/// A value set on one thread and read on another (the handler of a test).
private final class Box<Value: Sendable>: Sendable {
    private let storage: Lock<Value>
    init(_ value: Value) { storage = Lock(value) }
    var value: Value { storage.withLock { $0 } }
    func set(_ value: Value) { storage.withLock { $0 = value } }
}
