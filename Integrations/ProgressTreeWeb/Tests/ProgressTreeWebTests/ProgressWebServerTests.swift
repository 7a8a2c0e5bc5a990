import ProgressTree
import ProgressTreeStreaming
import XCTest

@testable import ProgressTreeWeb

/// A real server on 127.0.0.1, read and commanded over raw sockets, its walks made by the test
/// (`publishesOnTimer = false`: each `publishChanges()` is one walk).
final class ProgressWebServerTests: XCTestCase {
    private struct Failure: Error {}

    private func startServer(
        _ root: ProgressNode, readOnly: Bool = false, allowedHostNames: [String] = []
    ) async throws -> ProgressWebServer {
        var options = ProgressWebRoutes.Options()
        options.isReadOnly = readOnly
        options.allowedHostNames = allowedHostNames
        options.eventStream.publisher.publishesOnTimer = false
        let server = ProgressWebServer(root, options: options)
        try await server.start()
        return server
    }

    private func album(_ photos: [String]) -> (ProgressNode, [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(photos.count))
        root.localizedDescription = "Album"
        let children = photos.map { name in
            let child = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
            child.localizedDescription = name
            return child
        }
        return (root, children)
    }

    /// Opens `/events` and reads until `count` events (comments and `retry` included) came.
    private func openEvents(
        _ server: ProgressWebServer, lastEventID: String? = nil, count: Int
    ) throws -> (RawHTTPConnection, [ServerSentEvent]) {
        let connection = try RawHTTPConnection(port: try XCTUnwrap(server.port))
        connection.send("GET", "/events", headers: lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
        return (connection, try more(connection, total: count))
    }

    /// Reads on until the body holds `total` events; all of them.
    private func more(_ connection: RawHTTPConnection, total: Int) throws -> [ServerSentEvent] {
        connection.read { ServerSentEvent.parse($0.body).count >= total }
        let events = ServerSentEvent.parse(try XCTUnwrap(connection.response).body)
        XCTAssertEqual(events.count, total, connection.response?.body ?? "")
        return events
    }

    private func base(_ events: [ServerSentEvent]) throws -> UInt64 {
        try XCTUnwrap(events.first { $0.id != nil }?.id.flatMap { UInt64($0) })
    }

    func test_events_are_served_as_text_event_stream_one_wire_line_each_then_each_walk() async throws {
        let (root, children) = album(["a.jpg", "b.jpg"])
        let server = try await startServer(root)
        let (connection, events) = try openEvents(server, count: 6)
        let response = try XCTUnwrap(connection.response)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["content-type"], "text/event-stream")
        XCTAssertEqual(response.headers["cache-control"], "no-store")
        XCTAssertEqual(response.headers["x-accel-buffering"], "no")
        XCTAssertEqual(response.headers["x-content-type-options"], "nosniff")
        let walk = try base(events)
        XCTAssertEqual(
            events.map { $0.summary(base: walk) },
            [
                "retry 1000", "run", "+0: 1 - running Album", "+0: 2 1 running a.jpg", "+0: 3 1 running b.jpg",
                "synced +0",
            ])
        XCTAssertEqual(ServerSentEvent.run(in: events), server.routes.runID)
        children[0].completedUnitCount = 4
        children[1].fail(Failure())
        server.routes.events.publishChanges()
        let later = try more(connection, total: 9)
        XCTAssertEqual(
            later.dropFirst(6).map { $0.summary(base: walk) },
            ["+1: 1 - running Album", "+1: 2 1 finished a.jpg", "+1: 3 1 failed b.jpg (Failure())"])
        await server.stop()
    }

    func test_a_late_joiner_and_a_reader_reconnecting_get_the_tree_then_synced() async throws {
        let (root, children) = album(["a.jpg", "b.jpg", "c.jpg"])
        let server = try await startServer(root)
        children[0].completedUnitCount = 4  // finished and left: not named to a reader joining later
        children[1].fail(Failure())
        server.routes.events.publishChanges()  // +1
        children[2].completedUnitCount = 1
        server.routes.events.publishChanges()  // +2
        let (connection, events) = try openEvents(server, count: 6)
        let walk = try base(events) - 2
        XCTAssertEqual(
            events.map { $0.summary(base: walk) },
            [
                "retry 1000", "run", "+2: 1 - running Album", "+2: 3 1 failed b.jpg (Failure())",
                "+2: 4 1 running c.jpg",
                "synced +2",
            ])
        children[2].completedUnitCount = 2
        server.routes.events.publishChanges()  // +3, read live
        XCTAssertEqual(
            try more(connection, total: 8).dropFirst(6).map { $0.summary(base: walk) },
            ["+3: 1 - running Album", "+3: 4 1 running c.jpg"])
        children[2].completedUnitCount = 3
        server.routes.events.publishChanges()  // +4, while the reader is away
        // Reconnecting having seen +3: b's failure (+1) is known, the live nodes are all sent.
        let (_, again) = try openEvents(server, lastEventID: String(walk + 3), count: 5)
        XCTAssertEqual(
            again.map { $0.summary(base: walk) },
            ["retry 1000", "run", "+4: 1 - running Album", "+4: 4 1 running c.jpg", "synced +4"])
        await server.stop()
    }

