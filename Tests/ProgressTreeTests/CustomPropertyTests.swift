import Dispatch
@testable import ProgressTree
import XCTest

/// A rate-like property: the bytes per second of the work still running; a child that finished leaves
/// nothing, a failed one leaves nothing either.
enum UploadRate: ProgressProperty {
    static var defaultValue: Double { 0 }
    static var defaultSummary: Double { 0 }
    static func reduce(into summary: inout Double, value: Double) { summary += value }
    static func merge(_ a: Double, _ b: Double) -> Double { a + b }
    static func summaryLeftBehind(_ summary: Double, by outcome: ProgressPropertyOutcome) -> Double? { nil }
}

/// Keeps what finished children leave, drops what failed ones leave, and remembers the outcomes it saw.
enum Warnings: ProgressProperty {
    static var defaultValue: [String] { [] }
    static var defaultSummary: [String] { [] }
    static func reduce(into summary: inout [String], value: [String]) { summary += value }
    static func merge(_ a: [String], _ b: [String]) -> [String] { (a + b).sorted() }
    static func summaryLeftBehind(_ summary: [String], by outcome: ProgressPropertyOutcome) -> [String]? {
        outcome == .failed ? nil : summary.map { $0.hasSuffix(")") ? $0 : "\($0) (\(outcome))" }
    }
}

private struct Broken: Error {}

