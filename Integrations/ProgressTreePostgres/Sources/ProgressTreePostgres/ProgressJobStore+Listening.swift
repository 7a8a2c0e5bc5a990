import Logging
import NIOCore
import NIOPosix
import PostgresNIO

extension ProgressJobStore {
    /// Keeps one connection listening on the store's two channels, made again a second after it is lost
    /// (however long PostgreSQL is away), until the task is cancelled. While it is down, the jobs this
    /// store serves are dropped (their pages reconnect, and get `503` until it is back: "reconnecting…"),
    /// and once it is back, the commands that waited for the jobs this process runs are taken.
    func listenUntilCancelled() async {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                let configuration = PostgresConnection.Configuration(
                    host: server.host, port: server.port, username: server.username, password: server.password,
                    database: server.database, tls: .disable)
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: attempt,
                    logger: logger
                ).get()
                do {
                    try await listen(on: connection, attempt: attempt)
                } catch {
                    logger.warning("progresstree: the listening connection was lost: \(String(reflecting: error))")
                }
                try? await connection.close()
            } catch {
                logger.warning("progresstree: cannot listen (\(String(reflecting: error))); trying again in 1 s")
            }
            stopListening()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func listen(on connection: PostgresConnection, attempt: Int) async throws {
        try await connection.listen(on: JobNotification.changesChannel) { changes in
            try await connection.listen(on: JobNotification.commandsChannel) { commands in
                let publications = state.withLock { state in
                    state.isListening = true
                    if attempt > 1 { state.diagnostics.reconnections += 1 }
                    return Array(state.publications.values)
                }
                // Commands sent while this process was not listening.
                for publication in publications { publication.takeCommands() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await notification in changes {
                            self.handle(channel: JobNotification.changesChannel, payload: notification.payload)
                        }
                    }
                    group.addTask {
                        for try await notification in commands {
                            self.handle(channel: JobNotification.commandsChannel, payload: notification.payload)
                        }
                    }
                    // Either ends when the connection does.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// Acts on one notification; a payload that is not the store's is skipped, with a warning.
    func handle(channel: String, payload: String) {
        switch JobNotification(channel: channel, payload: payload) {
        case .changed(let jobID, let run, let seq):
            noteChange(jobID: jobID, run: run, seq: seq)
        case .removed(let jobID, let run):
            noteRemoval(jobID: jobID, run: run)
        case .command(let jobID, let run):
            let publication = state.withLock { $0.publications[jobID] }
            if let publication, publication.run == run { publication.takeCommands() }
        case nil:
            state.withLock { $0.diagnostics.foreignNotifications += 1 }
            logger.warning(
                "progresstree: skipped a notification on \(channel) that is not the store's: \"\(String(payload.prefix(200)))\""
            )
        }
    }

    /// The listening connection is lost: the jobs served here are dropped, their pages told to reconnect.
    private func stopListening() {
        let relays = state.withLock { state in
            state.isListening = false
            defer { state.relays = [:] }
            return Array(state.relays.values)
        }
        for relay in relays { relay.routes.finishForReconnection() }
    }

    /// Every `Options.sweepInterval`: ends the jobs that stopped reporting, removes those past their
    /// retention (a hundred at a time, so that no statement holds its locks for long), and drops the
    /// served jobs that had no reader for `Options.idleRelayLifetime`.
    func sweepUntilCancelled() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: options.sweepInterval)
            guard !Task.isCancelled else { return }
            dropIdleRelays()
            do {
                try await sweep()
            } catch {
                logger.debug("progresstree: sweep failed: \(String(reflecting: error))")
            }
        }
    }

    /// One sweep of the database (what the loop does each interval).
    func sweep() async throws {
        var stale: [String] = []
        let rows = try await client.query(
            """
            SELECT job_id FROM progresstree.jobs
            WHERE ended_at IS NULL AND heartbeat_at < now() - make_interval(secs => heartbeat_seconds)
                AND pg_postmaster_start_time() < now() - make_interval(secs => heartbeat_seconds)
            LIMIT 100
            """, logger: logger)
        for try await id in rows.decode(String.self) { stale.append(id) }
        for jobID in stale {
            let seconds = try await heartbeatSeconds(of: jobID)
            let reason = "stopped reporting: no word from its process for \(seconds) s"
            if try await endJob(jobID, run: nil, reason: reason, onlyIfStale: true) {
                state.withLock { $0.diagnostics.jobsStoppedReporting += 1 }
                logger.notice("progresstree: job \(jobID) \(reason)")
            }
        }
        let removed = try await client.query(
            """
            DELETE FROM progresstree.jobs WHERE job_id IN (
                SELECT job_id FROM progresstree.jobs WHERE expires_at < now() LIMIT 100 FOR UPDATE SKIP LOCKED)
            RETURNING job_id, run
            """, logger: logger)
        var gone: [(String, String)] = []
        for try await (id, run) in removed.decode((String, String).self) { gone.append((id, run)) }
        if !gone.isEmpty {
            state.withLock { $0.diagnostics.jobsRemoved += gone.count }
            for (id, run) in gone {
                try await client.query(
                    "SELECT pg_notify(\(JobNotification.changesChannel), \("1 removed \(run) \(id)"))", logger: logger)
            }
        }
    }

    private func heartbeatSeconds(of jobID: String) async throws -> String {
        let rows = try await client.query(
            "SELECT heartbeat_seconds FROM progresstree.jobs WHERE job_id = \(jobID)", logger: logger)
        for try await seconds in rows.decode(Double.self) {
            return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        }
        return "?"
    }

    private func dropIdleRelays() {
        let now = ContinuousClock.now
        let lifetime = options.idleRelayLifetime
        let idle = state.withLock { state -> [JobRelay] in
            let idle = state.relays.values.filter { $0.isIdle(for: lifetime, now: now) }
            for relay in idle { state.relays[relay.jobID] = nil }
            return idle
        }
        for relay in idle { relay.routes.finish() }
    }
}
