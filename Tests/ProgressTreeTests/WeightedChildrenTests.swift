import ProgressTree
import XCTest

/// Weighted children: how a parent's `fractionCompleted` and `completedUnitCount` follow its children.
///
/// Unless a comment says otherwise, every expected `Double` below is exact: the numbers are chosen so that
/// each step of `(completed + Σ pendingᵢ × fractionᵢ) / total` either is exact in binary floating point or
/// is a single correctly rounded division, which yields the same `Double` as the decimal literal (or the
/// same expression) written in the test.
final class WeightedChildrenTests: XCTestCase {
    // MARK: The photo import (download 9 units + filter 1 unit of a photo of 10)

    func test_photo_import_download_and_filter_checked_at_several_points() {
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        let filter = ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 1)

        XCTAssertEqual(photo.fractionCompleted, 0)
        XCTAssertEqual(photo.completedUnitCount, 0)
        XCTAssertFalse(photo.isFinished)

        download.completedUnitCount = 500_000  // 25% of 9 units of 10
        XCTAssertEqual(download.fractionCompleted, 0.25)
        XCTAssertEqual(photo.fractionCompleted, 0.225)
        XCTAssertEqual(photo.completedUnitCount, 0, "partial child progress never shows in completedUnitCount")

        download.completedUnitCount = 1_000_000  // 50%
        XCTAssertEqual(photo.fractionCompleted, 0.45)
        XCTAssertEqual(photo.completedUnitCount, 0)

        download.advance(by: 500_000)  // 75%
        XCTAssertEqual(photo.fractionCompleted, 0.675)

        download.completedUnitCount = 2_000_000  // download finished: its 9 units are credited
        XCTAssertTrue(download.isFinished)
        XCTAssertEqual(photo.completedUnitCount, 9)
        XCTAssertEqual(photo.fractionCompleted, 0.9)
        XCTAssertFalse(photo.isFinished)