final class CustomPropertyTests: XCTestCase {
    func test_issue_example() {
        let root = ProgressNode(totalUnitCount: 2)
        let photo = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        photo[PhotosSkipped.self] = 3
        XCTAssertEqual(photo[PhotosSkipped.self], 3)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 3)
        photo.completedUnitCount = 1  // finished: let go, its 3 stay
        XCTAssertEqual(root.children.count, 0)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 3)
        XCTAssertEqual(root[PhotosSkipped.self], 0, "the root's own value is untouched")
    }

    func test_never_set_reads_the_default_reduced() {
        let root = ProgressNode(totalUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 0)
        XCTAssertEqual(root.summary(of: Warnings.self), [])
        XCTAssertEqual(root[Warnings.self], [])
        XCTAssertEqual(ProgressNode.discreteProgress(totalUnitCount: 0).summary(of: UploadRate.self), 0)
    }

    func test_sums_across_a_tree() {
        let root = ProgressNode(totalUnitCount: 10)
        var leaves: [ProgressNode] = []
        for album in 0..<3 {
            let node = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 3)
            node[PhotosSkipped.self] = 100 * (album + 1)
            for photo in 0..<4 {
                let leaf = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1)
                leaf[PhotosSkipped.self] = photo
                leaves.append(leaf)
            }
        }
        // 600 on the albums, 3 × (0+1+2+3) on the photos.
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 618)
        XCTAssertEqual(root.children[1].summary(of: PhotosSkipped.self), 206)
        for (index, leaf) in leaves.enumerated() where index % 2 == 0 { leaf.completedUnitCount = 1 }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 618, "finished photos leave their counts")
        leaves[1][PhotosSkipped.self] = 11  // was 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 628)
        for leaf in leaves { leaf.completedUnitCount = 1 }
        XCTAssertEqual(root.completedUnitCount, 9)
        XCTAssertEqual(root.children.count, 0)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 628)
    }

    func test_a_rate_drops_when_the_child_finishes() {
        let root = ProgressNode(totalUnitCount: 2)
        let first = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let second = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        first[UploadRate.self] = 1_000
        second[UploadRate.self] = 250
        root[UploadRate.self] = 1
        XCTAssertEqual(root.summary(of: UploadRate.self), 1_251)
        first.completedUnitCount = 1
        XCTAssertEqual(root.summary(of: UploadRate.self), 251)
        second.fail(Broken())
        XCTAssertEqual(root.summary(of: UploadRate.self), 1)
    }

    func test_a_failed_child_follows_its_rule() {
        let root = ProgressNode(totalUnitCount: 3)
        let failing = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        let below = ProgressNode(totalUnitCount: 1, parent: failing, pendingUnitCount: 1)
        failing[PhotosSkipped.self] = 2
        below[PhotosSkipped.self] = 5
        failing[Warnings.self] = ["disk"]
        below[Warnings.self] = ["slow"]
        failing.fail(Broken())
        XCTAssertTrue(below.isCancelled)
        // A count keeps the failed subtree's 7; the warnings' rule drops what a failure leaves.
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 7)
        XCTAssertEqual(root.summary(of: Warnings.self), [])
        // Later changes of the failed subtree do not move the parent.
        below[PhotosSkipped.self] = 50
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 7)
        XCTAssertEqual(failing.summary(of: PhotosSkipped.self), 52)
    }

    func test_outcomes_told_to_the_rule() {
        let root = ProgressNode(totalUnitCount: 2)
        let finished = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let cancelled = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        finished[Warnings.self] = ["a"]
        cancelled[Warnings.self] = ["b"]
        cancelled.cancel()
        XCTAssertEqual(root.summary(of: Warnings.self), ["a", "b"], "a cancelled child stays attached")
        finished.completedUnitCount = 1
        cancelled.completedUnitCount = 1
        XCTAssertEqual(root.summary(of: Warnings.self), ["a (finished)", "b (cancelled)"])
    }

    func test_a_finished_child_with_attached_children_leaves_its_subtree() {
        let root = ProgressNode(totalUnitCount: 2)
        let album = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
        let other = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        album[PhotosSkipped.self] = 1
        photo[PhotosSkipped.self] = 10
        other[PhotosSkipped.self] = 100
        photo[UploadRate.self] = 5
        album.completedUnitCount = 2  // finished by hand while `photo` runs: held by `root`
        XCTAssertTrue(album.isFinished)
        XCTAssertEqual(root.children.map { $0 === other }, [true])
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 111)
        XCTAssertEqual(root.summary(of: UploadRate.self), 0, "the rate of the finished subtree was dropped")
        XCTAssertEqual(album.summary(of: UploadRate.self), 5)
        // Finishing is permanent for the parent: the photo's later changes move the album, not the root.
        photo[PhotosSkipped.self] = 20
        XCTAssertEqual(album.summary(of: PhotosSkipped.self), 21)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 111)
        photo.completedUnitCount = 1  // the hold ends; the photo leaves its 20 in the album
        XCTAssertEqual(album.summary(of: PhotosSkipped.self), 21)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 111)
        other.completedUnitCount = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 111)
    }

    func test_fresh_and_implicit_children_fold() {
        let root = ProgressNode(totalUnitCount: 2)
        root.performAsCurrent(withPendingUnitCount: 1) {
            let child = ProgressNode(totalUnitCount: 1)
            child[PhotosSkipped.self] = 4
            child.completedUnitCount = 1
        }
        let fresh = root.performAsCurrent(withPendingUnitCount: 1) { ProgressNode(parent: root) }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 4)
        fresh[PhotosSkipped.self] = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 5)
        fresh.totalUnitCount = 1
        fresh.completedUnitCount = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 5)
    }

    func test_a_child_added_finished_or_failed() {
        let root = ProgressNode(totalUnitCount: 3)
        let done = ProgressNode.discreteProgress(totalUnitCount: 1)
        done[PhotosSkipped.self] = 2
        done.completedUnitCount = 1
        root.addChild(done, withPendingUnitCount: 1)
        let failed = ProgressNode.discreteProgress(totalUnitCount: 1)
        failed[PhotosSkipped.self] = 30
        failed.fail(Broken())
        root.addChild(failed, withPendingUnitCount: 1)
        XCTAssertEqual(root.completedUnitCount, 1)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 32)
    }

    func test_single_threaded_cases_of_the_concurrent_test() {
        for index in 0..<3 {
            let album = ProgressNode(totalUnitCount: 1)
            let photo = ProgressNode(totalUnitCount: 2, parent: album, pendingUnitCount: 1)
            photo[PhotosSkipped.self] = 1
            photo[UploadRate.self] = 1
            let filter = ProgressNode.discreteProgress(totalUnitCount: 1)
            filter[PhotosSkipped.self] = 1
            photo.addChild(filter, withPendingUnitCount: 1)
            switch index {
            case 0:
                filter.completedUnitCount = 1
                photo.advance()
            case 1:
                photo.completedUnitCount = 2
                filter.completedUnitCount = 1
            default:
                photo.fail(Broken())
            }
            XCTAssertEqual(album.summary(of: PhotosSkipped.self), 2, "case \(index)")
            XCTAssertEqual(album.summary(of: UploadRate.self), 0, "case \(index)")
            XCTAssertEqual(album.children.count, 0, "case \(index)")
        }
    }

    func test_a_deep_chain() {
        let root = ProgressNode(totalUnitCount: 1)
        var node = root
        var chain = [root]
        for _ in 0..<10_000 {
            node = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1)
            node[PhotosSkipped.self] = 1
            chain.append(node)
        }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 10_000)
        // Finishing the middle node by hand folds its 5,000-deep subtree in one walk.
        chain[5_000].completedUnitCount = 1
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 10_000)
        chain.last!.completedUnitCount = 1  // finishes the whole chain, level by level
        XCTAssertTrue(root.isFinished)
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), 10_000)
    }

    /// Threads set values while children attach, finish, fail and detach; the final sums are exact.
    func test_concurrent_sets_attaches_finishes_and_failures() {
        let threads = 4
        let perThread = 300
        let root = ProgressNode(totalUnitCount: Int64(threads * perThread))
        let albums = (0..<threads).map { _ in
            ProgressNode(totalUnitCount: Int64(perThread), parent: root, pendingUnitCount: Int64(perThread))
        }
        DispatchQueue.concurrentPerform(iterations: threads + 1) { thread in
            if thread == threads {
                // A reader: every summary it sees is within what can have been set.
                for _ in 0..<200 {
                    let seen = root.summary(of: PhotosSkipped.self)
                    XCTAssert((0...(threads * perThread * 3 + threads)).contains(seen), "\(seen)")
                }
                return
            }
            let album = albums[thread]
            for index in 0..<perThread {
                let photo = ProgressNode(totalUnitCount: 2, parent: album, pendingUnitCount: 1)
                photo[PhotosSkipped.self] = 1
                photo[UploadRate.self] = 1
                let filter = ProgressNode.discreteProgress(totalUnitCount: 1)
                filter[PhotosSkipped.self] = 1
                photo.addChild(filter, withPendingUnitCount: 1)
                switch index % 3 {
                case 0:  // finishes, the filter first
                    filter.completedUnitCount = 1
                    photo.advance()
                case 1:  // finished by hand while its filter runs, then the filter
                    photo.completedUnitCount = 2
                    filter.completedUnitCount = 1
                default:  // fails: the filter is cancelled below it and the photo's 2 stay
                    photo[PhotosSkipped.self] = 1
                    photo.fail(Broken())
                }
                // Another thread's album gets a value too.
                let other = albums[(thread + 1) % threads]
                other[PhotosSkipped.self] = 1
            }
        }
        XCTAssertEqual(root.summary(of: PhotosSkipped.self), threads * perThread * 2 + threads)
        XCTAssertEqual(root.summary(of: UploadRate.self), 0)
        for album in albums { XCTAssertEqual(album.summary(of: PhotosSkipped.self), perThread * 2 + 1) }
        #if PROGRESSTREE_INTERNAL_CHECKS
        root.checkInvariants()
        #endif
    }
}
