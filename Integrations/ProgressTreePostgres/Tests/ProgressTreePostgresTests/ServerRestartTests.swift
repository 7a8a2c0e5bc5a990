import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ProgressTree
import XCTest

@testable import ProgressTreePostgres

/// PostgreSQL stopped and started again while a job runs: the worker's last lines wait and are written,
/// the reader reconnects, and its readers are told to reconnect meanwhile.
final class ServerRestartTests: XCTestCase {
    func testAJobsFinalStateSurvivesARestartOfPostgreSQLMidJob() async throws {
        let worker = try await TestDatabase.store()
        defer { worker.stop() }
        let reader = try await TestDatabase.store()
        defer { reader.stop() }
        let id = TestDatabase.jobID("restart")
        let root = ProgressNode(totalUnitCount: 3)
        let job = try await worker.store.publish(root, jobID: id)
        root.completedUnitCount = 1
        let found = try await reader.store.routes(forJob: id)
        let before = StreamReader(try XCTUnwrap(found).events)
        try await before.read(until: "1 of 3") { $0.root?.completedUnitCount == 1 }

        try PostgresServer.control("stop", "-m", "fast")
        // Readers are told to reconnect: their stream ends without an `ended` event.
        try await before.readToEnd()
        XCTAssertFalse(before.text.contains("event: ended"))
        try await waitUntil("the reader knows") { !reader.store.isListening }
        do {
            _ = try await reader.store.routes(forJob: id)
            XCTFail("served while PostgreSQL is away")
        } catch {
            XCTAssertTrue(String(describing: error).contains("Service Unavailable"), "\(error)")
        }
        // The job goes on and ends while PostgreSQL is away: its end waits.
        root.completedUnitCount = 3
        let finishing = Task { await job.finish() }
        try await Task.sleep(for: .milliseconds(700))
        try PostgresServer.control("start", "-w", "-t", "30", "-l", PostgresServer.logPath)
        await finishing.value

        try await waitUntil("the reader listens again", timeout: .seconds(15)) { reader.store.isListening }
        XCTAssertGreaterThanOrEqual(reader.store.diagnostics.reconnections, 1)
        let again = try await reader.store.routes(forJob: id)
        let after = StreamReader(try XCTUnwrap(again).events)
        try await after.read(until: "finished") { $0.root?.state == .finished }
        XCTAssertEqual(after.root?.completedUnitCount, 3)
        XCTAssertNotEqual(after.runs, before.runs, "another relay: the page starts again from its state")
        let summary = try await reader.store.job(id)
        XCTAssertEqual(summary?.state, "finished")
    }
}

/// The test server's `pg_ctl` (from `Tests/postgres/with-postgres.sh`), run as the server's owner.
enum PostgresServer {
    static var logPath: String {
        (ProcessInfo.processInfo.environment["PROGRESSTREE_POSTGRES_DATA"] ?? "/tmp") + "/../server.log"
    }

    static func control(_ arguments: String...) throws {
        let environment = ProcessInfo.processInfo.environment
        guard let pgCtl = environment["PROGRESSTREE_PG_CTL"], let data = environment["PROGRESSTREE_POSTGRES_DATA"]
        else {
            XCTFail(TestDatabase.missing)
            throw NoDatabase()
        }
        var command = [pgCtl, "-D", data] + arguments
        if environment["PROGRESSTREE_PG_OWNER"]?.isEmpty == false {
            command = ["runuser", "-u", "postgres", "--"] + command
        }
        // `system`, not `Process`: its wait for the child is a plain waitpid, whatever thread runs it.
        let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system(line + " >/dev/null")
        XCTAssertEqual(status, 0, "pg_ctl \(arguments.joined(separator: " "))")
    }
}
