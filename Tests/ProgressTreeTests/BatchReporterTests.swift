@testable import ProgressTree
import Dispatch
import XCTest

/// `ProgressNode.BatchReporter` (SEMANTICS.md, "Tight loops"): publishes at visible steps, finishes the node
/// exactly at the last unit, publishes before answering a cancelled or paused loop, and when it goes away.
final class BatchReporterTests: XCTestCase {
    // MARK: Steps and lag

    func test_publishes_at_each_thousandth_of_the_total_and_not_between() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10_000)  // a step of 10 units
        var reporter = node.makeBatchReporter()
        XCTAssertEqual(counts(of: node, after: [9, 1, 15], through: &reporter), [0, 10, 20])
        XCTAssertEqual(node.fractionCompleted, 0.002)
        reporter.flush()
        XCTAssertEqual(node.completedUnitCount, 25)
    }

    /// At every unit of a whole run, the node is behind the loop by less than one step and never ahead,
    /// and it finishes at the last unit: not one call earlier.
    func test_readers_lag_by_less_than_one_step_and_the_node_finishes_at_exactly_the_last_unit() {
        for total: Int64 in [1, 7, 999, 1_000, 1_001, 10_005, 123_457] {
            let node = ProgressNode.discreteProgress(totalUnitCount: total)
            let step = max(1, total / 1_000)
            var reporter = node.makeBatchReporter()
            var maximumLag: Int64 = 0
            for reported in 1...total {
                reporter.advance()
                let lag = reported - node.completedUnitCount
                XCTAssert((0..<step).contains(lag), "total \(total), unit \(reported): lag \(lag)")
                maximumLag = max(maximumLag, lag)
                if node.isFinished != (reported == total) {
                    XCTFail("total \(total): finished \(node.isFinished) after \(reported) units")
                    break
                }
            }
            XCTAssertEqual(node.completedUnitCount, total)
            XCTAssertEqual(maximumLag, step - 1, "total \(total)")
        }
    }

    /// Steps are multiples of the step counted from 0, whatever the node had done before the reporter.
    func test_steps_are_counted_from_zero_when_the_node_had_units_already() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10_000)
        node.completedUnitCount = 3
        var reporter = node.makeBatchReporter()
        XCTAssertEqual(counts(of: node, after: [6, 1, 10], through: &reporter), [3, 10, 20])
    }

    func test_large_advances_publish_every_unit_at_once_and_finish_exactly() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)  // a step of 1,000 units
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 999)
        XCTAssertEqual(node.completedUnitCount, 0)
        reporter.advance(by: 2_500)
        XCTAssertEqual(node.completedUnitCount, 3_499, "all unpublished units, not only whole steps")
        reporter.advance(by: 996_000)
        XCTAssertEqual(node.completedUnitCount, 999_499)
        XCTAssertFalse(node.isFinished)
        reporter.advance(by: 501)
        XCTAssertEqual(node.completedUnitCount, 1_000_000)
        XCTAssertTrue(node.isFinished)
    }

    func test_a_node_without_a_positive_total_gets_every_unit() {
        let indeterminate = ProgressNode.discreteProgress(totalUnitCount: -1)
        var reporter = indeterminate.makeBatchReporter()
        reporter.advance()
        reporter.advance()
        XCTAssertEqual(indeterminate.completedUnitCount, 2)

        let empty = ProgressNode.discreteProgress(totalUnitCount: 0)
        var emptyReporter = empty.makeBatchReporter()
        XCTAssertFalse(empty.isFinished)
        emptyReporter.advance()
        XCTAssertTrue(empty.isFinished, "one unit of a zero total finishes the node")
    }

    func test_zero_units_change_nothing_and_negative_units_are_published_at_once() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 10_000)
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 0)
        reporter.advance(by: 5)
        XCTAssertEqual(node.completedUnitCount, 0)
        reporter.advance(by: -2)
        XCTAssertEqual(node.completedUnitCount, 3)
        reporter.advance(by: -5)
        XCTAssertEqual(node.completedUnitCount, -2)
        XCTAssertTrue(node.isIndeterminate)
    }

    func test_sums_saturate_as_the_nodes_own_advance_does() {
        let node = ProgressNode.discreteProgress(totalUnitCount: -1)
        var reporter = node.makeBatchReporter()
        reporter.advance(by: .max)
        reporter.advance(by: .max)
        XCTAssertEqual(node.completedUnitCount, .max)

        let large = ProgressNode.discreteProgress(totalUnitCount: .max)  // a step of 9.2e15 units
        var largeReporter = large.makeBatchReporter()
        largeReporter.advance(by: 5)
        largeReporter.advance(by: .max - 1)  // 5 + (max - 1) overflows: published as two saturating adds
        XCTAssertEqual(large.completedUnitCount, .max)
        XCTAssertTrue(large.isFinished)
    }

    // MARK: The node finishing

    func test_a_child_finishes_into_its_parent_at_its_last_unit() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let child = ProgressNode(totalUnitCount: 2_500, parent: root, pendingUnitCount: 10)
        root.withBatchReporter { _ in }  // a reporter that reports nothing publishes nothing
        child.withBatchReporter { reporter in
            for _ in 0..<2_499 { reporter.advance() }
            XCTAssertEqual(child.completedUnitCount, 2_498, "a step of 2 units")
            XCTAssertEqual(root.completedUnitCount, 0)
            reporter.advance()
            XCTAssertTrue(child.isFinished)
            XCTAssertEqual(root.completedUnitCount, 10)
            XCTAssertTrue(root.isFinished)
        }
    }

    /// The reporter plans from the counts it read at its last publication: a total lowered by someone else
    /// is seen at the next one, at most a step later, and `flush()` plans from it at once.
    func test_a_total_changed_meanwhile_is_seen_at_the_next_publication_or_flush() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 100_000)  // a step of 100 units
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 50)
        node.totalUnitCount = 60
        for _ in 0..<49 { reporter.advance() }
        XCTAssertEqual(node.completedUnitCount, 0, "still planned from the old total")
        reporter.advance()
        XCTAssertEqual(node.completedUnitCount, 100)
        XCTAssertTrue(node.isFinished)

        let other = ProgressNode.discreteProgress(totalUnitCount: 100_000)
        var otherReporter = other.makeBatchReporter()
        otherReporter.advance(by: 50)
        other.totalUnitCount = 60
        otherReporter.flush()
        XCTAssertEqual(other.completedUnitCount, 50)
        for _ in 0..<9 { otherReporter.advance() }
        XCTAssertEqual(other.completedUnitCount, 59, "planned from the new total: a step of 1 unit")
        XCTAssertFalse(other.isFinished)
        otherReporter.advance()
        XCTAssertTrue(other.isFinished)
        XCTAssertEqual(other.completedUnitCount, 60)
    }

    // MARK: Cancelling and pausing

    func test_asking_about_cancellation_publishes_the_units_waiting_first() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let node = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 10)
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 42)
        XCTAssertEqual(node.completedUnitCount, 0, "below a step")
        XCTAssertFalse(reporter.isCancelled)
        XCTAssertEqual(node.completedUnitCount, 42, "asking publishes what waits")
        reporter.advance(by: 8)
        XCTAssertFalse(reporter.isCancelled)
        XCTAssertFalse(reporter.isCancelled, "asking again with nothing waiting changes nothing")
        XCTAssertEqual(node.completedUnitCount, 50)

        root.cancel()  // reaches the node from above

        reporter.advance(by: 2)
        XCTAssertTrue(reporter.isCancelled, "seen at the first question after the cancel")
        XCTAssertEqual(node.completedUnitCount, 52)
        reporter.advance(by: 8)
        XCTAssertThrowsError(try reporter.checkCancellation()) { XCTAssertTrue($0 is CancellationError) }
        XCTAssertEqual(node.completedUnitCount, 60)
    }

    func test_check_cancellation_throws_for_a_failed_node_after_publishing() {
        struct Broken: Error {}
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let threw = node.withBatchReporter { reporter -> Bool in
            reporter.advance(by: 7)
            node.fail(Broken())
            XCTAssertFalse(reporter.isCancelled, "failed, not cancelled, as the node says")
            do {
                try reporter.checkCancellation()
                return false
            } catch {
                return true
            }
        }
        XCTAssertTrue(threw)
        XCTAssertEqual(node.completedUnitCount, 7)
    }

    func test_asking_about_pausing_publishes_the_units_waiting_first() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 3)
        XCTAssertFalse(reporter.isPaused)
        XCTAssertEqual(node.completedUnitCount, 3)
        node.pause()
        reporter.advance(by: 2)
        XCTAssertTrue(reporter.isPaused)
        XCTAssertEqual(node.completedUnitCount, 5)
        node.resume()
        reporter.advance(by: 4)
        XCTAssertEqual(node.completedUnitCount, 5, "below a step")
        XCTAssertFalse(reporter.isPaused)
        XCTAssertEqual(node.completedUnitCount, 9)
    }

    func test_checkpoint_publishes_before_throwing_on_cancellation() async {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        var reporter = node.makeBatchReporter()
        reporter.advance(by: 11)
        do { try await reporter.checkpoint() } catch { XCTFail("not cancelled yet") }
        XCTAssertEqual(node.completedUnitCount, 11, "a checkpoint publishes what waits")
        node.cancel()
        reporter.advance(by: 5)
        do {
            try await reporter.checkpoint()
            XCTFail("cancelled: the checkpoint throws")
        } catch {}
        XCTAssertEqual(node.completedUnitCount, 16)
    }

    /// A loop that waits at its checkpoint while paused has published everything before waiting, and goes
    /// on when resumed.
    func test_checkpoint_publishes_before_waiting_while_paused() async throws {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        node.pause()
        let task = Task {
            var reporter = node.makeBatchReporter()
            reporter.advance(by: 9)
            try await reporter.checkpoint()
            reporter.advance(by: 1)
            reporter.flush()
        }
        try await waitUntil { node.state.withLock { !$0.control.pauseWaiters.isEmpty } }  // suspended
        XCTAssertEqual(node.completedUnitCount, 9)
        node.resume()
        try await task.value
        XCTAssertEqual(node.completedUnitCount, 10)
    }

    // MARK: Going away

    func test_a_dropped_reporter_publishes_its_remainder() {
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        do {
            var reporter = node.makeBatchReporter()
            reporter.advance(by: 3)
            XCTAssertEqual(node.completedUnitCount, 0)
        }
        XCTAssertEqual(node.completedUnitCount, 3)
    }

    func test_with_batch_reporter_publishes_when_the_body_returns_or_throws() {
        struct Stop: Error {}
        let node = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let value = node.withBatchReporter { reporter in
            reporter.advance(by: 5)
            return "done"
        }
        XCTAssertEqual(value, "done")
        XCTAssertEqual(node.completedUnitCount, 5)
        XCTAssertThrowsError(
            try node.withBatchReporter { (reporter: inout ProgressNode.BatchReporter) throws(Stop) in
                reporter.advance(by: 6)
                throw Stop()
            })
        XCTAssertEqual(node.completedUnitCount, 11)
    }

    // MARK: Helpers

    /// `node`'s completed count after each run of `reporter.advance()` calls (`runs[i]` calls in run `i`).
    private func counts(
        of node: ProgressNode, after runs: [Int], through reporter: inout ProgressNode.BatchReporter
    ) -> [Int64] {
        var counts: [Int64] = []
        for run in runs {
            for _ in 0..<run { reporter.advance() }
            counts.append(node.completedUnitCount)
        }
        return counts
    }

    // MARK: Several loops

    /// Four threads, each with its own reporter on one node: every unit is counted once, and the node
    /// finishes (at the publication that completes it).
    func test_reporters_on_several_threads_add_up_exactly() {
        let threads = 4
        let perThread = 250_000
        let node = ProgressNode.discreteProgress(totalUnitCount: Int64(threads * perThread))
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            node.withBatchReporter { reporter in
                for _ in 0..<perThread { reporter.advance() }
            }
        }
        XCTAssertEqual(node.completedUnitCount, Int64(threads * perThread))
        XCTAssertTrue(node.isFinished)
    }
}
