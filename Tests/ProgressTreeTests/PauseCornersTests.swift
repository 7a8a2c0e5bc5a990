@testable import ProgressTree
import XCTest

/// Two corners of pausing that the library decides (Docs/Cancellation.md, "A finished node is not paused"
/// and "Only what is reached"): a held node's own pause, and a node let go before it finishes again.
final class PauseCornersTests: XCTestCase {
    /// A node finished into its parent while a child of its own still runs is held by the parent. Paused on
    /// its own (its pause passes down to its running child), it is resumed by an ancestor's `resume()` like
    /// any node the resume reaches, and so is its child.
    func test_an_ancestors_resume_reaching_a_held_node_resumes_its_own_pause() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let held = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let running = ProgressNode(totalUnitCount: 10, parent: held, pendingUnitCount: 0)
        held.completedUnitCount = 1  // finishes into the root; `running` is still attached below it
        XCTAssertTrue(held.isFinished)
        XCTAssertTrue(held.isHeld)
        held.pause()
        XCTAssertTrue(running.isPaused, "a finished node passes its own pause down")
        root.resume()  // the root was never paused: the resume still goes down
        XCTAssertFalse(running.isPaused)
        XCTAssertFalse(held.isPaused)
        // And a later pause of the root reaches it again.
        root.pause()
        XCTAssertTrue(running.isPaused)
    }

    /// A node its parent let go (it finished with nothing attached) is a root of its own. Reused, paused and
    /// finished again, it leaves the pause without passing it on: a child attached to it afterwards is not
    /// paused (nothing above it holds a pause for it).
    func test_a_node_let_go_that_finishes_again_while_paused_leaves_no_pause_for_later_children() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        let node = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        node.completedUnitCount = 1  // finished, let go
        XCTAssertFalse(node.isHeld)
        node.completedUnitCount = 0
        node.pause()
        XCTAssertTrue(node.isPaused)
        node.completedUnitCount = 1  // finishes again while paused: leaves the pause
        XCTAssertFalse(node.isPaused)
        let later = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 0)
        XCTAssertFalse(later.isPaused)
        XCTAssertFalse(root.isPaused)
    }

    /// The contrast: a node made as a root keeps the mark of a pause it finished in, so a child attached to
    /// it afterwards starts paused, until a `resume()` of the root.
    func test_a_root_that_finishes_while_paused_pauses_children_attached_later() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.pause()
        root.completedUnitCount = 1
        XCTAssertFalse(root.isPaused, "a finished node is not paused")
        let later = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        XCTAssertTrue(later.isPaused)
        root.resume()
        XCTAssertFalse(later.isPaused)
    }
}
