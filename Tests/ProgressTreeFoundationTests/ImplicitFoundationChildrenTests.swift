import Foundation
import ProgressTree
@testable import ProgressTreeFoundation
import XCTest

/// `ProgressNode.adoptsImplicitFoundationChildren`: a `Progress(totalUnitCount:)` created while a node is
/// current on the thread attaches to it, as to a current NSProgress.
final class ImplicitFoundationChildrenTests: XCTestCase {
    override func setUp() {
        ProgressNode.adoptsImplicitFoundationChildren = true
    }

    override func tearDown() {
        ProgressNode.adoptsImplicitFoundationChildren = false
    }

    /// A program that links this module and never chose gets Foundation children of current nodes.
    func test_foundation_children_of_current_nodes_attach_by_default_in_a_program_linking_the_module() {
        ImplicitScope.forgetCompanionChoice()
        XCTAssertTrue(ProgressNode.adoptsImplicitFoundationChildren)
        let export = ProgressNode(totalUnitCount: 10)
        export.performAsCurrent(withPendingUnitCount: 10) { resize(4) }
        XCTAssertEqual(export.completedUnitCount, 10)
        ProgressNode.adoptsImplicitFoundationChildren = false
        XCTAssertFalse(ProgressNode.adoptsImplicitFoundationChildren, "a choice stays")
    }

    /// A library function that knows nothing of ProgressTree.
    private func resize(_ images: Int) {
        let progress = Progress(totalUnitCount: Int64(images))  // attaches to the current progress
        for _ in 0..<images { progress.completedUnitCount += 1 }
    }

    func test_a_foundation_progress_created_in_perform_as_current_attaches_with_the_pending_count() {
        let export = ProgressNode(totalUnitCount: 10)
        export.performAsCurrent(withPendingUnitCount: 6) {
            let progress = Progress(totalUnitCount: 4)
            progress.completedUnitCount = 2
            ProgressSampler.shared.sampleNow()
            XCTAssertEqual(export.fractionCompleted, 0.3, "6 × 0.5 of 10")
            XCTAssertEqual(export.children.map(\.totalUnitCount), [4])
            progress.completedUnitCount = 4
        }
        XCTAssertEqual(export.completedUnitCount, 6, "finished in the scope: credited when the scope returns")
        XCTAssertEqual(export.children.count, 0)
    }

    func test_become_current_and_resign_current_bridge_too() {
        let export = ProgressNode(totalUnitCount: 10)
        export.becomeCurrent(withPendingUnitCount: 6)
        XCTAssertTrue(Progress.current() is ScopeProgress)
        resize(3)
        export.resignCurrent()
        XCTAssertNil(Progress.current())
        XCTAssertEqual(export.completedUnitCount, 6)
    }

    func test_a_progress_created_first_claims_the_scope_and_a_later_node_does_not_attach() {
        let parent = ProgressNode(totalUnitCount: 10)
        let node = parent.performAsCurrent(withPendingUnitCount: 10) { () -> ProgressNode in
            _ = Progress(totalUnitCount: 1)
            return ProgressNode(totalUnitCount: 1)
        }
        node.advance()
        XCTAssertEqual(parent.fractionCompleted, 0, "the node did not attach")
        XCTAssertEqual(parent.children.count, 1, "the Progress did")
    }

    func test_a_node_created_first_claims_the_scope_and_a_later_progress_stays_a_root() {
        let parent = ProgressNode(totalUnitCount: 10)
        let (node, progress) = parent.performAsCurrent(withPendingUnitCount: 10) {
            (ProgressNode(totalUnitCount: 1), Progress(totalUnitCount: 1))
        }
        progress.completedUnitCount = 1
        ProgressSampler.shared.sampleNow()
        XCTAssertEqual(parent.fractionCompleted, 0, "the Progress did not attach")
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
        node.advance()
        XCTAssertEqual(parent.completedUnitCount, 10)
    }

    func test_a_scope_no_progress_attached_to_is_credited_at_its_end() {
        let job = ProgressNode(totalUnitCount: 10)
        job.performAsCurrent(withPendingUnitCount: 4) {}
        XCTAssertEqual(job.completedUnitCount, 4)
    }

    func test_nested_scopes_attach_to_the_innermost() {
        let outer = ProgressNode(totalUnitCount: 2)
        let inner = ProgressNode(totalUnitCount: 1, parent: outer, pendingUnitCount: 1)
        let progress = outer.performAsCurrent(withPendingUnitCount: 1) {
            inner.performAsCurrent(withPendingUnitCount: 1) { Progress(totalUnitCount: 2) }
        }
        XCTAssertEqual(inner.children.count, 1)
        progress.completedUnitCount = 1
        ProgressSampler.shared.sampleNow()
        XCTAssertEqual(inner.fractionCompleted, 0.5)
        XCTAssertEqual(outer.fractionCompleted, 0.75, "the outer scope, unclaimed, was credited at its end")
        progress.completedUnitCount = 2
        ProgressSampler.shared.sampleNow()
        XCTAssertTrue(outer.isFinished)
    }

    func test_the_synchronous_with_current_bridges_on_its_thread() {
        let job = ProgressNode(totalUnitCount: 2)
        job.withCurrent(pendingUnitCount: 2) { resize(5) }
        XCTAssertEqual(job.completedUnitCount, 2)
        XCTAssertTrue(job.isFinished)
    }

    func test_the_async_with_current_does_not_make_a_foundation_progress_current() async {
        let job = ProgressNode(totalUnitCount: 2)
        let current = await job.withCurrent(pendingUnitCount: 2) { () async -> Bool in
            await Task.yield()
            return Self.foundationProgressIsCurrent()
        }
        XCTAssertFalse(current)
        XCTAssertEqual(job.completedUnitCount, 2, "unclaimed: credited at the end")
    }

    /// `Progress.current()`, which is `noasync`, from a synchronous function an `async` one may call.
    private static func foundationProgressIsCurrent() -> Bool {
        Progress.current() != nil
    }

    func test_without_the_switch_a_foundation_progress_does_not_attach() {
        ProgressNode.adoptsImplicitFoundationChildren = false
        let parent = ProgressNode(totalUnitCount: 10)
        let progress = parent.performAsCurrent(withPendingUnitCount: 10) { Progress(totalUnitCount: 1) }
        XCTAssertEqual(parent.completedUnitCount, 10, "credited at the end: nothing attached")
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
    }

    func test_cancelling_the_node_cancels_a_progress_adopted_from_its_scope() {
        let parent = ProgressNode(totalUnitCount: 1)
        let progress = parent.performAsCurrent(withPendingUnitCount: 1) { Progress(totalUnitCount: 5) }
        parent.cancel()
        XCTAssertTrue(progress.isCancelled)
        ProgressSampler.shared.sampleNow()
        XCTAssertFalse(ProgressSampler.shared.isMirroring(progress))
    }
}
