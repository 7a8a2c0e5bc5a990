import Logging
import PostgresNIO

/// The tables jobs are kept in (`Docs/JobsOnPostgreSQL.md`, "The schema"), in the schema `progresstree`,
/// and the migrations that make them: each a version, applied once, in order, in a transaction of its own,
/// and recorded in `progresstree.schema_version`.
///
/// Every store migrates at `run()`: stores that start together take turns (a transaction-scoped advisory
/// lock), and one whose schema is newer than it knows refuses to run (`ProgressJobStore.SchemaTooNew`)
/// rather than write rows a newer version reads otherwise. A migration waits at most `lockTimeout` for a
/// table's lock: on a busy table it fails, and the store tries again, rather than queueing every writer
/// behind it. Migrations only add (tables, columns with no default to rewrite, indexes built concurrently
/// in a later version if one is needed), so that none rewrites a table.
enum JobSchema {
    /// The schema's version this code reads and writes.
    static let currentVersion = 1
    /// How long a migration waits for a lock before it gives up (and is tried again).
    static let lockTimeout = "5s"
    /// The advisory lock migrations take turns with: "PTreeJob" in ASCII.
    static let advisoryLock: Int64 = 0x5054_7265_654A_6F62

    /// The migrations, by version: each one's statements, run in one transaction.
    static let migrations: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE progresstree.jobs (
                    job_id text PRIMARY KEY,
                    run text NOT NULL,
                    token text NOT NULL,
                    state text NOT NULL,
                    reason text,
                    seq bigint NOT NULL DEFAULT 0,
                    heartbeat_at timestamptz NOT NULL DEFAULT now(),
                    heartbeat_seconds double precision NOT NULL,
                    retention_seconds double precision NOT NULL,
                    started_at timestamptz NOT NULL DEFAULT now(),
                    ended_at timestamptz,
                    expires_at timestamptz)
                """,
                "CREATE INDEX jobs_running ON progresstree.jobs (heartbeat_at) WHERE ended_at IS NULL",
                "CREATE INDEX jobs_expiring ON progresstree.jobs (expires_at) WHERE expires_at IS NOT NULL",
                """
                CREATE TABLE progresstree.nodes (
                    job_id text NOT NULL REFERENCES progresstree.jobs ON DELETE CASCADE,
                    node_id integer NOT NULL,
                    parent_id integer,
                    state text NOT NULL,
                    seq bigint NOT NULL,
                    line text NOT NULL,
                    PRIMARY KEY (job_id, node_id))
                """,
                """
                CREATE TABLE progresstree.commands (
                    command_id bigserial PRIMARY KEY,
                    job_id text NOT NULL REFERENCES progresstree.jobs ON DELETE CASCADE,
                    run text NOT NULL,
                    line text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX commands_by_job ON progresstree.commands (job_id, command_id)",
            ]
        )
    ]

    /// Brings the schema to `currentVersion`; returns the version found before.
    ///
    /// - Throws: `ProgressJobStore.SchemaTooNew` when the database's schema is newer than this code; what
    ///   PostgreSQL answered otherwise (the store tries again).
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(\(advisoryLock))", logger: logger
            ).collect()
            try await connection.query(
                PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(lockTimeout)'"), logger: logger)
            try await connection.query("CREATE SCHEMA IF NOT EXISTS progresstree", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS progresstree.schema_version (
                    version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var found = 0
            for try await version in try await connection.query(
                "SELECT coalesce(max(version), 0) FROM progresstree.schema_version", logger: logger
            ).decode(Int.self) {
                found = version
            }
            guard found <= currentVersion else {
                throw ProgressJobStore.SchemaTooNew(found: found, known: currentVersion)
            }
            for migration in migrations where migration.version > found {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO progresstree.schema_version (version) VALUES (\(migration.version))", logger: logger)
                logger.info("progresstree schema migrated to version \(migration.version)")
            }
            return found
        }
    }
}
