import ProgressTree
import XCTest

/// A failed or cancelled child's unfinished share is not work remaining: the time left of a parent is that
/// of the work still running (Docs/Descriptions.md, "Estimates").
final class FailedWorkEstimatesTests: XCTestCase {
    private struct NotFound: Error {}

    /// fetch of a 30 MB file at 3 MB/s beside a URL that answers 404: the root's time remaining follows
    /// the running download's through the whole transfer, not twice it.
    func test_a_roots_time_remaining_is_its_running_childs_once_a_sibling_failed() throws {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.estimationClock = clock
        let download = ProgressNode(totalUnitCount: 30_000_000, parent: root, pendingUnitCount: 1)
        let missing = ProgressNode(totalUnitCount: -1, parent: root, pendingUnitCount: 1)
        _ = root.estimatedTimeRemaining  // the first samples
        _ = download.estimatedTimeRemaining
        missing.fail(NotFound())
        for second in 1...9 {
            clock.advance(by: .seconds(1))
            download.advance(by: 3_000_000)
            let running = try XCTUnwrap(download.estimatedTimeRemaining)
            let whole = try XCTUnwrap(root.estimatedTimeRemaining)
            XCTAssertEqual(running, Double(10 - second), accuracy: 0.5, "second \(second)")
            XCTAssertLessThanOrEqual(whole, running * 1.25 + 1, "second \(second): root \(whole), download \(running)")
            XCTAssertGreaterThanOrEqual(whole, running - 1, "second \(second)")
        }
        clock.advance(by: .seconds(1))
        download.advance(by: 3_000_000)
        XCTAssertTrue(download.isFinished)
        XCTAssertFalse(root.isFinished, "half of it failed: it never finishes")
        XCTAssertEqual(root.fractionCompleted, 0.5)
        XCTAssertEqual(root.estimatedTimeRemaining, 0, "nothing left to wait for")
    }

    /// A child cancelled on its own stays attached but never finishes: its undone share is not work left
    /// for its parent either, which goes on with the others.
    func test_a_roots_time_remaining_leaves_out_a_child_cancelled_on_its_own() throws {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.estimationClock = clock
        let download = ProgressNode(totalUnitCount: 30_000_000, parent: root, pendingUnitCount: 1)
        let other = ProgressNode(totalUnitCount: 30_000_000, parent: root, pendingUnitCount: 1)
        other.advance(by: 3_000_000)  // a tenth done, before the first samples
        other.cancel()
        _ = root.estimatedTimeRemaining
        _ = download.estimatedTimeRemaining
        XCTAssertFalse(root.isCancelled)
        for second in 1...8 {
            clock.advance(by: .seconds(1))
            download.advance(by: 3_000_000)
            let running = try XCTUnwrap(download.estimatedTimeRemaining)
            let whole = try XCTUnwrap(root.estimatedTimeRemaining)
            XCTAssertLessThanOrEqual(whole, running * 1.25 + 1, "second \(second): root \(whole), download \(running)")
            XCTAssertGreaterThanOrEqual(whole, running - 1, "second \(second)")
        }
    }

    /// A child that failed halfway leaves its undone half out of the remaining work, and keeps its done half.
    func test_a_child_that_failed_halfway_leaves_only_its_undone_part_out() throws {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.estimationClock = clock
        let running = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        let broken = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)
        _ = root.estimatedTimeRemaining  // the first samples
        _ = running.estimatedTimeRemaining
        clock.advance(by: .seconds(1))
        running.advance(by: 10)
        broken.advance(by: 50)
        _ = root.fractionCompleted
        broken.fail(NotFound())
        XCTAssertEqual(root.fractionCompleted, 0.3, accuracy: 1e-12)
        for _ in 1...8 {  // read every second, as a display does
            _ = root.estimatedTimeRemaining
            _ = running.estimatedTimeRemaining
            clock.advance(by: .seconds(1))
            running.advance(by: 5)
        }
        running.advance(by: 10)  // 10 + 8 × 5 + 10 = 60 of 100
        // Both estimate the same work: the running child's 40 units left, at its rate; the root's 0.4 of a
        // unit left (1 − 0.6 of the running child's unit), the failed child's undone half left out.
        let child = try XCTUnwrap(running.estimatedTimeRemaining)
        let whole = try XCTUnwrap(root.estimatedTimeRemaining)
        XCTAssertLessThanOrEqual(whole, child * 1.25 + 1, "root \(whole), child \(child)")
        XCTAssertGreaterThanOrEqual(whole, child - 1, "root \(whole), child \(child)")
    }
}
