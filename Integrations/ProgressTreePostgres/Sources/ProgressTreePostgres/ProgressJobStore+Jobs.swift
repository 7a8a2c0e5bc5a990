import Foundation
import PostgresNIO

extension ProgressJobStore {
    /// A job's row: what an application lists jobs with, or checks one's outcome by.
    public struct JobSummary: Sendable, Equatable {
        /// The job's id.
        public var jobID: String
        /// Its current run.
        public var run: String
        /// Its root's state: `running`, `paused`, `finished`, `failed` or `cancelled`.
        public var state: String
        /// Why it failed, when it did ("stopped reporting: …" when its process died).
        public var reason: String?
        /// When its run was published.
        public var startedAt: Date
        /// When it ended, once it did.
        public var endedAt: Date?
        /// When its rows are removed, once it ended (`endedAt` plus its retention).
        public var expiresAt: Date?
    }

    /// Job `jobID`'s row; `nil` when no such job is kept.
    ///
    /// - Throws: what PostgreSQL answered when it cannot be reached.
    public func job(_ jobID: String) async throws -> JobSummary? {
        guard JobID.isValid(jobID) else { return nil }
        try await waitUntilReady()
        let rows = try await client.query(
            """
            SELECT job_id, run, state, reason, started_at, ended_at, expires_at
            FROM progresstree.jobs WHERE job_id = \(jobID)
            """, logger: logger)
        for try await (id, run, state, reason, started, ended, expires) in rows.decode(
            (String, String, String, String?, Date, Date?, Date?).self)
        {
            return JobSummary(
                jobID: id, run: run, state: state, reason: reason, startedAt: started, endedAt: ended,
                expiresAt: expires)
        }
        return nil
    }
}
