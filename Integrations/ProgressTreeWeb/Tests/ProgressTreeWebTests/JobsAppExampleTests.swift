import Foundation
import ProgressTree
import ProgressTreeStreaming
import XCTest

/// The example application (`jobs-app`) run as a program: its jobs' pages behind its cookie sessions or
/// its bearer tokens (with a stream ticket), its long-lived "All jobs" root, and its graceful stop.
final class JobsAppExampleTests: XCTestCase {
    private func request(
        _ example: ExampleProcess, _ method: String, _ path: String, headers: [(String, String)] = [],
        body: String = ""
    ) throws -> RawHTTPConnection.Response {
        let connection = try RawHTTPConnection(port: example.port)
        connection.send(method, path, host: "127.0.0.1:\(example.port)", headers: headers, body: Array(body.utf8))
        return try connection.answer()
    }

    /// Opens an event stream at `path` and reads until `done` holds for its events (or 30 s).
    private func stream(
        _ example: ExampleProcess, _ path: String, headers: [(String, String)] = [],
        until done: ([ServerSentEvent]) -> Bool
    ) throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(port: example.port)
        connection.send("GET", path, host: "127.0.0.1:\(example.port)", headers: headers)
        XCTAssertTrue(connection.read(seconds: 30) { done(ServerSentEvent.parse($0.body)) }, path)
        return connection
    }

    private static func records(_ events: [ServerSentEvent]) -> [ProgressWireRecord] {
        events.filter { $0.event == nil }.compactMap {
            $0.data.first.flatMap { try? ProgressWireRecord(line: Array($0.utf8)) }
        }
    }

    func test_cookie_sessions_guard_the_pages_and_the_page_commands_with_its_token() throws {
        let example = try ExampleProcess("jobs-app", ["--auth", "cookie", "--jobs", "1", "--images", "40"])
        defer { example.end() }
        XCTAssertEqual(try request(example, "GET", "/health").body, "ok")
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/1/").status, 401)
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/1/events").status, 401)
        XCTAssertEqual(try request(example, "GET", "/api/jobs").status, 401)
        let wrong = try request(
            example, "POST", "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "user=ada&password=babbage")
        XCTAssertEqual(wrong.status, 401)
        let login = try request(
            example, "POST", "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "user=ada&password=lovelace")
        XCTAssertEqual(login.status, 302)
        let session = try XCTUnwrap(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        let cookie = [("Cookie", session)]
        XCTAssertTrue(try request(example, "GET", "/", headers: cookie).body.contains(#"href="progress/jobs/1/""#))
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/1/", headers: cookie).status, 200)
        let reader = try stream(example, "/progress/jobs/1/events", headers: cookie) { events in
            events.contains { $0.event == "synced" }
        }
        XCTAssertEqual(
            Self.records(ServerSentEvent.parse(try XCTUnwrap(reader.response).body)).first?.label,
            "Job 1: resizing 40 images")
        // The page's token and a command: the session is not enough, the token is.
        let origin = ("Origin", "http://127.0.0.1:\(example.port)")
        let token = try request(example, "POST", "/progress/jobs/1/token", headers: cookie + [origin]).body
        XCTAssertNotNil(token.wholeMatch(of: /[0-9a-f]{32}/), token)
        let pause = #"{"v":1,"command":"pause","id":1}"#
        XCTAssertEqual(
            try request(example, "POST", "/progress/jobs/1/commands", headers: cookie + [origin], body: pause).status,
            403)
        XCTAssertEqual(
            try request(
                example, "POST", "/progress/jobs/1/commands", headers: [("ProgressTree-Token", token), origin],
                body: pause
            ).status, 401, "the token without the session")
        XCTAssertEqual(
            try request(
                example, "POST", "/progress/jobs/1/commands",
                headers: cookie + [("ProgressTree-Token", token), origin],
                body: pause
            ).status, 204)
        XCTAssertTrue(
            reader.read(seconds: 5) { response in
                Self.records(ServerSentEvent.parse(response.body)).contains {
                    $0.parentID == nil && $0.state == .paused
                }
            })
    }

    func test_bearer_tokens_open_a_page_with_a_ticket_redeemed_once_for_a_cookie_of_that_page() throws {
        let example = try ExampleProcess("jobs-app", ["--auth", "bearer", "--jobs", "2", "--images", "40"])
        defer { example.end() }
        let bearer = [("Authorization", "Bearer ada-token")]
        XCTAssertEqual(try request(example, "GET", "/api/jobs").status, 401)
        XCTAssertEqual(
            try request(example, "GET", "/api/jobs", headers: [("Authorization", "Bearer nope")]).status, 401)
        XCTAssertEqual(try request(example, "GET", "/api/jobs", headers: bearer).status, 200)
        // A browser cannot send the header with EventSource: the application's client asks for a ticket.
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/1/events").status, 401)
        XCTAssertEqual(try request(example, "POST", "/api/jobs/1/ticket").status, 401)
        // JSON may escape its slashes.
        let answer = try request(example, "POST", "/api/jobs/1/ticket", headers: bearer).body
            .replacingOccurrences(of: "\\/", with: "/")
        let match = try XCTUnwrap(answer.firstMatch(of: #/"page":"(/progress/jobs/1/\?ticket=([0-9a-f]{32}))"/#))
        let page = try request(example, "GET", String(match.1))
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("dashboard.js"))
        let session = try XCTUnwrap(page.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        XCTAssertEqual(try request(example, "GET", String(match.1)).status, 401, "a ticket is good once")
        let cookie = [("Cookie", session)]
        let reader = try stream(example, "/progress/jobs/1/events", headers: cookie) { events in
            events.contains { $0.event == "synced" }
        }
        XCTAssertEqual(try XCTUnwrap(reader.response).status, 200)
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/2/events", headers: cookie).status, 401)
        // The bearer token itself still opens the routes (a program's reader).
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/2/dashboard.css", headers: bearer).status, 200)
        // The token still guards commands.
        let origin = ("Origin", "http://127.0.0.1:\(example.port)")
        let token = try request(example, "POST", "/progress/jobs/1/token", headers: cookie + [origin]).body
        XCTAssertEqual(
            try request(
                example, "POST", "/progress/jobs/1/commands", headers: cookie + [origin],
                body: #"{"v":1,"command":"cancel","id":1}"#
            ).status, 403)
        XCTAssertEqual(
            try request(
                example, "POST", "/progress/jobs/1/commands",
                headers: cookie + [origin, ("ProgressTree-Token", token)],
                body: #"{"v":1,"command":"cancel","id":1}"#
            ).status, 204)
    }

    func test_the_all_jobs_root_keeps_streaming_as_jobs_come_after_others_finished_and_shows_queued_ones() throws {
        let example = try ExampleProcess(
            "jobs-app", ["--auth", "none", "--jobs", "2", "--images", "4", "--speed", "2"])
        defer { example.end() }
        // Job 2 is queued (0 of 0) while job 1 runs, then both finish; the root does not. (The jobs are the
        // root's children; their images, below them, finish too, and do not count here.)
        let reader = try stream(example, "/progress/all/events") { events in
            let records = Self.records(events)
            guard let root = records.first(where: { $0.parentID == nil }) else { return false }
            return records.filter { $0.parentID == root.id && $0.state == .finished }.count == 2
        }
        let first = Self.records(ServerSentEvent.parse(try XCTUnwrap(reader.response).body))
        let rootID = try XCTUnwrap(first.first { $0.parentID == nil }).id
        XCTAssertEqual(
            first.filter { $0.parentID == rootID && $0.state.isFinal }.map { "\($0.label ?? "") \($0.state)" },
            ["Job 1: resizing 4 images finished", "Job 2: resizing 4 images finished"], "both jobs ended first")
        let queued = try XCTUnwrap(first.first { $0.label == "Job 2: resizing 4 images" })
        XCTAssertEqual([queued.completedUnitCount, queued.totalUnitCount], [0, 0])
        XCTAssertEqual(queued.state, .running)
        XCTAssertTrue(first.allSatisfy { !($0.parentID == nil && $0.state.isFinal) }, "the root never ended")
        // A job added after the others finished appears in the same stream, and runs to its end.
        let added = try request(example, "POST", "/api/jobs", body: #"{"images":3}"#).body
            .replacingOccurrences(of: "\\/", with: "/")
        XCTAssertTrue(added.contains(#""page":"/progress/jobs/3/""#), added)
        XCTAssertTrue(
            reader.read(seconds: 30) { response in
                Self.records(ServerSentEvent.parse(response.body)).contains {
                    $0.label == "Job 3: resizing 3 images" && $0.state == .finished
                }
            })
        let all = Self.records(ServerSentEvent.parse(try XCTUnwrap(reader.response).body))
        let root = try XCTUnwrap(all.last { $0.parentID == nil })
        XCTAssertEqual(root.state, .running)
        XCTAssertEqual(root.localizedAdditionalDescription, "3 of 3 jobs ended")
    }

    func test_a_job_that_ends_has_its_routes_finished_and_only_the_last_kept_jobs_stay() throws {
        let example = try ExampleProcess(
            "jobs-app", ["--auth", "none", "--jobs", "3", "--images", "2", "--speed", "4", "--kept-jobs", "1"])
        defer { example.end() }
        let all = try stream(example, "/progress/all/events") { events in
            Self.records(events).contains {
                $0.parentID == nil && $0.localizedAdditionalDescription == "3 of 3 jobs ended"
            }
        }
        XCTAssertNotNil(all.response)
        // Job 3, the one kept: its stream is its final state, then `ended` ("closed"), and the answer ends
        // (before, the routes walked and kept the connection alive for ever).
        let job = try RawHTTPConnection(port: example.port)
        job.send("GET", "/progress/jobs/3/events", host: "127.0.0.1:\(example.port)")
        XCTAssertTrue(job.read(seconds: 10) { $0.isComplete }, "the stream of an ended job ends")
        let events = ServerSentEvent.parse(try XCTUnwrap(job.response).body)
        XCTAssertEqual(events.last?.summary(base: 0), "ended closed")
        XCTAssertEqual(Self.records(events).last { $0.parentID == nil }?.state, .finished)
        // Jobs 1 and 2 were forgotten as later ones ended: their pages answer 404, the API lists job 3 only.
        for path in ["/progress/jobs/1/", "/progress/jobs/2/events"] {
            XCTAssertEqual(try request(example, "GET", path).status, 404, path)
        }
        let jobs = try request(example, "GET", "/api/jobs").body.replacingOccurrences(of: "\\/", with: "/")
        XCTAssertEqual(jobs.matches(of: /"id":(\d+)/).map { String($0.1) }, ["3"], jobs)
        XCTAssertEqual(try request(example, "GET", "/progress/jobs/3/").status, 200)
    }

    func test_an_allowed_origin_that_is_not_an_origin_is_a_usage_error_with_exit_status_2() throws {
        for origin in [
            "https://progress.example/jobs", "https://[evil]", "https://progress.example:99999",
            "progress.example", "https://*.example", " https://progress.example",
        ] {
            let run = try ExampleProcess.run("jobs-app", ["--allowed-origin", origin])
            XCTAssertEqual(run.reason, .exit, origin)
            XCTAssertEqual(run.status, 2, origin)
            XCTAssertEqual(run.standardOutput, "", origin)
            XCTAssertTrue(
                run.standardError.hasPrefix(
                    "jobs-app: bad --allowed-origin \(origin): write scheme://host[:port] as the browser shows the "
                        + "page's address (http or https, no path, no wildcard)\nusage: jobs-app "),
                run.standardError)
        }
    }

    func test_sigterm_with_readers_connected_stops_it_gracefully_within_2_seconds_and_tells_them() throws {
        let example = try ExampleProcess("jobs-app", ["--auth", "none", "--jobs", "2", "--images", "400"])
        defer { example.end() }
        let readers = try ["/progress/all/events", "/progress/jobs/1/events", "/progress/jobs/2/events"].map { path in
            try stream(example, path) { events in events.contains { $0.event == "synced" } }
        }
        let started = ContinuousClock.now
        kill(example.process.processIdentifier, SIGTERM)
        example.process.waitUntilExit()
        let took = started.duration(to: .now)
        XCTAssertLessThan(took, .seconds(2), "jobs-app stopped in \(took)")
        XCTAssertEqual(example.process.terminationReason, .exit)
        XCTAssertEqual(example.process.terminationStatus, 0)
        for reader in readers {
            XCTAssertTrue(reader.read(seconds: 2) { $0.isComplete })
            XCTAssertEqual(
                ServerSentEvent.parse(try XCTUnwrap(reader.response).body).last?.summary(base: 0), "ended stopping")
        }
    }
}
