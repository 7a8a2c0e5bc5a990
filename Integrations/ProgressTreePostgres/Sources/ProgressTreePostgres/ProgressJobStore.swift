import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ProgressTreeWeb
import ServiceLifecycle
import Synchronization

/// Jobs' progress trees kept in PostgreSQL (`Docs/JobsOnPostgreSQL.md`), so that any instance of an
/// application serves any job's page, whichever process runs the job, across restarts.
///
/// One store per process, on one database: a worker publishes its jobs with it (`publish(_:jobID:)`), a
/// web instance serves jobs' pages with it (`routes(forJob:)`, or `addProgressRoutes(store:jobID:)` on a
/// router group), and a process may do both. It keeps:
/// - **a pool** of connections (PostgresNIO's `PostgresClient`, at most `Options.maximumConnections`);
/// - **one listening connection** (`LISTEN`): changes of the jobs it serves, commands for the jobs it runs;
///   reconnected a second after it is lost, meanwhile its pages are told to reconnect;
/// - **the schema**, migrated at `run()` (`JobSchema`, versioned in `progresstree.schema_version`);
/// - **a sweep**, every `Options.sweepInterval`: a running job whose process has not written for its
///   heartbeat timeout is ended, failed with "stopped reporting"; an ended job past its retention is
///   removed with its rows.
///
/// ```swift
/// let store = try ProgressJobStore(url: "postgres://app:secret@db:5432/app")
/// // a ServiceGroup runs it with the application (or: Task { try await store.run() })
/// let job = try await store.publish(root, jobID: "resize-42")   // a worker
/// router.group("jobs/{id}").addProgressRoutes(store: store) { _, context in context.parameters.get("id") }
/// ```
///
/// Thread safety: every member may be called from any thread; `run()` once.
public final class ProgressJobStore: Service, Sendable {
    /// How the store behaves. The publishing process's values are kept with each job (its heartbeat
    /// timeout and retention), so that every instance ends and removes it alike.
    public struct Options: Sendable {
        /// The least time between two writes of one job (`ProgressPublisher`'s walks too): 250 ms, at most 4
        /// statements a job a second, each writing only the nodes that changed since the last.
        public var interval: Duration = .milliseconds(250)
        /// How long a running job may go without a write before it reads failed, "stopped reporting": 15 s
        /// (its process writes a heartbeat every third of it when nothing changed). After a restart of
        /// PostgreSQL, no job is ended before this long has passed, so that their processes can reconnect.
        public var heartbeatTimeout: Duration = .seconds(15)
        /// How long an ended job's final state is kept (finished, failed with its reasons, cancelled, with
        /// its properties) before it is removed: 24 hours.
        public var retention: Duration = .seconds(24 * 3600)
        /// How often this store looks for jobs that stopped reporting and for jobs past their retention.
        public var sweepInterval: Duration = .seconds(1)
        /// How long a job's last write is tried again while PostgreSQL cannot be reached (a restart)
        /// before it is given up: 2 minutes.
        public var finalWriteTimeout: Duration = .seconds(120)
        /// How long a served job with no reader is kept in memory: 60 s.
        public var idleRelayLifetime: Duration = .seconds(60)
        /// The pool's largest number of connections.
        public var maximumConnections = 8
        /// The routes' options (who may send commands, behind which proxy: `ProgressWebRoutes.Options`).
        public var routes = ProgressWebRoutes.Options()

        /// The defaults.
        public init() {}
    }

    /// Where the database is.
    public struct Server: Sendable, Equatable {
        /// The host name or address.
        public var host: String
        /// The port: 5432 by default.
        public var port: Int
        /// The user to log in as.
        public var username: String
        /// The user's password, if the server asks for one.
        public var password: String?
        /// The database: the user's name by default.
        public var database: String?

        /// A server at `host`.
        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil)
        {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
        }

