import ProgressTree
import XCTest

/// `description` and `debugDescription`: the subtree as indented text, with each child's share of its
/// parent, fraction, counts and state (Docs/Migrating.md, "Counts and state").
final class TreeDescriptionTests: XCTestCase {
    /// The example of the doc comment of `description`: a finished child is no longer part of the tree.
    func test_description_prints_the_subtree_with_portion_fraction_counts_and_state() {
        let photo = ProgressNode(totalUnitCount: 10)
        let download = ProgressNode(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        let filter = ProgressNode(totalUnitCount: 1, parent: photo, pendingUnitCount: 1)
        download.completedUnitCount = 1_000_000
        filter.pause()
        XCTAssertEqual(
            photo.description,
            """
            ProgressNode: 45.00% (0 of 10)
              portion 9: 50.00% (1000000 of 2000000)
              portion 1: 0.00% (0 of 1), paused
            """)
        download.completedUnitCount = 2_000_000  // finished: detached, so no longer part of the tree
        photo.cancel()
        XCTAssertEqual(
            photo.description,
            """
            ProgressNode: 90.00% (9 of 10), cancelled
              portion 1: 0.00% (0 of 1), paused, cancelled
            """)
        XCTAssertEqual(photo.debugDescription, photo.description)
        XCTAssertEqual(ProgressNode(totalUnitCount: -1).description, "ProgressNode: 0.00% (0 of -1), indeterminate")
    }
}
