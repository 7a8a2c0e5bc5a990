import Hummingbird
import ProgressTree
import Synchronization
import XCTest

@testable import ProgressTreeWeb

/// `ProgressStreamTickets` in an application whose own authentication refuses a request without an
/// identity, on a clock the test moves: a ticket is redeemed once for a cookie of its page's path.
final class StreamTicketsTests: XCTestCase {
    /// The application's context: the identity its authentication found, if any.
    struct UserContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        var user: String?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
        }
    }

    /// The application's authentication: no identity, no answer (`401`).
    struct RequireUser: RouterMiddleware {
        func handle(
            _ request: Request, context: UserContext, next: (Request, UserContext) async throws -> Response
        ) async throws -> Response {
            guard context.user != nil else { return Response(status: .unauthorized) }
            return try await next(request, context)
        }
    }

    final class TestClock: Sendable {
        let instant = Mutex(ContinuousClock.now)
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
    }

    private func get(_ port: Int, _ path: String, cookie: String? = nil) throws -> RawHTTPConnection.Response {
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET", path, host: "127.0.0.1:\(port)", headers: cookie.map { [("Cookie", $0)] } ?? [])
        return try connection.answer()
    }

    func test_a_ticket_is_redeemed_once_for_a_cookie_of_its_pages_path_within_its_lifetime() async throws {
        let clock = TestClock()
        let tickets = ProgressStreamTickets<String>(
            ticketLifetime: .seconds(60), sessionLifetime: .seconds(3600), isCookieSecure: false, now: { clock.now })
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let router = Router(context: UserContext.self)
        let progress = router.group("progress").add(middleware: tickets.middleware { $0.user = $1 })
            .add(middleware: RequireUser())
        progress.group("jobs/7").addProgressRoutes(for: root)
        progress.group("jobs/8").addProgressRoutes(for: root)
        let application = try await LiveApplication.start(router)
        let port = application.port

        let ticket = tickets.issue(for: "ada", path: "progress/jobs/7")
        XCTAssertNotNil(ticket.wholeMatch(of: /[0-9a-f]{32}/))
        XCTAssertEqual(try get(port, "/progress/jobs/7/").status, 401, "no ticket, no cookie: the application says no")
        XCTAssertEqual(try get(port, "/progress/jobs/8/?ticket=\(ticket)").status, 401, "a ticket of another page")
        let page = try get(port, "/progress/jobs/7/?ticket=\(ticket)")
        XCTAssertEqual(page.status, 200)
        let setCookie = try XCTUnwrap(page.headers["set-cookie"])
        let match = try XCTUnwrap(
            setCookie.wholeMatch(of: /ProgressTree-Stream=([0-9a-f]{32}); Max-Age=3600; HttpOnly; SameSite=Strict/))
        let cookie = "other=1; ProgressTree-Stream=\(match.1)"
        XCTAssertEqual(try get(port, "/progress/jobs/7/?ticket=\(ticket)").status, 401, "a ticket is good once")
        // The cookie opens the page's script, stream and token, reconnections included, for that page only.
        XCTAssertEqual(try get(port, "/progress/jobs/7/dashboard.js", cookie: cookie).status, 200)
        XCTAssertEqual(try get(port, "/progress/jobs/7", cookie: cookie).status, 302)
        XCTAssertEqual(try get(port, "/progress/jobs/7/token", cookie: cookie).status, 200)
        XCTAssertEqual(try get(port, "/progress/jobs/8/token", cookie: cookie).status, 401)
        XCTAssertEqual(try get(port, "/progress/jobs/7/token", cookie: "ProgressTree-Stream=\(ticket)").status, 401)

        // The page's path without its slash: the redirect, the ticket kept and not redeemed, no cookie (the
        // browser would scope one to "/progress/jobs/", every job's); the ticket is redeemed at the page.
        let bareTicket = tickets.issue(for: "ada", path: "/progress/jobs/7/")
        let redirect = try get(port, "/progress/jobs/7?ticket=\(bareTicket)")
        XCTAssertEqual(redirect.status, 302)
        XCTAssertEqual(redirect.headers["location"], "./7/?ticket=\(bareTicket)")
        XCTAssertNil(redirect.headers["set-cookie"])
        let redeemed = try get(port, "/progress/jobs/7/?ticket=\(bareTicket)")
        XCTAssertEqual(redeemed.status, 200)
        XCTAssertNotNil(redeemed.headers["set-cookie"]?.wholeMatch(of: /ProgressTree-Stream=[0-9a-f]{32}; .*/))
        XCTAssertEqual(try get(port, "/progress/jobs/7/?ticket=\(bareTicket)").status, 401, "redeemed once")

        // A ticket not redeemed within its lifetime is none; a cookie is good for the session's lifetime.
        let late = tickets.issue(for: "ada", path: "/progress/jobs/7/")
        clock.advance(.seconds(61))
        XCTAssertEqual(try get(port, "/progress/jobs/7/?ticket=\(late)").status, 401)
        XCTAssertEqual(try get(port, "/progress/jobs/7/token", cookie: cookie).status, 200)
        XCTAssertEqual(tickets.storedCounts.sessions, 2)
        clock.advance(.seconds(3600))
        XCTAssertEqual(try get(port, "/progress/jobs/7/token", cookie: cookie).status, 401)
        // Looking up is enough to drop what expired: no ticket was issued since.
        XCTAssertEqual(tickets.storedCounts.tickets, 0)
        XCTAssertEqual(tickets.storedCounts.sessions, 0)
        await application.stop()
    }

    func test_a_secure_ticket_cookie_says_secure_and_paths_are_matched_by_their_folders() {
        let tickets = ProgressStreamTickets<String>(isCookieSecure: true)
        XCTAssertTrue(tickets.setCookie("abc").hasSuffix("; HttpOnly; SameSite=Strict; Secure"))
        XCTAssertEqual(ProgressStreamTickets<String>.prefix("progress/jobs/7"), "/progress/jobs/7/")
        XCTAssertEqual(ProgressStreamTickets<String>.prefix("/"), "/")
        XCTAssertTrue(ProgressStreamTickets<String>.path("/progress/jobs/7", isUnder: "/progress/jobs/7/"))
        XCTAssertTrue(ProgressStreamTickets<String>.path("/progress/jobs/7/events", isUnder: "/progress/jobs/7/"))
        XCTAssertFalse(ProgressStreamTickets<String>.path("/progress/jobs/77/events", isUnder: "/progress/jobs/7/"))
        XCTAssertEqual(
            ProgressStreamTickets<String>.cookieValues(["a=1; ProgressTree-Stream=x", "ProgressTree-Stream = y"]),
            ["x", "y"])
    }
}
