import Foundation
import Logging
import PostgresNIO
import ProgressTreeStreaming
import ProgressTreeWeb

extension ProgressJobStore {
    /// Sends a command line a page posted (token, origin and length checked) to the process that runs
    /// run `run` of job `jobID`: a row of `progresstree.commands` and a notification, in one statement that
    /// first checks the job is still that run, not ended, and reporting. Refused otherwise, with a sentence
    /// the page shows: `404` no such job, `409` another run, ended, or stopped reporting, `503` PostgreSQL
    /// cannot be reached.
    func send(_ body: [UInt8], toJob jobID: String, run: String) async -> ProgressWebRoutes.CommandDelivery {
        var line = body
        while let last = line.last, last == 0x0A || last == 0x0D { line.removeLast() }
        guard let (command, nodeID) = ProgressWireCommand.parse(line) else {
            return Self.isOtherCommand(line) ? .delivered : .malformed
        }
        let text = command.line(id: nodeID)
        do {
            let rows = try await client.query(
                """
                WITH job AS (
                    SELECT job_id, run, state, ended_at IS NOT NULL AS ended,
                        heartbeat_at > now() - make_interval(secs => heartbeat_seconds) AS reporting
                    FROM progresstree.jobs WHERE job_id = \(jobID)),
                sent AS (
                    INSERT INTO progresstree.commands (job_id, run, line)
                    SELECT job_id, run, \(text) FROM job WHERE run = \(run) AND NOT ended AND reporting
                    RETURNING command_id),
                told AS (
                    SELECT pg_notify(\(JobNotification.commandsChannel), \("1 \(run) \(jobID)")) FROM sent)
                SELECT job.run, job.state, job.ended, job.reporting, (SELECT count(*) FROM told) FROM job
                """, logger: logger
            ).collect()
            guard let row = rows.first else {
                return .refused(
                    .notFound, "No job \(jobID) is kept: it never ran, or it ended longer ago than its retention.")
            }
            let (jobRun, state, ended, reporting, told) = try row.decode((String, String, Bool, Bool, Int64).self)
            if told > 0 { return .delivered }
            if jobRun != run {
                return .refused(.conflict, "Job \(jobID) was started again since this page loaded: reload the page.")
            }
            if ended {
                return .refused(.conflict, "Job \(jobID) has ended (\(state)): it takes no more commands.")
            }
            if !reporting {
                return .refused(
                    .conflict,
                    "Job \(jobID) stopped reporting: no process runs it, so nothing can \(command.rawValue) it.")
            }
            return .refused(.conflict, "Job \(jobID) took no command.")
        } catch {
            logger.warning("progresstree: sending a command to job \(jobID) failed: \(String(reflecting: error))")
            return .refused(
                .serviceUnavailable, "The progress store (PostgreSQL) cannot be reached: try again shortly.")
        }
    }

    /// Whether `line` is a command line of the wire format that is not one of the three (a reader's
    /// `interval`): ignored, as the wire format says, rather than refused as malformed.
    static func isOtherCommand(_ line: [UInt8]) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            let version = object["v"] as? Int, version == 1, object["command"] is String
        else { return false }
        return true
    }

    /// Takes (and deletes) the commands waiting for a publication's job, in the order they were sent: the
    /// lines of its run; those of an earlier run name nodes of another tree, and are dropped.
    func takeCommands(of publication: ProgressJobPublication) async throws -> [String] {
        var taken: [(id: Int64, run: String, line: String)] = []
        let rows = try await client.query(
            "DELETE FROM progresstree.commands WHERE job_id = \(publication.jobID) RETURNING command_id, run, line",
            logger: logger)
        for try await (id, run, line) in rows.decode((Int64, String, String).self) {
            taken.append((id, run, line))
        }
        return taken.sorted { $0.id < $1.id }.filter { $0.run == publication.run }.map(\.line)
    }
}