        /// The server a URL names: `postgres://user[:password]@host[:port][/database]` (or `postgresql://`),
        /// with `%`-escapes in the user and password; `nil` for anything else (a query, another scheme, no
        /// user, a port that is not a number from 1 to 65535).
        public init?(url: String) {
            guard let parsed = parsePostgresURL(url) else { return nil }
            self = parsed
        }
    }

    /// The database's schema is newer than this code knows: another version of the application migrated
    /// it. The store does not run (it would write rows the newer version reads otherwise).
    public struct SchemaTooNew: Error, CustomStringConvertible, Equatable {
        /// The version found in `progresstree.schema_version`.
        public var found: Int
        /// The newest version this code knows.
        public var known: Int
        /// "the progresstree schema is at version 3, newer than this program knows (1): update it".
        public var description: String {
            "the progresstree schema is at version \(found), newer than this program knows (\(known)): update it"
        }
    }

    /// A job id is refused: ids are 1 to 128 ASCII letters, digits, `-`, `_` and `.`.
    public struct InvalidJobID: Error, CustomStringConvertible, Equatable {
        /// The id given.
        public var jobID: String
        /// Says which characters an id may have.
        public var description: String {
            "job id \"\(jobID.prefix(140))\" is not 1 to 128 ASCII letters, digits, '-', '_' and '.'"
        }
    }

    /// A job with this id runs in a process that still reports: two processes never publish one job.
    public struct JobAlreadyRunning: Error, CustomStringConvertible, Equatable {
        /// The job's id.
        public var jobID: String
        /// Says so.
        public var description: String { "job \(jobID) is running in another process that still reports" }
    }

    /// What the store did, for logs and tests.
    public struct Diagnostics: Sendable, Equatable {
        /// Statements that wrote jobs' changed nodes (one per job per interval at most).
        public var statements = 0
        /// Rows those statements wrote.
        public var rowsWritten = 0
        /// Heartbeats written (a statement each, when a job had nothing to write).
        public var heartbeats = 0
        /// Rows read for a served job that were not a progress line of its node (written by hand, or
        /// damaged): skipped, each with a warning in the log.
        public var skippedRows = 0
        /// Notifications on the store's channels that were not the store's own: skipped, with a warning.
        public var foreignNotifications = 0
        /// Times the listening connection was made again after it was lost.
        public var reconnections = 0
        /// Jobs this store ended as "stopped reporting".
        public var jobsStoppedReporting = 0
        /// Ended jobs this store removed at the end of their retention.
        public var jobsRemoved = 0
        /// Commands applied to jobs this process runs.
        public var commandsApplied = 0

        /// Nothing yet.
        public init() {}
    }

    /// The options given.
    public let options: Options
    let server: Server
    let client: PostgresClient
    let logger: Logger
    let state = Mutex(StoreState())

    /// A store on `server`. Nothing is connected before `run()`.
    public init(server: Server, options: Options = Options(), logger: Logger = Logger(label: "ProgressTreePostgres")) {
        var configuration = PostgresClient.Configuration(
            host: server.host, port: server.port, username: server.username, password: server.password,
            database: server.database, tls: .disable)
        configuration.options.maximumConnections = max(1, options.maximumConnections)
        configuration.options.connectTimeout = .seconds(5)
        self.server = server
        self.options = options
        self.logger = logger
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// A store on the server `url` names (`Server(url:)`).
    ///
    /// - Throws: `InvalidURL` when `url` is not a `postgres://` URL of a server.
    public convenience init(
        url: String, options: Options = Options(), logger: Logger = Logger(label: "ProgressTreePostgres")
    ) throws {
        guard let server = Server(url: url) else { throw InvalidURL(url: url) }
        self.init(server: server, options: options, logger: logger)
    }

    /// A URL that does not name a server: `postgres://user[:password]@host[:port][/database]`.
    public struct InvalidURL: Error, CustomStringConvertible, Equatable {
        /// The URL given.
        public var url: String
        /// Says what is expected.
        public var description: String {
            "\(url.prefix(200)) is not a PostgreSQL URL: write postgres://user[:password]@host[:port][/database]"
        }
    }

    /// What the store did so far.
    public var diagnostics: Diagnostics {
        state.withLock { $0.diagnostics }
    }

    /// Whether the listening connection is up: jobs' pages are served only then (else `503`).
    public var isListening: Bool {
        state.withLock { $0.isListening }
    }

    /// Connects, migrates the schema, listens and sweeps until the calling task is cancelled or the
    /// application's graceful shutdown (`ServiceGroup`) begins. Publishing and serving wait for the
    /// migration. A lost connection is made again a second later, however long PostgreSQL is away.
    ///
    /// - Throws: `SchemaTooNew` when the database's schema is newer than this code.
    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.client.run() }
                group.addTask {
                    try await self.migrateUntilDone()
                    await withTaskGroup(of: Void.self) { loops in
                        loops.addTask { await self.listenUntilCancelled() }
                        loops.addTask { await self.sweepUntilCancelled() }
                    }
                }
                do {
                    try await group.next()
                } catch {
                    self.state.withLock { $0.failReady(error) }.forEach { $0.resume(throwing: error) }
                    throw error
                }
                group.cancelAll()
            }
        }
        let relays = state.withLock { state in
            state.isListening = false
            defer { state.relays = [:] }
            return Array(state.relays.values)
        }
        // The jobs live on in PostgreSQL: their pages reconnect, to another instance.
        for relay in relays { relay.routes.finishForReconnection() }
    }

    /// Returns once the schema is migrated (`run()` must be running).
    ///
    /// - Throws: `SchemaTooNew`, or `CancellationError` when the calling task is cancelled.
    public func waitUntilReady() async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let result = state.withLock { state -> Result<Void, any Error>? in
                if let failure = state.readyFailure { return .failure(failure) }
                if state.isMigrated { return .success(()) }
                state.readyWaiters.append(waiter)
                return nil
            }
            if let result { waiter.resume(with: result) }
        }
    }

    private func migrateUntilDone() async throws {
        while true {
            do {
                try await JobSchema.migrate(client, logger: logger)
                let waiters = state.withLock { state in
                    state.isMigrated = true
                    defer { state.readyWaiters = [] }
                    return state.readyWaiters
                }
                for waiter in waiters { waiter.resume() }
                return
            } catch let error as SchemaTooNew {
                logger.error("\(error.description)")
                throw error
            } catch {
                logger.warning("progresstree: migrating the schema failed (\(String(reflecting: error))); trying again")
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}

/// What a store holds between calls (guarded by its lock).
struct StoreState: ~Copyable {
    var isMigrated = false
    var readyFailure: (any Error)?
    var readyWaiters: [CheckedContinuation<Void, any Error>] = []
    var isListening = false
    /// The jobs this process publishes, by id.
    var publications: [String: ProgressJobPublication] = [:]
    /// The jobs this process serves, by id.
    var relays: [String: JobRelay] = [:]
    var diagnostics = ProgressJobStore.Diagnostics()

    mutating func failReady(_ error: any Error) -> [CheckedContinuation<Void, any Error>] {
        readyFailure = error
        defer { readyWaiters = [] }
        return readyWaiters
    }
}
