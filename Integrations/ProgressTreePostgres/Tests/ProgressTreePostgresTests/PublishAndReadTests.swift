import ProgressTree
import ProgressTreeStreaming
import XCTest

@testable import ProgressTreePostgres

/// A worker's tree, published into PostgreSQL, read back by another store (another instance).
final class PublishAndReadTests: XCTestCase {
    func testAReaderOnAnotherInstanceGetsTheJobsFinalTreeExactly() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("final")
        let root = ProgressNode(totalUnitCount: 2)
        root.localizedDescription = "Resizing 2 photos"
        let first = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        first.localizedDescription = "a.jpg"
        let second = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        second.localizedDescription = "b.jpg"
        let job = try await worker.store.publish(root, jobID: id)
        first.completedUnitCount = 4
        second.completedUnitCount = 3
        second.completedUnitCount = 4
        await job.finish()

        let routes = try await reader.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(routes).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        let rootLine = try XCTUnwrap(stream.root)
        XCTAssertEqual(rootLine.state, .finished)
        XCTAssertEqual(rootLine.completedUnitCount, 2)
        XCTAssertEqual(rootLine.totalUnitCount, 2)
        XCTAssertEqual(rootLine.localizedDescription, "Resizing 2 photos")
        XCTAssertEqual(stream.runs.count, 1)
        XCTAssertTrue(stream.runs[0].contains("\"run\":\"\(job.run)."), stream.runs[0])
        let summary = try await reader.store.job(id)
        XCTAssertEqual(summary?.state, "finished")
        XCTAssertEqual(summary?.run, job.run)
        XCTAssertNotNil(summary?.endedAt)
    }

    func testChangesReachAReaderThatWatchesThroughListenNotify() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("changes")
        let root = ProgressNode(totalUnitCount: 10)
        let job = try await worker.store.publish(root, jobID: id)
        try await waitUntil("the first write") { worker.store.diagnostics.statements >= 1 }
        let found = try await reader.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(found).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        XCTAssertEqual(stream.root?.completedUnitCount, 0)
        root.completedUnitCount = 7
        try await stream.read(until: "7 of 10") { $0.root?.completedUnitCount == 7 }
        XCTAssertEqual(stream.root?.state, .running)
        root.completedUnitCount = 10
        try await stream.read(until: "finished") { $0.root?.state == .finished }
        await job.finish()
        XCTAssertEqual(stream.syncedCount, 1, "one snapshot, then changes only")
    }

    func testOnlyChangedNodesAreWrittenAtMostOneStatementAnInterval() async throws {
        var options = TestDatabase.options()
        options.interval = .milliseconds(250)
        let worker = try await TestDatabase.store(options)
        defer { worker.stop() }
        let root = ProgressNode(totalUnitCount: 50)
        let children = (0..<50).map { _ in ProgressNode(totalUnitCount: 1000, parent: root, pendingUnitCount: 1) }
        let job = try await worker.store.publish(root, jobID: TestDatabase.jobID("batched"))
        try await waitUntil("the first write of 51 rows") { worker.store.diagnostics.rowsWritten >= 51 }
        let before = worker.store.diagnostics
        XCTAssertEqual(before.rowsWritten, 51, "the root and its 50 children, once")
        // One child changes, continuously, for 1.2 s: each statement writes it and the root, nothing else.
        let start = ContinuousClock.now
        var step: Int64 = 0
        while ContinuousClock.now - start < .milliseconds(1200) {
            step += 1
            children[7].completedUnitCount = step
            try await Task.sleep(for: .milliseconds(10))
        }
        let after = worker.store.diagnostics
        let statements = after.statements - before.statements
        XCTAssertGreaterThanOrEqual(statements, 3)
        XCTAssertLessThanOrEqual(statements, 6, "at most one statement every 250 ms over 1.2 s (and the one under way)")
        XCTAssertEqual(after.rowsWritten - before.rowsWritten, 2 * statements, "the changed child and the root")
        await job.finish()
    }

    func testAMalformedRowWrittenByHandIsSkippedWithADiagnostic() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("malformed")
        let root = ProgressNode(totalUnitCount: 2)
        _ = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let job = try await worker.store.publish(root, jobID: id)
        try await waitUntil("the first write") { worker.store.diagnostics.rowsWritten >= 2 }
        try await worker.store.client.query(
            """
            INSERT INTO progresstree.nodes (job_id, node_id, parent_id, state, seq, line) VALUES
                (\(id), 90, 1, 'running', 1, 'not json at all'),
                (\(id), 91, 1, 'running', 1, \("{\"v\":1,\n\"id\":91}")),
                (\(id), 92, 1, 'running', 1, \("{\"v\":1,\"id\":5,\"parent\":1,\"completed\":0,\"total\":1,\"state\":\"running\"}"))
            """)
        let found = try await reader.store.routes(forJob: id)
        let stream = StreamReader(try XCTUnwrap(found).events)
        try await stream.read(until: "synced") { $0.syncedCount == 1 }
        XCTAssertEqual(Set(stream.nodes.keys), [1, 2])
        XCTAssertEqual(reader.store.diagnostics.skippedRows, 3)
        XCTAssertFalse(stream.text.contains("not json"))
        await job.finish()
    }

    func testANotificationThatIsNotTheStoresIsSkippedWithADiagnostic() async throws {
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        try await reader.store.client.query("SELECT pg_notify('progresstree_changes', 'hello from another program')")
        try await reader.store.client.query("SELECT pg_notify('progresstree_commands', '1 x y z')")
        try await waitUntil("both are counted") { reader.store.diagnostics.foreignNotifications >= 2 }
        XCTAssertTrue(reader.store.isListening)
    }

    func testAJobNobodyKeepsHasNoRoutes() async throws {
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let none = try await reader.store.routes(forJob: TestDatabase.jobID("nobody"))
        XCTAssertNil(none)
        let invalid = try await reader.store.routes(forJob: "../etc/passwd")
        XCTAssertNil(invalid)
    }

    func testAJobIDThatIsNotOneIsRefused() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        do {
            _ = try await worker.store.publish(ProgressNode(totalUnitCount: 1), jobID: "a b")
            XCTFail("published")
        } catch let error as ProgressJobStore.InvalidJobID {
            XCTAssertEqual(error.jobID, "a b")
        }
    }

    func testTheStoreMintsAnIDWhenTheAppGivesNone() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let job = try await worker.store.publish(ProgressNode(totalUnitCount: 1))
        XCTAssertEqual(job.jobID.count, 32)
        XCTAssertTrue(RunIdentity.isRun(job.jobID))
        XCTAssertNotEqual(job.jobID, job.run)
        await job.finish()
    }

    func testAJobThatStillReportsCannotBePublishedByAnotherProcess() async throws {
        let first = try await TestDatabase.store()
        defer { first.stop() }
        let second = try await TestDatabase.store()
        defer { second.stop() }
        let id = TestDatabase.jobID("twice")
        let job = try await first.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
        do {
            _ = try await second.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
            XCTFail("published twice")
        } catch let error as ProgressJobStore.JobAlreadyRunning {
            XCTAssertEqual(error.jobID, id)
        }
        await job.finish()
        // Ended: a new run of the same id.
        let again = try await second.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
        XCTAssertNotEqual(again.run, job.run)
        await again.finish()
    }
}
