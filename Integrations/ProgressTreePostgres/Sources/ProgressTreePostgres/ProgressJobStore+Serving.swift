import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO
import ProgressTreeWeb

/// One row of a job read for a relay: the job's run and token, and one node's row (`nil`s when the job has
/// no row newer than asked).
typealias JobRow = (run: String, token: String, nodeID: Int?, seq: Int64?, line: String?)

extension ProgressJobStore {
    /// The routes that serve job `jobID`'s page, event stream, token and commands from PostgreSQL
    /// (`ProgressWebRoutes`), whichever process runs it; `nil` when no such job is kept (never published,
    /// or removed after its retention), and for an id that is not one (`InvalidJobID`'s rule). A job's
    /// routes are made once and shared by its readers on this instance; they go when it has had no reader
    /// for `Options.idleRelayLifetime`, and when its run changes (its pages start again from the new run).
    ///
    /// - Throws: `HTTPError(.serviceUnavailable)` while PostgreSQL cannot be reached (pages say
    ///   "reconnecting…" and try again).
    public func routes(forJob jobID: String) async throws -> ProgressWebRoutes? {
        guard JobID.isValid(jobID) else { return nil }
        guard isListening else { throw Self.unavailable }
        if let relay = state.withLock({ $0.relays[jobID] }) { return relay.routes }
        let rows: [JobRow]
        do {
            rows = try await loadRows(jobID, above: -1)
        } catch {
            logger.warning("progresstree: reading job \(jobID) failed: \(String(reflecting: error))")
            throw Self.unavailable
        }
        guard let first = rows.first else { return nil }
        let relay = JobRelay(
            jobID: jobID, run: first.run, token: first.token, options: options.routes,
            sendCommand: { [weak self] line in
                guard let self else { return .refused(.serviceUnavailable, "the server is stopping") }
                return await self.send(line, toJob: jobID, run: first.run)
            })
        relayRows(rows, to: relay)
        let kept = state.withLock { state -> JobRelay in
            if let existing = state.relays[jobID] { return existing }
            state.relays[jobID] = relay
            return relay
        }
        if kept !== relay {
            relay.routes.finish()
            return kept.routes
        }
        // What was written between the read and the relay's listing here: read once more.
        noteChange(jobID: jobID, run: first.run, seq: max(relay.lastSeq, 0))
        return relay.routes
    }

    static var unavailable: HTTPError {
        HTTPError(.serviceUnavailable, message: "the progress store (PostgreSQL) cannot be reached; trying again")
    }

    /// The job's run and token, and its rows with `seq` above `seq` (none: one row of `nil`s), by node id.
    private func loadRows(_ jobID: String, above seq: Int64) async throws
        -> [JobRow]
    {
        var result: [JobRow] = []
        let rows = try await client.query(
            """
            SELECT j.run, j.token, n.node_id, n.seq, n.line FROM progresstree.jobs AS j
            LEFT JOIN progresstree.nodes AS n ON n.job_id = j.job_id AND n.seq > \(seq)
            WHERE j.job_id = \(jobID) ORDER BY n.node_id
            """, logger: logger)
        for try await row in rows.decode((String, String, Int?, Int64?, String?).self) {
            result.append((row.0, row.1, row.2, row.3, row.4))
        }
        return result
    }

    private func relayRows(
        _ rows: [JobRow], to relay: JobRelay
    ) {
        var lines: [RelayLines.Row] = []
        var highest: Int64 = relay.lastSeq
        for row in rows {
            guard let id = row.nodeID, let line = row.line, let seq = row.seq else { continue }
            lines.append(RelayLines.Row(nodeID: id, line: line))
            highest = max(highest, seq)
        }
        let (bytes, skipped) = RelayLines.assemble(lines)
        if !skipped.isEmpty {
            state.withLock { $0.diagnostics.skippedRows += skipped.count }
            logger.warning(
                "progresstree: job \(relay.jobID): skipped rows of nodes \(skipped.map(String.init).joined(separator: ", ")): not a progress line of that node"
            )
        }
        relay.relay(bytes, upTo: highest)
    }

    /// A notification said job `jobID`'s rows changed, up to `seq`.
    func noteChange(jobID: String, run: String, seq: Int64) {
        guard let relay = state.withLock({ $0.relays[jobID] }) else { return }
        guard relay.run == run else {
            replace(relay)
            return
        }
        guard relay.want(seq) else { return }
        Task {
            var read = false
            repeat {
                read = false
                do {
                    let rows = try await loadRows(jobID, above: relay.beginFetch())
                    guard let first = rows.first else {
                        // Removed (its retention ended): its readers keep the last state, "no longer served".
                        remove(relay)
                        relay.routes.finish()
                        return
                    }
                    guard first.run == relay.run else {
                        replace(relay)
                        return
                    }
                    relayRows(rows, to: relay)
                    read = true
                } catch {
                    logger.warning("progresstree: reading job \(jobID)'s changes failed: \(String(reflecting: error))")
                    // A relay dropped meanwhile (the store lost its connection) is read no more.
                    guard state.withLock({ $0.relays[jobID] === relay }) else { return }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            } while relay.endFetch(read: read)
        }
    }

    /// A notification said job `jobID` was removed (its retention ended): its readers keep the last state
    /// they have, "no longer served".
    func noteRemoval(jobID: String, run: String) {
        guard let relay = state.withLock({ $0.relays[jobID] }), relay.run == run else { return }
        remove(relay)
        relay.routes.finish()
    }

    /// Drops a relay whose job was published again (another run): its readers reconnect, and get the new
    /// run from a new relay.
    private func replace(_ relay: JobRelay) {
        remove(relay)
        relay.routes.finishForReconnection()
    }

    private func remove(_ relay: JobRelay) {
        state.withLock { state in
            if state.relays[relay.jobID] === relay { state.relays[relay.jobID] = nil }
        }
    }
}
