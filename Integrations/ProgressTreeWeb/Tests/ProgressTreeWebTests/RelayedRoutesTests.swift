import HTTPTypes
import Hummingbird
import ProgressTree
import ProgressTreeStreaming
import Synchronization
import XCTest

@testable import ProgressTreeWeb

/// Routes of a tree walked elsewhere (`ProgressWebRoutes(relaying:token:options:sendCommand:)`, as
/// ProgressTreePostgres serves jobs): the relay's lines, the given token, commands handed to the sender
/// and its refusals answered with their sentence, and readers told to reconnect rather than stop.
final class RelayedRoutesTests: XCTestCase {
    private let line = #"{"v":1,"id":1,"parent":null,"completed":1,"total":4,"state":"running"}"#

    private func post(_ port: Int, _ path: String, token: String, body: String) throws -> RawHTTPConnection.Response {
        let connection = try RawHTTPConnection(port: port)
        connection.send(
            "POST", path, host: "127.0.0.1:\(port)", headers: [("ProgressTree-Token", token)], body: Array(body.utf8))
        return try connection.answer()
    }

    func test_commands_go_to_the_sender_and_a_refusal_is_answered_with_its_status_and_sentence() async throws {
        let sent = Mutex<[String]>([])
        let events = ProgressEventStream(relayingRun: "worker-run.1")
        events.relay(Array((line + "\n").utf8))
        let routes = ProgressWebRoutes(relaying: events, token: "0123456789abcdef0123456789abcdef") { body in
            let text = String(decoding: body, as: UTF8.self)
            sent.withLock { $0.append(text) }
            if text.contains("cancel") {
                return .refused(.conflict, "Job 7 has ended (finished): it takes no more commands.")
            }
            return text.contains("\"command\"") ? .delivered : .malformed
        }
        let router = Router()
        router.group("jobs/7").addProgressRoutes(routes)
        let application = try await LiveApplication.start(router)
        defer { Task { await application.stop() } }
        let port = application.port
        let token = "0123456789abcdef0123456789abcdef"

        let token404 = try post(port, "/jobs/7/commands", token: "wrong", body: #"{"v":1,"command":"pause","id":1}"#)
        XCTAssertEqual(token404.status, 403)
        let paused = try post(port, "/jobs/7/commands", token: token, body: #"{"v":1,"command":"pause","id":1}"#)
        XCTAssertEqual(paused.status, 204)
        let refused = try post(port, "/jobs/7/commands", token: token, body: #"{"v":1,"command":"cancel","id":1}"#)
        XCTAssertEqual(refused.status, 409)
        XCTAssertEqual(refused.headers["content-type"], "text/plain; charset=utf-8")
        XCTAssertEqual(refused.body, "Job 7 has ended (finished): it takes no more commands.")
        let malformed = try post(port, "/jobs/7/commands", token: token, body: "pause")
        XCTAssertEqual(malformed.status, 400)
        XCTAssertEqual(
            sent.withLock { $0 },
            [#"{"v":1,"command":"pause","id":1}"#, #"{"v":1,"command":"cancel","id":1}"#, "pause"])
        // The token is the one given (the same on every instance).
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET", "/jobs/7/token", host: "127.0.0.1:\(port)")
        XCTAssertEqual(try connection.answer().body, token)
    }

    func test_readers_of_a_relay_are_told_to_reconnect_never_that_it_ended() async throws {
        let events = ProgressEventStream(relayingRun: "worker-run.2")
        events.relay(Array((line + "\n").utf8))
        let routes = ProgressWebRoutes(relaying: events, token: nil) { _ in .delivered }
        let router = Router()
        router.group("jobs/8").addProgressRoutes(routes)
        let application = try await LiveApplication.start(router)
        let port = application.port

        // Dropped (the store lost its connection): the stream closes without `ended`.
        let first = try RawHTTPConnection(port: port)
        first.send("GET", "/jobs/8/events", host: "127.0.0.1:\(port)")
        XCTAssertTrue(first.read { $0.body.contains("event: synced") })
        routes.finishForReconnection()
        XCTAssertTrue(first.read { $0.isComplete })
        XCTAssertTrue(first.response?.body.contains(#""run":"worker-run.2""#) == true)
        XCTAssertFalse(first.response?.body.contains("event: ended") == true)

        // The server stops: no `ended` either (the tree is served on by another instance).
        let events2 = ProgressEventStream(relayingRun: "worker-run.3")
        events2.relay(Array((line + "\n").utf8))
        let served = ProgressWebRoutes(relaying: events2, token: nil) { _ in .delivered }
        let router2 = Router()
        router2.group("jobs/9").addProgressRoutes(served)
        let application2 = try await LiveApplication.start(router2)
        let second = try RawHTTPConnection(port: application2.port)
        second.send("GET", "/jobs/9/events", host: "127.0.0.1:\(application2.port)")
        XCTAssertTrue(second.read { $0.body.contains("event: synced") })
        await application2.stop()
        XCTAssertTrue(second.read { $0.isComplete })
        XCTAssertFalse(second.response?.body.contains("event: ended") == true)
        await application.stop()
    }
}
