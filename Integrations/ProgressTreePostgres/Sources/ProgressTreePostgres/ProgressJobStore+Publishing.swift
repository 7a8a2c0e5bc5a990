import Logging
import PostgresNIO
import ProgressTree

extension ProgressJobStore {
    /// Publishes `root`'s tree as job `jobID` (the application's stable id, or `nil`: the store mints one,
    /// 32 hexadecimal digits), a new run of it: readers on any instance serve it from now on, commands
    /// for it reach `root`'s tree, and its final state is kept for `Options.retention` after it ends. Waits
    /// for the schema (`run()` must be running).
    ///
    /// An id whose last run ended, or stopped reporting, is published again as a new run: its old rows go,
    /// and pages that showed the old run start again from the new one.
    ///
    /// - Throws: `InvalidJobID`; `JobAlreadyRunning` when a process that still reports runs `jobID`; what
    ///   PostgreSQL answered when it cannot be reached.
    public func publish(_ root: ProgressNode, jobID: String? = nil) async throws -> ProgressJobPublication {
        let id = jobID ?? RunIdentity.make()
        guard JobID.isValid(id) else { throw InvalidJobID(jobID: id) }
        try await waitUntilReady()
        let run = RunIdentity.make()
        let token = RunIdentity.make()
        let heartbeat = options.heartbeatTimeout.seconds
        let retention = options.retention.seconds
        let started = try await client.withTransaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query(
                """
                INSERT INTO progresstree.jobs (job_id, run, token, state, heartbeat_seconds, retention_seconds)
                VALUES (\(id), \(run), \(token), 'running', \(heartbeat), \(retention))
                ON CONFLICT (job_id) DO UPDATE SET run = excluded.run, token = excluded.token, state = 'running',
                    reason = NULL, seq = 0, heartbeat_at = now(), heartbeat_seconds = excluded.heartbeat_seconds,
                    retention_seconds = excluded.retention_seconds, started_at = now(), ended_at = NULL,
                    expires_at = NULL
                WHERE progresstree.jobs.ended_at IS NOT NULL
                    OR progresstree.jobs.heartbeat_at < now() - make_interval(secs => progresstree.jobs.heartbeat_seconds)
                RETURNING 1
                """, logger: logger
            ).collect()
            guard !rows.isEmpty else { return false }
            try await connection.query("DELETE FROM progresstree.nodes WHERE job_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM progresstree.commands WHERE job_id = \(id)", logger: logger)
            try await connection.query(
                "SELECT pg_notify(\(JobNotification.changesChannel), \("1 0 \(run) \(id)"))", logger: logger)
            return true
        }
        guard started else { throw JobAlreadyRunning(jobID: id) }
        guard let pipe = CommandPipe() else { throw ProgressJobStore.NoDescriptors() }
        let publication = ProgressJobPublication(
            store: self, root: root, jobID: id, run: run, token: token, pipe: pipe)
        state.withLock { $0.publications[id] = publication }
        return publication
    }

    /// The system had no file descriptor left for a job's command channel.
    public struct NoDescriptors: Error, CustomStringConvertible, Equatable {
        /// Says so.
        public var description: String { "no file descriptor left for a job's command channel" }
    }

    func forget(_ publication: ProgressJobPublication) {
        state.withLock { state in
            if state.publications[publication.jobID] === publication { state.publications[publication.jobID] = nil }
        }
    }

    /// Writes a batch of a job's rows in one statement: the nodes that changed, the job's row (its state
    /// from the root's line, the heartbeat, the end and its expiry once the root is final) and the
    /// notification. `false` when the job's row is no longer this run's, or says it ended.
    func write(_ batch: JobBatch, of publication: ProgressJobPublication) async throws -> Bool {
        var ids: [Int] = []
        var parents: [Int] = []
        var states: [String] = []
        var lines: [String] = []
        ids.reserveCapacity(batch.rows.count)
        for (id, row) in batch.rows {
            ids.append(id)
            parents.append(row.parentID ?? 0)
            states.append(row.state.rawValue)
            lines.append(row.line)
        }
        let rootState = batch.root.map { $0.state.rawValue }
        let reason = batch.root?.failureReason
        let ended = batch.root?.state.isFinal ?? false
        let jobID = publication.jobID
        let run = publication.run
        let rows = try await client.query(
            """
            WITH job AS (
                UPDATE progresstree.jobs SET seq = seq + 1, heartbeat_at = now(),
                    state = coalesce(\(rootState), state),
                    reason = CASE WHEN \(rootState)::text IS NULL THEN reason ELSE \(reason) END,
                    ended_at = CASE WHEN \(ended) THEN now() END,
                    expires_at = CASE WHEN \(ended) THEN now() + make_interval(secs => retention_seconds) END
                WHERE job_id = \(jobID) AND run = \(run) AND ended_at IS NULL
                RETURNING seq),
            written AS (
                INSERT INTO progresstree.nodes (job_id, node_id, parent_id, state, seq, line)
                SELECT \(jobID), u.node_id, nullif(u.parent_id, 0), u.state, job.seq, u.line
                FROM job, unnest(\(ids)::integer[], \(parents)::integer[], \(states)::text[], \(lines)::text[])
                    AS u(node_id, parent_id, state, line)
                ON CONFLICT (job_id, node_id) DO UPDATE SET parent_id = excluded.parent_id, state = excluded.state,
                    seq = excluded.seq, line = excluded.line
                RETURNING 1)
            SELECT job.seq, (SELECT count(*) FROM written),
                pg_notify(\(JobNotification.changesChannel), '1 ' || job.seq || ' ' || \(run) || ' ' || \(jobID))::text
            FROM job
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return false }
        let count = try row.decode((Int64, Int64, String).self).1
        state.withLock { state in
            state.diagnostics.statements += 1
            state.diagnostics.rowsWritten += Int(count)
        }
        return true
    }

    /// Writes a heartbeat for a job that had nothing to write; `false` when the job's row is no longer
    /// this run's, or says it ended.
    func beat(_ publication: ProgressJobPublication) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE progresstree.jobs SET heartbeat_at = now()
            WHERE job_id = \(publication.jobID) AND run = \(publication.run) AND ended_at IS NULL RETURNING 1
            """, logger: logger
        ).collect()
        state.withLock { $0.diagnostics.heartbeats += 1 }
        return !rows.isEmpty
    }

    /// Ends a publication's job with `reason`, tried again while PostgreSQL cannot be reached, up to
    /// `Options.finalWriteTimeout`.
    func endJobWithRetries(_ publication: ProgressJobPublication, reason: String) async {
        let deadline = ContinuousClock.now + options.finalWriteTimeout
        var delay = Duration.milliseconds(200)
        while true {
            do {
                _ = try await endJob(publication.jobID, run: publication.run, reason: reason, onlyIfStale: false)
                return
            } catch {
                guard ContinuousClock.now < deadline else {
                    logger.error(
                        "progresstree: job \(publication.jobID)'s end could not be written: \(String(reflecting: error))"
                    )
                    return
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Ends a job that did not end by itself, in one transaction: its row failed with `reason` (and its
    /// expiry set), its root's line failed with that reason, its running and paused nodes' lines cancelled,
    /// and the notification. With `onlyIfStale`, only when its heartbeat is older than its timeout, and
    /// PostgreSQL has been up for longer than that (so that its process had the time to reconnect). `true`
    /// when this call ended it.
    func endJob(_ jobID: String, run: String?, reason: String, onlyIfStale: Bool) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection -> Bool in
            let claimed = try await connection.query(
                """
                UPDATE progresstree.jobs SET state = 'failed', reason = \(reason), ended_at = now(),
                    expires_at = now() + make_interval(secs => retention_seconds), seq = seq + 1
                WHERE job_id = \(jobID) AND ended_at IS NULL AND (\(run)::text IS NULL OR run = \(run))
                    AND (NOT \(onlyIfStale) OR (heartbeat_at < now() - make_interval(secs => heartbeat_seconds)
                        AND pg_postmaster_start_time() < now() - make_interval(secs => heartbeat_seconds)))
                RETURNING run, seq
                """, logger: logger
            ).collect()
            guard let row = claimed.first else { return false }
            let (jobRun, seq) = try row.decode((String, Int64).self)
            var ids: [Int] = []
            var states: [String] = []
            var lines: [String] = []
            let open = try await connection.query(
                """
                SELECT node_id, line FROM progresstree.nodes
                WHERE job_id = \(jobID) AND state IN ('running', 'paused')
                """, logger: logger)
            for try await (id, line) in open.decode((Int, String).self) {
                guard let ended = endedLine(line, reason: reason) else { continue }
                ids.append(id)
                states.append(ended.state.rawValue)
                lines.append(ended.line)
            }
            try await connection.query(
                """
                UPDATE progresstree.nodes AS n SET line = u.line, state = u.state, seq = \(seq)
                FROM unnest(\(ids)::integer[], \(states)::text[], \(lines)::text[]) AS u(node_id, state, line)
                WHERE n.job_id = \(jobID) AND n.node_id = u.node_id
                """, logger: logger)
            try await connection.query(
                "SELECT pg_notify(\(JobNotification.changesChannel), \("1 \(seq) \(jobRun) \(jobID)"))", logger: logger)
            return true
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
