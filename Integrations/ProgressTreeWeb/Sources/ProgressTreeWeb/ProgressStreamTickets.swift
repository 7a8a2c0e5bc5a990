import HTTPTypes
import Hummingbird
import Synchronization

/// Short-lived tickets that let a browser open a job's page where the application authenticates with
/// bearer tokens (`Docs/WebDashboard.md`, "Bearer tokens: a stream ticket").
///
/// A browser's `EventSource` cannot send an `Authorization` header, and neither can a link. So the
/// application's own client, which holds the bearer token, asks the application for a ticket (a route of
/// the application's, behind its bearer authentication, calls `issue(for:path:)`), then opens the page
/// with it: `/progress/jobs/7/?ticket=T`. The middleware (`middleware(authenticating:)`, in front of the
/// application's authentication on the progress routes) redeems the ticket once, within `ticketLifetime`
/// (60 s by default), for a cookie scoped to that page's path (`HttpOnly`, `SameSite=Strict`, for
/// `sessionLifetime`, 12 hours by default), which the page's script, styles, event stream and commands then
/// carry, reconnections included. A ticket is 32 random hexadecimal digits, good for one redemption and
/// for the path it was issued for only; a used or expired ticket, or a cookie of another path, is not an
/// identity, and the application's own authentication decides (a `401`, say). The page's path without its
/// trailing slash (`/progress/jobs/7?ticket=T`) lets the ticket through without redeeming it: it answers
/// only the redirect to the page, where the ticket is redeemed, so that the cookie is the page's folder's.
/// Commands still need the page's token (`ProgressWebRoutes`).
///
/// Tickets and cookies live in this object's memory: one process. Behind several instances, route a
/// job's page to the instance that issued its ticket, or keep one object per instance and issue there.
///
/// Thread safety: every member may be called from any thread.
public final class ProgressStreamTickets<Identity: Sendable>: Sendable {
    private struct Grant {
        let identity: Identity
        /// The path prefix it is good for, with its trailing slash ("/progress/jobs/7/").
        let path: String
        let expires: ContinuousClock.Instant
    }

    private struct State {
        var tickets: [String: Grant] = [:]
        var sessions: [String: Grant] = [:]
        /// When expired tickets and sessions are dropped next (`dropExpiredIfDue`).
        var nextSweep: ContinuousClock.Instant?

        /// Drops every expired ticket and session, at most once per `interval` (a walk of both tables),
        /// whether tickets are issued or only looked up: memory stays bounded by what is still good.
        mutating func dropExpiredIfDue(now: ContinuousClock.Instant, interval: Duration) {
            if let nextSweep, now < nextSweep { return }
            nextSweep = now + interval
            tickets = tickets.filter { $0.value.expires > now }
            sessions = sessions.filter { $0.value.expires > now }
        }
    }

    /// The name of the cookie a redeemed ticket sets.
    public static var cookieName: String { "ProgressTree-Stream" }

    /// How long a ticket can be redeemed after it was issued.
    public let ticketLifetime: Duration
    /// How long the cookie a redeemed ticket sets is good for.
    public let sessionLifetime: Duration
    /// Whether the cookie is marked `Secure` (sent over https only): set it when the page is served over
    /// https, as behind a TLS-terminating proxy.
    public let isCookieSecure: Bool
    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant
    /// How often expired tickets and sessions are looked for: the shorter lifetime, at most a minute.
    private var sweepInterval: Duration { min(ticketLifetime, sessionLifetime, .seconds(60)) }

    /// Tickets good for `ticketLifetime` (60 s), redeemed for a cookie good for `sessionLifetime` (12 h),
    /// marked `Secure` when `isCookieSecure`.
    public convenience init(
        ticketLifetime: Duration = .seconds(60), sessionLifetime: Duration = .seconds(12 * 3600),
        isCookieSecure: Bool = false
    ) {
        self.init(
            ticketLifetime: ticketLifetime, sessionLifetime: sessionLifetime, isCookieSecure: isCookieSecure,
            now: { .now })
    }

    /// With the clock a test moves.
    init(
        ticketLifetime: Duration, sessionLifetime: Duration, isCookieSecure: Bool,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.ticketLifetime = ticketLifetime
        self.sessionLifetime = sessionLifetime
        self.isCookieSecure = isCookieSecure
        self.now = now
    }

    /// A new ticket for `identity` to open the routes served at `path` (the group's path on the server,
    /// "/progress/jobs/7/", with or without its slashes), good for one redemption within `ticketLifetime`.
    public func issue(for identity: Identity, path: String) -> String {
        let ticket = Secret.make()
        let time = now()
        state.withLock { state in
            state.dropExpiredIfDue(now: time, interval: sweepInterval)
            state.tickets[ticket] = Grant(
                identity: identity, path: Self.prefix(path), expires: time + ticketLifetime)
        }
        return ticket
    }

