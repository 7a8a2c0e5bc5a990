import HTTPTypes
import Hummingbird
import ProgressTree
import ProgressTreeStreaming
import XCTest

@testable import ProgressTreeWeb

/// The routes mounted in an application of the test's own (`LiveApplication`, real sockets): under a
/// group's path, one tree per job, behind the application's middleware, beside its own routes; and its
/// graceful stop with readers connected.
final class MountedRoutesTests: XCTestCase {
    /// The application's own authentication, as simple as can be: a request without `X-User: ada` is
    /// refused (`401`) before any route of the group answers it.
    struct RequireUser<Context: RequestContext>: RouterMiddleware {
        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            guard let name = HTTPField.Name("X-User"), request.headers[name] == "ada" else {
                return Response(status: .unauthorized)
            }
            return try await next(request, context)
        }
    }

    private func job(_ name: String, photos: Int) -> (ProgressNode, [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(photos))
        root.localizedDescription = name
        let children = (0..<photos).map { index in
            let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
            child.localizedDescription = "IMG_\(index).jpg"
            return child
        }
        return (root, children)
    }

    private func get(
        _ port: Int, _ path: String, headers: [(String, String)] = [("X-User", "ada")]
    ) throws -> RawHTTPConnection.Response {
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET", path, host: "127.0.0.1:\(port)", headers: headers)
        return try connection.answer()
    }

    /// Opens `path` (an event stream) and reads until `count` events came.
    private func events(_ port: Int, _ path: String, count: Int) throws -> (RawHTTPConnection, [ServerSentEvent]) {
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET", path, host: "127.0.0.1:\(port)", headers: [("X-User", "ada")])
        connection.read { ServerSentEvent.parse($0.body).count >= count }
        return (connection, ServerSentEvent.parse(try XCTUnwrap(connection.response).body))
    }

    func test_one_tree_per_job_under_a_group_behind_the_applications_middleware_beside_its_own_routes()
        async throws
    {
        let (seven, sevenPhotos) = job("Job 7", photos: 2)
        let (eight, _) = job("Job 8", photos: 3)
        var options = ProgressWebRoutes.Options()
        options.eventStream.publisher.publishesOnTimer = false
        let jobs = [7: ProgressWebRoutes(seven, options: options), 8: ProgressWebRoutes(eight, options: options)]
        let router = Router()
        router.get("/") { _, _ in "the application's home" }
        router.get("api/jobs") { _, _ in "7 8" }
        router.group("progress/jobs/{id}").add(middleware: RequireUser()).addProgressRoutes { _, context in
            context.parameters.get("id", as: Int.self).flatMap { jobs[$0] }
        }
        // A lookup that takes any name: what a request puts in the path comes back in the redirect.
        router.group("progress/named/{name}").addProgressRoutes { _, _ in jobs[7] }
        let application = try await LiveApplication.start(router)
        let port = application.port

        // The application's own routes are its own: nothing was added at its `/`.
        XCTAssertEqual(try get(port, "/").body, "the application's home")
        XCTAssertEqual(try get(port, "/api/jobs").body, "7 8")
        // The page, with and without its trailing slash (a relative redirect, its query kept).
        let page = try get(port, "/progress/jobs/7/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertTrue(page.body.contains(#"<script src="dashboard.js" defer></script>"#))
        XCTAssertEqual(page.headers["referrer-policy"], "no-referrer")
        let bare = try get(port, "/progress/jobs/7")
        XCTAssertEqual(bare.status, 302)
        XCTAssertEqual(bare.headers["location"], "./7/")
        XCTAssertEqual(try get(port, "/progress/jobs/7?ticket=abc").headers["location"], "./7/?ticket=abc")
        // A name with a colon stays a path: "https:evil.example/" alone is read as https://evil.example/.
        XCTAssertEqual(
            try get(port, "/progress/named/https:evil.example").headers["location"], "./https:evil.example/")
        XCTAssertEqual(
            try get(port, "/progress/jobs/8/dashboard.js").headers["content-type"], "text/javascript; charset=utf-8")
        // The application's middleware is in front of every progress route; an unknown job is 404.
        XCTAssertEqual(try get(port, "/progress/jobs/7/", headers: []).status, 401)
        XCTAssertEqual(try get(port, "/progress/jobs/7/events", headers: []).status, 401)
        XCTAssertEqual(try get(port, "/progress/jobs/9/").status, 404)
        XCTAssertEqual(try get(port, "/progress/jobs/9/events").status, 404)
        XCTAssertEqual(try get(port, "/progress/jobs/9/").headers["x-content-type-options"], "nosniff")

        // Each job's stream is its own tree and its own run.
        let (_, sevenEvents) = try events(port, "/progress/jobs/7/events", count: 6)
        let (_, eightEvents) = try events(port, "/progress/jobs/8/events", count: 7)
        func names(_ events: [ServerSentEvent]) -> [String] {
            events.compactMap { $0.data.first.flatMap { try? ProgressWireRecord(line: Array($0.utf8)) }?.label }
        }
        XCTAssertEqual(names(sevenEvents), ["Job 7", "IMG_0.jpg", "IMG_1.jpg"])
        XCTAssertEqual(names(eightEvents), ["Job 8", "IMG_0.jpg", "IMG_1.jpg", "IMG_2.jpg"])
        XCTAssertEqual(ServerSentEvent.run(in: sevenEvents), jobs[7]?.runID)
        XCTAssertEqual(ServerSentEvent.run(in: eightEvents), jobs[8]?.runID)
        XCTAssertNotEqual(jobs[7]?.runID, jobs[8]?.runID)

        // A command to job 7's routes acts on job 7's tree, with job 7's token.
        let token = try XCTUnwrap(jobs[7]?.token)
        let command = try RawHTTPConnection(port: port)
        command.send(
            "POST", "/progress/jobs/7/commands", host: "127.0.0.1:\(port)",
            headers: [("X-User", "ada"), ("ProgressTree-Token", token), ("Origin", "http://127.0.0.1:\(port)")],
            body: Array(#"{"v":1,"command":"cancel","id":2}"#.utf8))
        XCTAssertEqual(try command.answer().status, 204)
        XCTAssertTrue(sevenPhotos[0].isCancelled)
        XCTAssertFalse(eight.children.contains { $0.isCancelled })
        let wrongJob = try RawHTTPConnection(port: port)
        wrongJob.send(
            "POST", "/progress/jobs/8/commands", host: "127.0.0.1:\(port)",
            headers: [("X-User", "ada"), ("ProgressTree-Token", token)],
            body: Array(#"{"v":1,"command":"cancel","id":2}"#.utf8))
        XCTAssertEqual(try wrongJob.answer().status, 403, "job 7's token does not command job 8")

        await application.stop()
        for routes in jobs.values { routes.finish() }
    }

    func test_the_applications_graceful_stop_ends_every_readers_stream_with_ended_within_2_seconds() async throws {
        let (root, _) = job("Job", photos: 2)
        let router = Router()
        router.group("progress").addProgressRoutes(for: root)
        let application = try await LiveApplication.start(router)
        var readers = try (0..<3).map { _ in try events(application.port, "/progress/events", count: 5).0 }
        let started = ContinuousClock.now
        let stopping = Task { await application.stop() }
        while !application.hasStopped && started.duration(to: .now) < .seconds(3) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let took = started.duration(to: .now)
        XCTAssertLessThan(took, .seconds(2), "the application stopped in \(took)")
        if !application.hasStopped {
            readers = []  // closes their connections: the application can stop
            await stopping.value
            return
        }
        for reader in readers {
            XCTAssertTrue(reader.read(seconds: 2) { $0.isComplete })
            XCTAssertEqual(
                ServerSentEvent.parse(try XCTUnwrap(reader.response).body).last?.summary(base: 0), "ended stopping")
        }
    }

    func test_finish_ends_the_readers_streams_with_ended_closed_and_a_reader_after_it_gets_the_state_then_ended()
        async throws
    {
        let (root, children) = job("Job", photos: 1)
        let router = Router()
        let routes = router.group("progress").addProgressRoutes(for: root)
        let application = try await LiveApplication.start(router)
        let (reader, _) = try events(application.port, "/progress/events", count: 5)
        children[0].completedUnitCount = 4
        routes.finish()
        XCTAssertTrue(reader.read(seconds: 5) { $0.isComplete })
        let summaries = ServerSentEvent.parse(try XCTUnwrap(reader.response).body).map { $0.summary(base: 0) }
        XCTAssertEqual(summaries.last, "ended closed")
        XCTAssertTrue(summaries.contains { $0.hasSuffix(": 1 - finished Job") }, "\(summaries)")
        let (late, _) = try events(application.port, "/progress/events", count: 5)
        XCTAssertTrue(late.read(seconds: 5) { $0.isComplete })
        let lateEvents = ServerSentEvent.parse(try XCTUnwrap(late.response).body)
        XCTAssertEqual(lateEvents.map(\.event), [nil, "run", nil, "synced", "ended"])
        XCTAssertTrue(lateEvents[2].summary(base: 0).hasSuffix(": 1 - finished Job"), lateEvents[2].summary(base: 0))
        await application.stop()
    }
}
