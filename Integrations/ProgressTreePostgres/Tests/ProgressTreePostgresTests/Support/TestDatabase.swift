import Foundation
import Logging
import PostgresNIO
import ProgressTree
import ProgressTreeStreaming
import XCTest

@testable import ProgressTreePostgres

/// The PostgreSQL server the tests run against: the one `Tests/postgres/with-postgres.sh` starts (its URL
/// in `PROGRESSTREE_POSTGRES_URL`). Without it the tests fail, saying how to run them; they never skip.
enum TestDatabase {
    static var url: String? {
        ProcessInfo.processInfo.environment["PROGRESSTREE_POSTGRES_URL"]
    }

    static let missing =
        "no PostgreSQL server: run the tests with bash Tests/postgres/with-postgres.sh swift test --package-path Integrations/ProgressTreePostgres"

    /// A new id for a job of one test.
    static func jobID(_ name: String) -> String {
        "\(name)-\(RunIdentity.make().prefix(12))"
    }

    /// Options of a test: short intervals, so that tests take seconds.
    static func options(
        heartbeatTimeout: Duration = .seconds(15), retention: Duration = .seconds(3600)
    ) -> ProgressJobStore.Options {
        var options = ProgressJobStore.Options()
        options.interval = .milliseconds(100)
        options.heartbeatTimeout = heartbeatTimeout
        options.retention = retention
        options.sweepInterval = .milliseconds(200)
        options.finalWriteTimeout = .seconds(30)
        return options
    }

    /// A running store on the test server (its schema migrated), and the task that runs it.
    static func store(_ options: ProgressJobStore.Options = options()) async throws -> RunningStore {
        guard let url else {
            XCTFail(missing)
            throw NoDatabase()
        }
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let store = try ProgressJobStore(url: url, options: options, logger: logger)
        let task = Task { try await store.run() }
        try await store.waitUntilReady()
        try await waitUntil("the store listens") { store.isListening }
        return RunningStore(store: store, task: task)
    }

    /// Runs `sql` on the test server on a connection of its own.
    static func execute(_ sql: String) async throws {
        let store = try await self.store()
        defer { store.stop() }
        try await store.store.client.query(PostgresQuery(unsafeSQL: sql))
    }
}

/// A store and the task that runs it.
struct RunningStore {
    let store: ProgressJobStore
    let task: Task<Void, any Error>

    func stop() {
        task.cancel()
    }
}

/// Waits until `condition` holds, checking every 20 ms, failing after `timeout`.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(10), file: StaticString = #filePath, line: UInt = #line,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            XCTFail("timed out waiting until \(what)", file: file, line: line)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// What a reader of a job's event stream has read: the last line of each node (the wire format's rule).
final class StreamReader {
    let subscription: ProgressEventStream.Subscription
    private(set) var text = ""
    private(set) var nodes: [Int: ProgressWireRecord] = [:]
    private(set) var runs: [String] = []
    private(set) var syncedCount = 0

    init(_ events: ProgressEventStream) {
        subscription = events.subscribe()
    }

    /// Reads chunks until `condition` holds of what was read.
    func read(
        until what: String, timeout: Duration = .seconds(10), file: StaticString = #filePath, line: UInt = #line,
        _ condition: (StreamReader) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            guard ContinuousClock.now < deadline else {
                XCTFail("timed out reading until \(what); read: \(text.suffix(2000))", file: file, line: line)
                throw CancellationError()
            }
            let subscription = self.subscription
            let next = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                group.addTask { await subscription.next() }
                group.addTask {
                    try await Task.sleep(until: deadline)
                    return []
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            guard let chunk = next else { break }
            take(chunk)
        }
        if !condition(self) { XCTFail("the stream ended before \(what)", file: file, line: line) }
    }

    private func take(_ chunk: [UInt8]) {
        let piece = String(decoding: chunk, as: UTF8.self)
        text += piece
        for event in piece.components(separatedBy: "\n\n") {
            let fields = event.split(separator: "\n")
            let isRun = fields.contains("event: run")
            if fields.contains("event: synced") { syncedCount += 1 }
            for field in fields where field.hasPrefix("data: ") {
                let data = field.dropFirst(6)
                if isRun {
                    runs.append(String(data))
                } else if let record = try? ProgressWireRecord(line: Array(data.utf8)) {
                    nodes[record.id] = record
                }
            }
        }
    }

    /// Reads until the stream ends (a relay dropped: its readers reconnect).
    func readToEnd(timeout: Duration = .seconds(10), file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let subscription = self.subscription
            let next = try await withThrowingTaskGroup(of: [UInt8]??.self) { group in
                group.addTask { .some(await subscription.next()) }
                group.addTask {
                    try await Task.sleep(until: deadline)
                    return .none
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            switch next {
            case .none: break
            case .some(.none): return
            case .some(.some(let chunk)): take(chunk)
            }
        }
        XCTFail("the stream did not end", file: file, line: line)
    }

    /// The root's last line.
    var root: ProgressWireRecord? {
        nodes.values.first { $0.parentID == nil }
    }
}

/// The tests were run without their server (see `TestDatabase.missing`): they fail.
struct NoDatabase: Error {}
