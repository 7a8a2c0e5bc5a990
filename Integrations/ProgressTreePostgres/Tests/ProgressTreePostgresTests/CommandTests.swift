import PostgresNIO
import ProgressTree
import ProgressTreeWeb
import XCTest

@testable import ProgressTreePostgres

/// Commands from a page on any instance, through PostgreSQL, to the process that runs the job.
final class CommandTests: XCTestCase {
    func testCommandsFromAnotherInstanceReachTheTreeInOrder() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("commands")
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        let job = try await worker.store.publish(root, jobID: id)
        try await waitUntil("the first write") { worker.store.diagnostics.rowsWritten >= 2 }
        _ = try await reader.store.routes(forJob: id)
        // Sent one after the other without waiting: the tree gets them in this order.
        for command in ["pause", "resume", "pause"] {
            let answer = await reader.store.send(
                Array("{\"v\":1,\"command\":\"\(command)\",\"id\":2}".utf8), toJob: id, run: job.run)
            XCTAssertEqual(answer, .delivered)
        }
        try await waitUntil("three commands applied") { worker.store.diagnostics.commandsApplied == 3 }
        try await waitUntil("the child paused") { child.isPaused }
        XCTAssertFalse(root.isPaused)
        let cancel = await reader.store.send(
            Array("{\"v\":1,\"command\":\"cancel\",\"id\":1}".utf8), toJob: id, run: job.run)
        XCTAssertEqual(cancel, .delivered)
        try await waitUntil("the root cancelled") { root.isCancelled }
        await job.finish()
        let summary = try await reader.store.job(id)
        XCTAssertEqual(summary?.state, "cancelled")
    }

    func testACommandForAJobNobodyKeepsAnswers404WithASentence() async throws {
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("unknown")
        let answer = await reader.store.send(
            Array("{\"v\":1,\"command\":\"cancel\",\"id\":1}".utf8), toJob: id, run: RunIdentity.make())
        XCTAssertEqual(
            answer,
            .refused(.notFound, "No job \(id) is kept: it never ran, or it ended longer ago than its retention."))
    }

    func testACommandForAnEndedJobAnswers409() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let id = TestDatabase.jobID("ended")
        let root = ProgressNode(totalUnitCount: 1)
        let job = try await worker.store.publish(root, jobID: id)
        root.completedUnitCount = 1
        await job.finish()
        let answer = await worker.store.send(
            Array("{\"v\":1,\"command\":\"pause\",\"id\":1}".utf8), toJob: id, run: job.run)
        XCTAssertEqual(answer, .refused(.conflict, "Job \(id) has ended (finished): it takes no more commands."))
    }

    func testACommandForAJobOfAnotherRunAnswers409() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let id = TestDatabase.jobID("rerun")
        let first = try await worker.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
        await first.finish()
        let second = try await worker.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
        // A page of the first run names node 1 of the first run's tree: never the second's.
        let answer = await worker.store.send(
            Array("{\"v\":1,\"command\":\"cancel\",\"id\":1}".utf8), toJob: id, run: first.run)
        XCTAssertEqual(
            answer, .refused(.conflict, "Job \(id) was started again since this page loaded: reload the page."))
        await second.finish()
    }

    func testACommandForAJobThatStoppedReportingAnswers409() async throws {
        let worker = try await TestDatabase.store(TestDatabase.options(heartbeatTimeout: .seconds(600)))
        defer { worker.stop() }
        let id = TestDatabase.jobID("silent")
        let job = try await worker.store.publish(ProgressNode(totalUnitCount: 1), jobID: id)
        job.vanish()
        try await worker.store.client.query(
            "UPDATE progresstree.jobs SET heartbeat_at = now() - interval '20 minutes' WHERE job_id = \(id)")
        let answer = await worker.store.send(
            Array("{\"v\":1,\"command\":\"resume\",\"id\":1}".utf8), toJob: id, run: job.run)
        XCTAssertEqual(
            answer, .refused(.conflict, "Job \(id) stopped reporting: no process runs it, so nothing can resume it."))
    }

    func testALineThatIsNoCommandIsMalformedAndAnUnknownCommandIsIgnored() async throws {
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let run = RunIdentity.make()
        let malformed = await reader.store.send(Array("cancel everything".utf8), toJob: "x", run: run)
        XCTAssertEqual(malformed, .malformed)
        let interval = await reader.store.send(
            Array("{\"v\":1,\"command\":\"interval\",\"seconds\":1}".utf8), toJob: "x", run: run)
        XCTAssertEqual(interval, .delivered)
    }
}