    func test_after_the_end_a_reader_gets_the_final_state_and_the_stream_stays_open() async throws {
        let (root, children) = album(["a.jpg"])
        let server = try await startServer(root)
        children[0].fail(Failure())
        root.cancel()
        server.routes.events.publishChanges()
        let (connection, events) = try openEvents(server, count: 5)
        let walk = try base(events) - 1
        XCTAssertEqual(
            events.map { $0.summary(base: walk) },
            ["retry 1000", "run", "+1: 2 1 failed a.jpg (Failure())", "+1: 1 - cancelled Album", "synced +1"])
        XCTAssertFalse(try XCTUnwrap(connection.response).isComplete)
        await server.stop()
        XCTAssertTrue(connection.read(seconds: 5) { $0.isComplete }, "stop() ends the stream")
        let last = ServerSentEvent.parse(try XCTUnwrap(connection.response).body).last
        XCTAssertEqual(last?.summary(base: walk), "ended stopping", "the reader is told the server stops")
    }

    func test_commands_take_the_token_from_this_origin_and_host_and_are_answered_by_status() async throws {
        let (root, children) = album(["a.jpg", "b.jpg"])
        children[0].isPausable = true
        let server = try await startServer(root, allowedHostNames: ["dash.example"])
        let port = try XCTUnwrap(server.port)
        func call(
            _ method: String, _ path: String, host: String = "127.0.0.1", headers: [(String, String)] = [],
            body: String = ""
        ) throws -> RawHTTPConnection.Response {
            let connection = try RawHTTPConnection(port: port)
            connection.send(method, path, host: host, headers: headers, body: Array(body.utf8))
            return try connection.answer()
        }
        let tokenAnswer = try call("GET", "/token", host: "127.0.0.1:\(port)")
        XCTAssertEqual(tokenAnswer.status, 200)
        XCTAssertEqual(tokenAnswer.headers["content-type"], "text/plain; charset=utf-8")
        XCTAssertEqual(tokenAnswer.headers["cache-control"], "no-store")
        XCTAssertEqual(tokenAnswer.body, server.token)
        let token = tokenAnswer.body
        XCTAssertEqual(token.count, 32)
        XCTAssertTrue(token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        XCTAssertEqual(try call("GET", "/token", host: "localhost:\(port)").status, 200)
        XCTAssertEqual(try call("GET", "/token", host: "DASH.example").status, 200)
        XCTAssertEqual(try call("GET", "/token", host: "[::1]:\(port)").status, 200)
        XCTAssertEqual(try call("GET", "/token", host: "evil.example:\(port)").status, 403)
        // The page asks with POST, so that its browser says its origin.
        let ownOrigin = [("Origin", "http://127.0.0.1:\(port)")]
        XCTAssertEqual(try call("POST", "/token", host: "127.0.0.1:\(port)", headers: ownOrigin).body, token)
        XCTAssertEqual(
            try call("POST", "/token", host: "127.0.0.1:\(port)", headers: [("Origin", "http://evil.example")]).status,
            403)
        XCTAssertEqual(
            try call("GET", "/token", host: "127.0.0.1:\(port)", headers: [("Origin", "http://evil.example")]).status,
            403)

        let pause = #"{"v":1,"command":"pause","id":2}"#
        let withToken = [("ProgressTree-Token", token)]
        XCTAssertEqual(try call("POST", "/commands", body: pause).status, 403)
        // A token one digit off (never the token itself: one token in 16 starts with "0").
        let wrongToken = (token.first == "0" ? "1" : "0") + token.dropFirst()
        XCTAssertEqual(
            try call("POST", "/commands", headers: [("ProgressTree-Token", wrongToken)], body: pause).status, 403)
        XCTAssertEqual(
            try call("POST", "/commands", headers: withToken + [("Origin", "http://evil.example")], body: pause).status,
            403)
        XCTAssertEqual(
            try call("POST", "/commands", headers: withToken + [("Origin", "null")], body: pause).status, 403)
        XCTAssertEqual(try call("POST", "/commands", host: "evil.example", headers: withToken, body: pause).status, 403)
        XCTAssertFalse(children[0].isPaused)
        XCTAssertEqual(
            try call(
                "POST", "/commands", host: "127.0.0.1:\(port)",
                headers: withToken + [("Origin", "http://127.0.0.1:\(port)")], body: pause
            ).status, 204)
        XCTAssertTrue(children[0].isPaused)
        XCTAssertEqual(try call("POST", "/commands", headers: withToken, body: "cancel b.jpg").status, 400)
        XCTAssertEqual(
            try call("POST", "/commands", headers: withToken, body: #"{"v":1,"command":"rewind","id":2}"#).status, 204)
        let oversized = #"{"v":1,"command":"cancel","id":3,"pad":""# + String(repeating: "x", count: 5000) + "\"}"
        XCTAssertEqual(try call("POST", "/commands", headers: withToken, body: oversized).status, 413)
        XCTAssertFalse(children[1].isCancelled)
        XCTAssertEqual(
            try call("POST", "/commands", headers: withToken, body: #"{"v":1,"command":"cancel","id":3}"#).status, 204)
        XCTAssertTrue(children[1].isCancelled)
        await server.stop()
    }

    func test_a_read_only_server_has_no_token_and_refuses_every_command() async throws {
        let (root, children) = album(["a.jpg"])
        let server = try await startServer(root, readOnly: true)
        XCTAssertNil(server.token)
        let port = try XCTUnwrap(server.port)
        let token = try RawHTTPConnection(port: port)
        token.send("GET", "/token")
        XCTAssertEqual(try token.answer().status, 404)
        let command = try RawHTTPConnection(port: port)
        command.send(
            "POST", "/commands", headers: [("ProgressTree-Token", String(repeating: "0", count: 32))],
            body: Array(#"{"v":1,"command":"cancel","id":2}"#.utf8))
        XCTAssertEqual(try command.answer().status, 403)
        XCTAssertFalse(children[0].isCancelled)
        await server.stop()
    }

    func test_the_page_and_its_files_are_served_with_their_types_and_no_store() async throws {
        let (root, _) = album(["a.jpg"])
        let server = try await startServer(root)
        XCTAssertEqual(server.url, "http://127.0.0.1:\(try XCTUnwrap(server.port))/")
        for (path, type, bytes) in [
            ("/", "text/html; charset=utf-8", PackageResources.index_html),
            ("/dashboard.js", "text/javascript; charset=utf-8", PackageResources.dashboard_js),
            ("/dashboard.css", "text/css; charset=utf-8", PackageResources.dashboard_css),
        ] {
            let connection = try RawHTTPConnection(port: try XCTUnwrap(server.port))
            connection.send("GET", path)
            let answer = try connection.answer()
            XCTAssertEqual(answer.status, 200, path)
            XCTAssertEqual(answer.headers["content-type"], type, path)
            XCTAssertEqual(answer.headers["cache-control"], "no-store", path)
            XCTAssertEqual(answer.headers["x-content-type-options"], "nosniff", path)
            XCTAssertEqual(answer.body, String(decoding: bytes, as: UTF8.self), path)
        }
        // The page alone runs a script: it says what it may load and sends no Referer.
        let page = try RawHTTPConnection(port: try XCTUnwrap(server.port))
        page.send("GET", "/")
        let pageAnswer = try page.answer()
        XCTAssertEqual(pageAnswer.headers["referrer-policy"], "no-referrer")
        XCTAssertEqual(
            pageAnswer.headers["content-security-policy"],
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
        // Every other answer is nosniff too: the token, a refused command, a redirect.
        for (method, path, status) in [("GET", "/token", 200), ("POST", "/commands", 403)] {
            let connection = try RawHTTPConnection(port: try XCTUnwrap(server.port))
            connection.send(method, path)
            let answer = try connection.answer()
            XCTAssertEqual(answer.status, status, path)
            XCTAssertEqual(answer.headers["cache-control"], "no-store", path)
            XCTAssertEqual(answer.headers["x-content-type-options"], "nosniff", path)
        }
        XCTAssertFalse(try XCTUnwrap(PackageResources.index_html).isEmpty)
        await server.stop()
    }

    func test_host_and_origin_checks() {
        let checks = RequestChecks(allowedHostNames: [], allowedOrigins: [])
        for host in [
            "127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:80", "[fe80::1]", "10.0.0.7", "[::1]",
            "[::]", "[2001:DB8::1]:8443", "[1:2:3:4:5:6:7:8]", "[::ffff:127.0.0.1]:80", "[1:2:3:4:5:6:1.2.3.4]",
            "127.0.0.1:65535",
        ] {
            XCTAssertTrue(checks.isTrustedHost(host), host)
        }
        for host in [
            nil, "", "evil.example", "127.0.0.1.evil.example", "1.2.3", "256.1.1.1", "a@127.0.0.1", "[::1",
            // Brackets around what is not an IPv6 address.
            "[evil]", "[evil]:80", "[127.0.0.1]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[:::1]", "[::1%eth0]",
            "[12345::1]", "[::1]x", "[::1]:", "[]",
            // Ports of other than 1 to 5 ASCII digits up to 65535, and spaces.
            "127.0.0.1:\u{0668}\u{0660}", "127.0.0.1:\u{FF18}\u{FF10}", "[::1]:\u{0668}\u{0660}", "127.0.0.1:",
            "127.0.0.1:99999", "127.0.0.1:123456", "127.0.0.1:+80", " 127.0.0.1", "127.0.0.1 ", "local host",
            "\u{0661}27.0.0.1",
        ] {
            XCTAssertFalse(checks.isTrustedHost(host), host ?? "nil")
        }
        XCTAssertTrue(
            RequestChecks(allowedHostNames: ["dash.example"], allowedOrigins: []).isTrustedHost("Dash.Example:99"))
        // A program (no Origin) at a trusted Host; a page of the server's own origin, http or https (a
        // TLS-terminating proxy that passes Host on).
        XCTAssertTrue(checks.allows(host: "127.0.0.1:1", origin: nil))
        XCTAssertTrue(checks.allows(host: "127.0.0.1:1", origin: "http://127.0.0.1:1"))
        XCTAssertTrue(checks.allows(host: "127.0.0.1:8443", origin: "https://127.0.0.1:8443"))
        XCTAssertTrue(checks.allows(host: "localhost:443", origin: "https://localhost"))
        // Another origin, an opaque one, or another site's page rebound to this machine (its own Host).
        XCTAssertFalse(checks.allows(host: "127.0.0.1:1", origin: "http://127.0.0.1:2"))
        XCTAssertFalse(checks.allows(host: "127.0.0.1:1", origin: "null"))
        XCTAssertFalse(checks.allows(host: "evil.example:8080", origin: "http://evil.example:8080"))
        XCTAssertFalse(checks.allows(host: "evil.example:8080", origin: nil))
        // Behind a proxy that rewrites Host (nginx's default: the upstream's name or address): the page's
        // public origin is allowed by name, whatever Host says; other origins still are not.
        let proxied = RequestChecks(
            allowedHostNames: ["backend"],
            allowedOrigins: ["https://Progress.Example.com:443/", "http://10.0.0.5:8080"])
        XCTAssertEqual(proxied.allowedOrigins, ["https://progress.example.com", "http://10.0.0.5:8080"])
        XCTAssertTrue(proxied.allows(host: "backend", origin: "https://progress.example.com"))
        XCTAssertTrue(proxied.allows(host: "127.0.0.1:8081", origin: "http://10.0.0.5:8080"))
        XCTAssertTrue(proxied.allows(host: "backend", origin: nil))
        XCTAssertFalse(proxied.allows(host: "backend", origin: "https://evil.example"))
        XCTAssertFalse(proxied.allows(host: "backend", origin: "http://progress.example.com"))  // not https
        XCTAssertFalse(proxied.allows(host: "evil.example", origin: "http://evil.example"))
        for origin in [
            "*", "https://*.example.com", "progress.example.com", "https://a.example/path", "ftp://a.example",
            " https://a.example", "https:// a.example", "https://a.example ", "https://a.example\t",
            "https://a.example:\u{FF18}\u{FF10}", "https://a.example:99999", "https://a.example:", "https://[evil]",
            "https://[evil]:443", "https://user@a.example", "https://a.example?x=1", "https://a.example#x",
            "https://b\u{FC}cher.example", "https://", "http://:80", "https://a.example//", "null",
        ] {
            XCTAssertNil(ProgressWebRoutes.Options.normalizedOrigin(origin), origin)
        }
        for (origin, normalized) in [
            ("HTTP://[::1]:80", "http://[::1]"), ("https://Progress.Example.com:443/", "https://progress.example.com"),
            ("http://127.0.0.1:080", "http://127.0.0.1"), ("https://[2001:DB8::1]:8443", "https://[2001:db8::1]:8443"),
            ("http://a.example:443", "http://a.example:443"),
            ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
        ] {
            XCTAssertEqual(ProgressWebRoutes.Options.normalizedOrigin(origin), normalized, origin)
        }
    }
}
