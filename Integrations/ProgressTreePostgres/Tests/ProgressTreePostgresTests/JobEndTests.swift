import PostgresNIO
import ProgressTree
import XCTest

@testable import ProgressTreePostgres

/// How a job ends in PostgreSQL: kept for its retention, then removed; failed with "stopped reporting"
/// when its process dies; failed with the process's reason when it is interrupted, never cancelled.
final class JobEndTests: XCTestCase {
    func testAnEndedJobIsKeptForItsRetentionThenRemovedWithItsRows() async throws {
        let store = try await TestDatabase.store(TestDatabase.options(retention: .seconds(1)))
        defer { store.stop() }
        let id = TestDatabase.jobID("retention")
        let root = ProgressNode(totalUnitCount: 1)
        let job = try await store.store.publish(root, jobID: id)
        root.completedUnitCount = 1
        await job.finish()
        let kept = try await store.store.job(id)
        XCTAssertEqual(kept?.state, "finished")
        let routes = try await store.store.routes(forJob: id)
        XCTAssertNotNil(routes)
        try await waitUntil("removed", timeout: .seconds(5)) { try await store.store.job(id) == nil }
        var count: Int64 = -1
        for try await rows in try await store.store.client.query(
            "SELECT count(*) FROM progresstree.nodes WHERE job_id = \(id)"
        ).decode(Int64.self) {
            count = rows
        }
        XCTAssertEqual(count, 0)
        XCTAssertGreaterThanOrEqual(store.store.diagnostics.jobsRemoved, 1)
        let gone = try await store.store.routes(forJob: id)
        XCTAssertNil(gone)
    }

    func testAJobWhoseProcessDiesReadsFailedStoppedReportingAfterTheTimeout() async throws {
        let options = TestDatabase.options(heartbeatTimeout: .seconds(1))
        let worker = try await TestDatabase.store(options)
        defer { worker.stop() }
        let reader = try await TestDatabase.store(options)
        defer { reader.stop() }
        let id = TestDatabase.jobID("dies")
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
        child.completedUnitCount = 1
        let job = try await worker.store.publish(root, jobID: id)
        try await waitUntil("the first write") { worker.store.diagnostics.rowsWritten >= 2 }
        let found = try await reader.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(found).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        let died = ContinuousClock.now
        job.vanish()
        try await stream.read(until: "failed", timeout: .seconds(6)) { $0.root?.state == .failed }
        let seconds = (ContinuousClock.now - died).seconds
        XCTAssertLessThan(seconds, 1 + 2, "within the timeout and 2 s")
        XCTAssertEqual(stream.root?.failureReason, "stopped reporting: no word from its process for 1 s")
        XCTAssertEqual(stream.nodes[2]?.state, .cancelled, "what the failure cancelled")
        XCTAssertEqual(stream.nodes[2]?.completedUnitCount, 1)
        let summary = try await reader.store.job(id)
        XCTAssertEqual(summary?.state, "failed")
        XCTAssertEqual(summary?.reason, "stopped reporting: no word from its process for 1 s")
    }

    func testAJobThatReportsIsNeverEndedBySweeps() async throws {
        let store = try await TestDatabase.store(TestDatabase.options(heartbeatTimeout: .milliseconds(900)))
        defer { store.stop() }
        let id = TestDatabase.jobID("alive")
        let root = ProgressNode(totalUnitCount: 1)
        let job = try await store.store.publish(root, jobID: id)
        // Nothing changes for 3 timeouts: heartbeats keep it running.
        try await Task.sleep(for: .milliseconds(2700))
        let summary = try await store.store.job(id)
        XCTAssertEqual(summary?.state, "running")
        XCTAssertGreaterThanOrEqual(store.store.diagnostics.heartbeats, 3)
        root.completedUnitCount = 1
        await job.finish()
        let ended = try await store.store.job(id)
        XCTAssertEqual(ended?.state, "finished")
    }

    func testAnInterruptedJobReadsFailedWithItsReasonNotCancelled() async throws {
        let store = try await TestDatabase.store()
        defer { store.stop() }
        let id = TestDatabase.jobID("sigterm")
        let root = ProgressNode(totalUnitCount: 4)
        root.completedUnitCount = 1
        let job = try await store.store.publish(root, jobID: id)
        await job.interrupt(reason: "the worker was stopped (SIGTERM)")
        XCTAssertFalse(root.isCancelled)
        let summary = try await store.store.job(id)
        XCTAssertEqual(summary?.state, "failed")
        XCTAssertEqual(summary?.reason, "the worker was stopped (SIGTERM)")
        let found = try await store.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(found).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        XCTAssertEqual(stream.root?.state, .failed)
        XCTAssertEqual(stream.root?.failureReason, "the worker was stopped (SIGTERM)")
        XCTAssertEqual(stream.root?.completedUnitCount, 1)
    }

    func testAFailedJobKeepsItsReasons() async throws {
        let store = try await TestDatabase.store()
        defer { store.stop() }
        let id = TestDatabase.jobID("failed")
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let job = try await store.store.publish(root, jobID: id)
        // Named first: a root final at the first walk is written alone (Docs/WireFormat.md, rule 4).
        try await waitUntil("the first write") { store.store.diagnostics.rowsWritten >= 2 }
        child.fail(Reason(description: "disk full"))
        root.fail(Reason(description: "1 photo failed"))
        await job.finish()
        let summary = try await store.store.job(id)
        XCTAssertEqual(summary?.state, "failed")
        XCTAssertEqual(summary?.reason, "1 photo failed")
        let found = try await store.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(found).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        XCTAssertEqual(stream.nodes[2]?.failureReason, "disk full", stream.text)
        XCTAssertEqual(stream.root?.failedBelow, 1)
    }
}

/// A failure's reason, as its description.
private struct Reason: Error, CustomStringConvertible {
    let description: String
}