    /// How many tickets and sessions are stored (good or not yet dropped), for tests.
    var storedCounts: (tickets: Int, sessions: Int) {
        state.withLock { ($0.tickets.count, $0.sessions.count) }
    }

    /// The middleware that redeems tickets and reads the cookies they set: for a request that carries a
    /// good one, it calls `authenticate` with the ticket's identity on the request's context (where the
    /// application's authentication keeps it: `context.identity = identity` with HummingbirdAuth) before
    /// the next middleware; any other request passes unchanged. Put it in front of the application's
    /// authentication on the progress routes' group.
    public func middleware<Context: RequestContext>(
        authenticating authenticate: @escaping @Sendable (inout Context, Identity) -> Void
    ) -> ProgressStreamTicketMiddleware<Context, Identity> {
        ProgressStreamTicketMiddleware(tickets: self, authenticate: authenticate)
    }

    /// What a request carries: the identity of a good cookie for its path, else of a good ticket in its
    /// query (redeemed now, the cookie to set with it, unless the path is the page's without its slash);
    /// `nil` when neither.
    func identity(for request: Request) -> (identity: Identity, cookie: String?)? {
        let path = request.uri.path
        let time = now()
        let cookies = Self.cookieValues(request.headers[values: .cookie])
        let ticket = request.uri.queryParameters.get("ticket").map { String($0) }
        return state.withLock { state -> (Identity, String?)? in
            state.dropExpiredIfDue(now: time, interval: sweepInterval)
            for value in cookies {
                guard let grant = state.sessions[value] else { continue }
                guard grant.expires > time else {
                    state.sessions[value] = nil
                    continue
                }
                if Self.path(path, isUnder: grant.path) { return (grant.identity, nil) }
            }
            guard let ticket, let grant = state.tickets[ticket] else { return nil }
            guard grant.expires > time else {
                state.tickets[ticket] = nil
                return nil
            }
            guard Self.path(path, isUnder: grant.path) else { return nil }
            // The page's path without its slash answers only the redirect to the page, which keeps the
            // query: the ticket is redeemed there. A cookie set here would be scoped by the browser to the
            // parent folder ("/progress/jobs"), shared by every job's page, and replaced by the next one.
            guard path.hasPrefix(grant.path) else { return (grant.identity, nil) }
            state.tickets[ticket] = nil
            let session = Secret.make()
            state.sessions[session] = Grant(identity: grant.identity, path: grant.path, expires: time + sessionLifetime)
            return (grant.identity, session)
        }
    }

    /// The `Set-Cookie` value for a redeemed ticket's session: no `Path`, so that the browser scopes it to
    /// the page's folder as it sees it (behind a proxy's prefix too).
    func setCookie(_ session: String) -> String {
        let seconds = max(1, Int(sessionLifetime.components.seconds))
        return "\(Self.cookieName)=\(session); Max-Age=\(seconds); HttpOnly; SameSite=Strict"
            + (isCookieSecure ? "; Secure" : "")
    }

    /// "/progress/jobs/7/" for "progress/jobs/7", "/progress/jobs/7" or "/progress/jobs/7/".
    static func prefix(_ path: String) -> String {
        let trimmed = path.split(separator: "/").joined(separator: "/")
        return trimmed.isEmpty ? "/" : "/" + trimmed + "/"
    }

    /// Whether `path` is `prefix` (with or without its trailing slash) or below it.
    static func path(_ path: String, isUnder prefix: String) -> Bool {
        path.hasPrefix(prefix) || path + "/" == prefix
    }

    /// The values of this type's cookie among `fields` (`Cookie: a=1; ProgressTree-Stream=…`), in order: a
    /// browser sends one for each path it holds one for.
    static func cookieValues(_ fields: [String]) -> [String] {
        var values: [String] = []
        for field in fields {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingSpaces == cookieName else { continue }
                values.append(String(parts[1].trimmingSpaces))
            }
        }
        return values
    }
}

/// Redeems stream tickets and reads the cookies they set (`ProgressStreamTickets.middleware(authenticating:)`).
///
/// Thread safety: a value of constants; may be used from any thread.
public struct ProgressStreamTicketMiddleware<Context: RequestContext, Identity: Sendable>: RouterMiddleware {
    let tickets: ProgressStreamTickets<Identity>
    let authenticate: @Sendable (inout Context, Identity) -> Void

    /// Authenticates a request that carries a good ticket or cookie, sets the cookie when it redeemed a
    /// ticket, and passes every request on.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let (identity, session) = tickets.identity(for: request) else { return try await next(request, context) }
        var context = context
        authenticate(&context, identity)
        var response = try await next(request, context)
        if let session { response.headers.append(HTTPField(name: .setCookie, value: tickets.setCookie(session))) }
        return response
    }
}

extension Substring {
    /// The text without spaces at either end.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