        filter.advance()
        XCTAssertEqual(photo.completedUnitCount, 10)
        XCTAssertEqual(photo.fractionCompleted, 1.0)
        XCTAssertTrue(photo.isFinished)
    }

    func test_photo_import_filter_progress_before_download_finishes() {
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: 4, parent: photo, pendingUnitCount: 9)
        let filter = ProgressNode(totalUnitCount: 2, parent: photo, pendingUnitCount: 1)

        download.completedUnitCount = 2  // 9 × 0.5 = 4.5
        filter.completedUnitCount = 1  // 1 × 0.5 = 0.5
        XCTAssertEqual(photo.fractionCompleted, 0.5)
        XCTAssertEqual(photo.completedUnitCount, 0)

        filter.completedUnitCount = 2  // filter finished first: 1 unit credited, download still counts 4.5
        XCTAssertEqual(photo.completedUnitCount, 1)
        XCTAssertEqual(photo.fractionCompleted, 0.55)

        download.completedUnitCount = 4
        XCTAssertEqual(photo.completedUnitCount, 10)
        XCTAssertEqual(photo.fractionCompleted, 1.0)
        XCTAssertTrue(photo.isFinished)
    }

    /// An album of four photos, each a download of 9 and a filter of 1 out of 10, each photo 1 of 4.
    func test_album_of_several_photos() {
        let album = ProgressNode(totalUnitCount: 4)
        var downloads: [ProgressNode] = []
        var filters: [ProgressNode] = []
        for _ in 0..<4 {
            let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
            downloads.append(ProgressNode(totalUnitCount: 100, parent: photo, pendingUnitCount: 9))
            filters.append(ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 1))
        }
        XCTAssertEqual(album.fractionCompleted, 0)

        downloads[0].completedUnitCount = 50  // photo 0 at 0.45; the album at 0.45 / 4
        XCTAssertEqual(album.fractionCompleted, 0.45 / 4)
        XCTAssertEqual(album.fractionCompleted, 0.1125)  // dividing by 4 is exact

        downloads[0].completedUnitCount = 100
        filters[0].advance()  // photo 0 finished: 1 unit of the album
        XCTAssertEqual(album.completedUnitCount, 1)
        XCTAssertEqual(album.fractionCompleted, 0.25)

        downloads[1].completedUnitCount = 100  // photo 1 at 0.9
        downloads[2].completedUnitCount = 50  // photo 2 at 0.45
        // (1 + (0.9 + 0.45)) / 4: own units plus the children's sum, as the formula says. Neither 0.9 nor 0.45
        // is exact in binary, but the same Double operations in the same order give the same Double: the sum
        // of two contributions (plus zeros) does not depend on the order they are added in.
        XCTAssertEqual(album.fractionCompleted, (1 + (0.9 + 0.45)) / 4)
        XCTAssertEqual(album.completedUnitCount, 1)

        for node in downloads + filters { node.completedUnitCount = node.totalUnitCount }
        XCTAssertEqual(album.completedUnitCount, 4)
        XCTAssertEqual(album.fractionCompleted, 1.0)
        XCTAssertTrue(album.isFinished)
    }

    // MARK: Re-weighting

    func test_changing_the_parent_total_reweights_the_child() {
        let parent = ProgressNode(totalUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 10)
        child.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.05)

        parent.totalUnitCount = 200  // the child's 10 units are now 10 of 200: its contribution halves
        XCTAssertEqual(parent.fractionCompleted, 0.025)
        XCTAssertEqual(child.fractionCompleted, 0.5)

        parent.totalUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.1)

        parent.completedUnitCount = 20  // own units and the child's share add up: (20 + 5) / 50
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_changing_the_child_total_reweights_the_parent() {
        let parent = ProgressNode(totalUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 100, parent: parent, pendingUnitCount: 10)
        child.completedUnitCount = 50

        child.totalUnitCount = 200  // the child is now 25% done
        XCTAssertEqual(child.fractionCompleted, 0.25)
        XCTAssertEqual(parent.fractionCompleted, 0.025)

        child.totalUnitCount = 100
        XCTAssertEqual(child.fractionCompleted, 0.5)
        XCTAssertEqual(parent.fractionCompleted, 0.05)

        child.totalUnitCount = 50  // lowering the total to the completed count finishes the child
        XCTAssertTrue(child.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 10)
        XCTAssertEqual(parent.fractionCompleted, 0.1)
    }

    // MARK: Adding children that already made progress

    func test_adding_an_already_partial_child_counts_at_once() {
        let parent = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 100)
        child.completedUnitCount = 50
        parent.addChild(child, withPendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        XCTAssertEqual(parent.completedUnitCount, 0)
    }

    func test_adding_an_already_finished_child_credits_its_pending_count_and_does_not_retain_it() {
        let parent = ProgressNode(totalUnitCount: 4)
        weak var weakChild: ProgressNode?
        do {
            let child = ProgressNode(totalUnitCount: 100)
            child.completedUnitCount = 100
            weakChild = child
            parent.addChild(child, withPendingUnitCount: 1)
            XCTAssertEqual(parent.completedUnitCount, 1)
        }
        // Checked before any read of the parent: a read must not be what lets the child go.
        XCTAssertNil(weakChild, "the parent must not retain a child that was already finished when added")
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.25)
    }

    // MARK: Port of swift-corelibs-foundation's TestProgress (exact values instead of accuracy: 0.01)

    func test_foundation_totalCompletedChangeAffectsFractionCompleted() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        parent.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        parent.completedUnitCount = 0

        parent.becomeCurrent(withPendingUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 100)
        parent.resignCurrent()
        child.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.05)
        XCTAssertEqual(child.fractionCompleted, 0.5)

        parent.totalUnitCount = 200
        XCTAssertEqual(parent.fractionCompleted, 0.025)
        XCTAssertEqual(child.fractionCompleted, 0.5)

        child.totalUnitCount = 200
        XCTAssertEqual(child.fractionCompleted, 0.25)
        XCTAssertEqual(parent.fractionCompleted, 0.0125)

        child.totalUnitCount = 100
        XCTAssertEqual(child.fractionCompleted, 0.5)
        XCTAssertEqual(parent.fractionCompleted, 0.025)
    }

    func test_foundation_childrenAffectFractionCompleted_explicit() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        XCTAssertEqual(parent.fractionCompleted, 0)

        let child1 = ProgressNode(totalUnitCount: 100)
        parent.addChild(child1, withPendingUnitCount: 10)
        child1.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.05)

        child1.completedUnitCount = 100
        XCTAssertEqual(parent.fractionCompleted, 0.10)
        XCTAssertEqual(parent.completedUnitCount, 10)

        let child2 = ProgressNode(totalUnitCount: 100)
        parent.addChild(child2, withPendingUnitCount: 90)
        child2.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.55)  // (10 + 90 × 0.5) / 100
    }

    func test_foundation_childrenAffectFractionCompleted_explicit_partial() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child1 = ProgressNode(totalUnitCount: 100)
        parent.addChild(child1, withPendingUnitCount: 1)
        child1.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.25)

        let child2 = ProgressNode(totalUnitCount: 100)
        child2.completedUnitCount = 50
        parent.addChild(child2, withPendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_foundation_childrenAffectFractionCompleted_explicit_child_already_complete() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 100)
        child.completedUnitCount = 100
        parent.addChild(child, withPendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
        XCTAssertEqual(parent.completedUnitCount, 1)
    }

    func test_foundation_grandchildrenAffectFractionCompleted_explicit() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 100)
        parent.addChild(child, withPendingUnitCount: 100)
        let grandchild = ProgressNode(totalUnitCount: 100)
        child.addChild(grandchild, withPendingUnitCount: 100)
        XCTAssertEqual(parent.fractionCompleted, 0)

        grandchild.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_foundation_grandchildrenAffectFractionCompleted_implicit() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        parent.becomeCurrent(withPendingUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 100)
        parent.resignCurrent()
        child.becomeCurrent(withPendingUnitCount: 100)
        let grandchild = ProgressNode(totalUnitCount: 100)
        child.resignCurrent()
        XCTAssertEqual(parent.fractionCompleted, 0)

        grandchild.completedUnitCount = 50
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_foundation_mixedExplicitAndImplicitChildren() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 3)
        let child1 = ProgressNode(totalUnitCount: 10)
        let child2 = ProgressNode(totalUnitCount: 10)
        parent.addChild(child1, withPendingUnitCount: 1)
        parent.addChild(child2, withPendingUnitCount: 1)

        child1.completedUnitCount = 5
        XCTAssertEqual(parent.fractionCompleted, 1.0 / 6.0)  // 0.5 / 3, one correctly rounded division

        child2.completedUnitCount = 5
        XCTAssertEqual(parent.fractionCompleted, 1.0 / 3.0)  // 1 / 3

        parent.becomeCurrent(withPendingUnitCount: 1)
        let child3 = ProgressNode(totalUnitCount: 10)
        parent.resignCurrent()
        XCTAssertEqual(parent.fractionCompleted, 1.0 / 3.0, "a child with no progress adds nothing")

        child3.completedUnitCount = 5
        XCTAssertEqual(parent.fractionCompleted, 0.5)  // 1.5 / 3

        child3.completedUnitCount = 10
        XCTAssertTrue(child3.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 2.0 / 3.0)  // (1 + 1) / 3

        child2.completedUnitCount = 10
        XCTAssertTrue(child2.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 2)
        XCTAssertEqual(parent.fractionCompleted, 5.0 / 6.0)  // (2 + 0.5) / 3

        child1.completedUnitCount = 10
        XCTAssertTrue(child1.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(parent.completedUnitCount, parent.totalUnitCount)
    }

    func test_foundation_childCompletionFinishesGroups() {
        let root = ProgressNode(totalUnitCount: 2)
        let child1 = ProgressNode(totalUnitCount: 1)
        let child2 = ProgressNode(totalUnitCount: 1)
        root.addChild(child1, withPendingUnitCount: 1)
        root.addChild(child2, withPendingUnitCount: 1)

        child1.completedUnitCount = 1
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertEqual(root.completedUnitCount, 1)
        XCTAssertFalse(root.isFinished)

        child2.completedUnitCount = 1
        XCTAssertEqual(root.fractionCompleted, 1.0)
        XCTAssertEqual(root.completedUnitCount, 2)
        XCTAssertTrue(root.isFinished)
    }

    func test_foundation_multipleChildren_only_the_first_implicit_child_counts() {
        let progress = ProgressNode.discreteProgress(totalUnitCount: 100)
        progress.becomeCurrent(withPendingUnitCount: 100)
        let child1 = ProgressNode(totalUnitCount: 5)
        let child2 = ProgressNode(totalUnitCount: 5)
        XCTAssertEqual(progress.fractionCompleted, 0)

        child2.completedUnitCount = 5
        XCTAssertEqual(progress.fractionCompleted, 0, "the second node created in the scope is not attached")

        _ = ProgressNode(totalUnitCount: 5)
        XCTAssertEqual(progress.fractionCompleted, 0)
        progress.resignCurrent()
        XCTAssertEqual(progress.completedUnitCount, 0, "the share was claimed, so resigning credits nothing")

        child1.completedUnitCount = 5
        XCTAssertEqual(progress.fractionCompleted, 1.0)
        XCTAssertEqual(progress.completedUnitCount, 100)
    }

    func test_foundation_indeterminate_children_contribute_zero() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 100)
        let child1 = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 50)
        let child2 = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 50)
        XCTAssertEqual(parent.fractionCompleted, 0)

        child1.completedUnitCount = 1
        child2.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.5)

        child1.completedUnitCount = -1  // indeterminate: contributes 0
        XCTAssertTrue(child1.isIndeterminate)
        XCTAssertEqual(child1.fractionCompleted, 0)
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        XCTAssertFalse(parent.isIndeterminate, "an indeterminate child does not make its parent indeterminate")

        child1.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.5)

        child2.totalUnitCount = -1  // indeterminate through the total this time
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        XCTAssertFalse(parent.isIndeterminate)

        child2.totalUnitCount = 0  // 1 of 0 is finished: credits its 50 units
        XCTAssertTrue(child2.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 50)
        XCTAssertEqual(parent.fractionCompleted, 0.75)
    }

    func test_a_zero_of_zero_child_is_indeterminate_and_contributes_zero() {
        let parent = ProgressNode(totalUnitCount: 4)
        let child = ProgressNode(totalUnitCount: 0, parent: parent, pendingUnitCount: 2)
        XCTAssertTrue(child.isIndeterminate)
        XCTAssertFalse(child.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertFalse(parent.isIndeterminate)
        XCTAssertEqual(parent.completedUnitCount, 0)
    }

    /// Foundation moves the parent back when a finished child is reset; here finishing is permanent.
    func test_foundation_indeterminateChildrenAffectFractionCompleted_but_finishing_is_permanent() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1000)
        parent.becomeCurrent(withPendingUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 10)
        parent.resignCurrent()

        child.completedUnitCount = 5
        XCTAssertEqual(parent.fractionCompleted, 0.05)

        child.completedUnitCount = -1
        XCTAssertEqual(parent.fractionCompleted, 0, "an unfinished child that becomes indeterminate counts 0")

        child.completedUnitCount = 10
        XCTAssertEqual(parent.fractionCompleted, 0.1)
        XCTAssertEqual(parent.completedUnitCount, 100)

        // Foundation reports 0.0 here; the contract says the parent does not move.
        child.completedUnitCount = -1
        XCTAssertEqual(parent.fractionCompleted, 0.1)
        XCTAssertEqual(parent.completedUnitCount, 100)
        child.completedUnitCount = 0
        child.totalUnitCount = 1000
        XCTAssertEqual(parent.fractionCompleted, 0.1)
        XCTAssertEqual(parent.completedUnitCount, 100)
        child.completedUnitCount = 1000  // finishing again credits nothing a second time
        XCTAssertEqual(parent.completedUnitCount, 100)
        XCTAssertEqual(parent.fractionCompleted, 0.1)
    }

    // MARK: Overshoot and extremes

    func test_overshoot_is_clamped_and_raw_counts_are_kept() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = 15
        XCTAssertEqual(node.completedUnitCount, 15)
        XCTAssertEqual(node.totalUnitCount, 10)
        XCTAssertEqual(node.fractionCompleted, 1.0)
        XCTAssertTrue(node.isFinished)

        node.advance(by: 5)
        XCTAssertEqual(node.completedUnitCount, 20)
        XCTAssertEqual(node.fractionCompleted, 1.0)
    }

    func test_overshooting_child_credits_only_its_pending_count() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 4, parent: parent, pendingUnitCount: 5)
        child.completedUnitCount = 9
        XCTAssertEqual(child.completedUnitCount, 9)
        XCTAssertEqual(child.fractionCompleted, 1.0)
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_children_whose_shares_overshoot_the_parent_total_are_clamped() {
        let parent = ProgressNode(totalUnitCount: 4)
        let child1 = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 4)
        let child2 = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 4)
        child1.completedUnitCount = 1
        child2.completedUnitCount = 1  // 2 + 2 of 4: exactly 1 without being finished
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertFalse(parent.isFinished)
        parent.completedUnitCount = 3  // 3 + 4 of 4: clamped
        XCTAssertEqual(parent.fractionCompleted, 1.0)
        XCTAssertEqual(parent.completedUnitCount, 3)
    }

    func test_int64_max_total_gives_finite_fractions() {
        let node = ProgressNode.discreteProgress(totalUnitCount: .max)
        XCTAssertEqual(node.fractionCompleted, 0)
        node.completedUnitCount = .max / 2
        // Double(Int64.max) == 2^63 and Double(Int64.max / 2) == 2^62 after rounding to 53 bits: exactly 0.5.
        XCTAssertEqual(node.fractionCompleted, 0.5)
        XCTAssertFalse(node.isFinished)
        node.completedUnitCount = .max - 1
        // Rounding is inherent here: 2^63 - 2 and 2^63 - 1 both become 2^63 as Doubles, so the quotient is
        // exactly 1.0 although the node is one unit short of finished.
        XCTAssertEqual(node.fractionCompleted, 1.0)
        XCTAssertFalse(node.isFinished)
        XCTAssertFalse(node.isIndeterminate)
        node.advance(by: 1)
        XCTAssertEqual(node.completedUnitCount, .max)
        XCTAssertTrue(node.isFinished)
        XCTAssertEqual(node.fractionCompleted, 1.0)
    }

    func test_advance_saturates_at_int64_max_and_min() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10)
        node.completedUnitCount = .max - 1
        node.advance(by: 10)
        XCTAssertEqual(node.completedUnitCount, .max)
        node.advance(by: .max)
        XCTAssertEqual(node.completedUnitCount, .max)
        XCTAssertEqual(node.fractionCompleted, 1.0)

        node.completedUnitCount = .min + 1
        node.advance(by: -10)
        XCTAssertEqual(node.completedUnitCount, .min)
        node.advance(by: .min)
        XCTAssertEqual(node.completedUnitCount, .min)
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertEqual(node.fractionCompleted, 0)

        node.advance(by: .max)  // .min + .max == -1: no overflow, an exact sum
        XCTAssertEqual(node.completedUnitCount, -1)
    }

    func test_int64_min_counts_are_indeterminate() {
        let node = ProgressNode.discreteProgress(totalUnitCount: .min)
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertFalse(node.isFinished)
        XCTAssertEqual(node.fractionCompleted, 0)
        node.completedUnitCount = .max
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertEqual(node.fractionCompleted, 0)

        node.totalUnitCount = .max
        node.completedUnitCount = .min
        XCTAssertTrue(node.isIndeterminate)
        XCTAssertEqual(node.fractionCompleted, 0)
    }

    func test_int64_extremes_in_a_tree_never_trap_and_stay_within_0_and_1() {
        // A child standing for Int64.max units of a parent of 1 unit: the weighted share is ~9.2e18 units.
        let small = ProgressNode(totalUnitCount: 1)
        let huge = ProgressNode(totalUnitCount: 2, parent: small, pendingUnitCount: .max)
        huge.completedUnitCount = 1
        XCTAssertEqual(small.fractionCompleted, 1.0)
        XCTAssertFalse(small.isFinished)
        XCTAssertEqual(small.completedUnitCount, 0)
        huge.completedUnitCount = 2  // credits Int64.max to a parent with 0: no overflow
        XCTAssertEqual(small.completedUnitCount, .max)
        XCTAssertTrue(small.isFinished)

        // Two Int64.max credits saturate instead of trapping.
        let parent = ProgressNode(totalUnitCount: .max)
        let a = ProgressNode(totalUnitCount: .max, parent: parent, pendingUnitCount: .max)
        let b = ProgressNode(totalUnitCount: .max, parent: parent, pendingUnitCount: .max)
        a.completedUnitCount = .max / 2
        b.completedUnitCount = .max / 2
        let both = parent.fractionCompleted
        XCTAssertTrue(both.isFinite)
        XCTAssertEqual(both, 1.0)  // 2 × 2^62 of 2^63, in Doubles
        a.completedUnitCount = .max
        XCTAssertEqual(parent.completedUnitCount, .max)
        XCTAssertTrue(parent.isFinished)
        b.completedUnitCount = .max  // b is still attached; its credit saturates
        XCTAssertEqual(parent.completedUnitCount, .max)
        XCTAssertEqual(parent.fractionCompleted, 1.0)

        // Every fraction over a spread of extreme pairs stays finite and within 0...1.
        let values: [Int64] = [.min, .min + 1, -1, 0, 1, 2, .max / 2, .max - 1, .max]
        for total in values {
            for completed in values {
                let node = ProgressNode.discreteProgress(totalUnitCount: total)
                node.completedUnitCount = completed
                let fraction = node.fractionCompleted
                XCTAssertTrue(
                    fraction.isFinite && fraction >= 0 && fraction <= 1, "(\(completed), \(total)) -> \(fraction)")
            }
        }
    }

    // MARK: The exact formula

    /// Docs/Composition.md: fraction = clamp((completed + Σ pendingᵢ × fractionᵢ) / total). When every child is
    /// back at 0 and the parent's own count is 0, the sum is exactly 0.
    func test_contributions_return_exactly_to_zero_when_every_child_is_back_at_zero() {
        let parent = ProgressNode(totalUnitCount: 4)
        let a = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        let b = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        _ = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0)
        a.completedUnitCount = 1
        _ = parent.fractionCompleted
        b.completedUnitCount = 2
        _ = parent.fractionCompleted
        a.completedUnitCount = 0
        _ = parent.fractionCompleted
        b.completedUnitCount = 0
        XCTAssertEqual(parent.fractionCompleted, 0, "(0 + 1×0 + 1×0 + 1×0 + 1×0) / 4")
    }

    /// A huge sibling's contribution does not swallow a small sibling's: once the huge child contributes 0
    /// again (indeterminate, or back at 0), the small child's 1 × 0.5 of 4 shows exactly.
    func test_a_huge_siblings_contribution_dropping_to_zero_leaves_a_small_siblings_progress_exact() {
        let drops: [(pending: Int64, String, (ProgressNode) -> Void)] = [
            (.max, "indeterminate", { $0.totalUnitCount = -1 }),
            (1 << 60, "back at 0", { $0.completedUnitCount = 0 }),
        ]
        for (pending, how, drop) in drops {
            let parent = ProgressNode(totalUnitCount: 4)
            let huge = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: pending)
            let small = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
            _ = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 1)
            _ = parent.fractionCompleted
            huge.completedUnitCount = 1
            XCTAssertEqual(parent.fractionCompleted, 1, "\(how): overshoot is clamped")
            small.completedUnitCount = 1
            _ = parent.fractionCompleted
            drop(huge)
            XCTAssertEqual(parent.fractionCompleted, 0.125, "\(how): (0 + \(pending)×0 + 1×0.5 + 1×0) / 4")
        }
    }

    // MARK: Re-weighting a parent

    /// A parent made indeterminate by its total reports 0, and gets its children's share back when its
    /// total is valid again.
    func test_parent_total_negative_then_positive_restores_the_childs_share() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 5)
        child.completedUnitCount = 1
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        parent.totalUnitCount = -1
        XCTAssertTrue(parent.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0)
        parent.totalUnitCount = 20
        XCTAssertFalse(parent.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0.125)
    }

    /// Lowering an attached parent's total to its completed count finishes it: it is credited to the
    /// grandparent and detached, while its own unfinished child stays attached to it.
    func test_lowering_an_attached_parents_total_finishes_it_into_the_grandparent() {
        let grandparent = ProgressNode(totalUnitCount: 4)
        let parent = ProgressNode(totalUnitCount: 10, parent: grandparent, pendingUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 2, parent: parent, pendingUnitCount: 5)
        parent.completedUnitCount = 5
        child.completedUnitCount = 1
        XCTAssertEqual(grandparent.fractionCompleted, 0.375, "2 × (5 + 2.5)/10 of 4")
        parent.totalUnitCount = 5
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(grandparent.completedUnitCount, 2)
        XCTAssertEqual(grandparent.fractionCompleted, 0.5)
        XCTAssertTrue(grandparent.children.isEmpty)
        XCTAssertEqual(parent.children.count, 1)
        child.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 10)
        XCTAssertEqual(grandparent.completedUnitCount, 2, "finishing is permanent for the grandparent")
    }

    /// A finished root whose total is raised is no longer finished.
    func test_raising_a_finished_roots_total_unfinishes_it() {
        let root = ProgressNode(totalUnitCount: 10)
        root.completedUnitCount = 10
        XCTAssertTrue(root.isFinished)
        root.totalUnitCount = 20
        XCTAssertFalse(root.isFinished)
        XCTAssertEqual(root.fractionCompleted, 0.5)
    }

    // MARK: A pending count of 0

    func test_addChild_with_pending_zero_counts_nothing_and_is_released_when_finished() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode.discreteProgress(totalUnitCount: 2)
        child.completedUnitCount = 1
        parent.addChild(child, withPendingUnitCount: 0)
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertEqual(parent.children.count, 1)
        child.completedUnitCount = 2
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertEqual(parent.fractionCompleted, 0)
        XCTAssertTrue(parent.children.isEmpty)
    }

    func test_finished_child_with_pending_zero_leaves_a_zero_total_parent_indeterminate() {
        let parent = ProgressNode(totalUnitCount: 0)
        let child = ProgressNode.discreteProgress(totalUnitCount: 1)
        child.completedUnitCount = 1
        parent.addChild(child, withPendingUnitCount: 0)
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertTrue(parent.isIndeterminate)
        XCTAssertFalse(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 0)
    }

    // MARK: Negative advances and Int64 extremes

    func test_a_child_advanced_below_zero_contributes_zero_then_finishes_normally() {
        let parent = ProgressNode(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 10, parent: parent, pendingUnitCount: 5)
        child.advance(by: 5)
        XCTAssertEqual(parent.fractionCompleted, 0.25)
        child.advance(by: -6)
        XCTAssertEqual(child.completedUnitCount, -1)
        XCTAssertTrue(child.isIndeterminate)
        XCTAssertEqual(parent.fractionCompleted, 0, "an indeterminate child contributes 0")
        XCTAssertFalse(parent.isIndeterminate)
        child.advance(by: 11)
        XCTAssertEqual(parent.completedUnitCount, 5)
        XCTAssertEqual(parent.fractionCompleted, 0.5)
    }

    func test_child_with_int64_max_pending_finishing_saturates_the_parent() {
        let parent = ProgressNode(totalUnitCount: .max)
        parent.completedUnitCount = .max - 1
        let child = ProgressNode(totalUnitCount: .max, parent: parent, pendingUnitCount: .max)
        child.completedUnitCount = .max - 1
        let fraction = parent.fractionCompleted
        XCTAssertTrue(fraction.isFinite && (0...1).contains(fraction))
        XCTAssertFalse(parent.isFinished)
        child.advance(by: .max)
        XCTAssertEqual(child.completedUnitCount, .max)
        XCTAssertEqual(parent.completedUnitCount, .max)
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(parent.fractionCompleted, 1)
    }

    // MARK: Attaching an operation's node (`ProgressReporting`)

    /// Docs/Composition.md, "`ProgressReporting`": an operation exposes its node, and a caller attaches it to its
    /// own tree.
    func test_progress_reporting_lets_a_caller_attach_an_operations_node() {
        struct Operation: ProgressTree.ProgressReporting {  // qualified: Foundation has one too
            let progress = ProgressNode(totalUnitCount: 4)
        }
        let operation = Operation()
        let reporter: any ProgressTree.ProgressReporting = operation
        let root = ProgressNode(totalUnitCount: 2)
        root.addChild(reporter.progress, withPendingUnitCount: 2)
        operation.progress.advance(by: 2)
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertTrue(reporter.progress === operation.progress)
    }
}
