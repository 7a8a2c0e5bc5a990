import XCTest

@testable import ProgressTreePostgres

/// `postgres://` URLs read into a server, and what is refused.
final class ServerURLTests: XCTestCase {
    func testAURLWithEveryPartReadsIntoItsServer() {
        XCTAssertEqual(
            ProgressJobStore.Server(url: "postgres://app:s%40cret@db.internal:6432/jobs"),
            ProgressJobStore.Server(
                host: "db.internal", port: 6432, username: "app", password: "s@cret", database: "jobs"))
        XCTAssertEqual(
            ProgressJobStore.Server(url: "postgresql://app@[::1]/"),
            ProgressJobStore.Server(host: "::1", port: 5432, username: "app", password: nil, database: nil))
    }

    func testWhatIsNotAServersURLIsRefused() {
        for url in [
            "http://app@db/jobs", "postgres://db:5432/jobs", "postgres://app@db:0/jobs", "postgres://app@db:x/jobs",
            "postgres://app@db/jobs?sslmode=require", "postgres://app:%zz@db/jobs", "postgres://app@/jobs",
        ] {
            XCTAssertNil(ProgressJobStore.Server(url: url), url)
        }
        XCTAssertThrowsError(try ProgressJobStore(url: "mysql://x@y")) { error in
            XCTAssertEqual(
                String(describing: error),
                "mysql://x@y is not a PostgreSQL URL: write postgres://user[:password]@host[:port][/database]")
        }
    }

    func testNotificationPayloadsThatAreNotTheStoresReadAsNone() {
        let run = String(repeating: "a", count: 32)
        XCTAssertEqual(
            JobNotification(channel: JobNotification.changesChannel, payload: "1 7 \(run) resize-42"),
            .changed(jobID: "resize-42", run: run, seq: 7))
        XCTAssertEqual(
            JobNotification(channel: JobNotification.commandsChannel, payload: "1 \(run) resize-42"),
            .command(jobID: "resize-42", run: run))
        for payload in [
            "", "hello", "2 7 \(run) a", "1 -1 \(run) a", "1 7 short a", "1 7 \(run) a/b", "1 7 \(run) a b",
        ] {
            XCTAssertNil(JobNotification(channel: JobNotification.changesChannel, payload: payload), payload)
        }
    }
}
