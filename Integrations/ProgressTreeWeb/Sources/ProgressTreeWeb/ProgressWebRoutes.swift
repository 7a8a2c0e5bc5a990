import HTTPTypes
import Hummingbird
import ProgressTree
import ProgressTreeStreaming

/// The routes that serve one node's tree (`Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)"), added to
/// a Hummingbird router with `router.addProgressRoutes(for:options:)`:
///
/// | route | answer |
/// |---|---|
/// | `GET /` | the page (`text/html`), with `GET /dashboard.js` and `GET /dashboard.css` |
/// | `GET /events` | the tree as `text/event-stream` (`ProgressEventStream`), `Last-Event-ID` honoured |
/// | `GET /token` | the token (`text/plain`), to a trusted `Host` only; `404` when read-only |
/// | `POST /commands` | one command line with `ProgressTree-Token`: `204`, `400`, `403` or `413` |
///
/// Every answer has `Cache-Control: no-store`. Reading is open to whoever reaches the server; a command
/// takes the token, which only a page of the server's own origin can read, and is refused (`403`) from
/// another `Origin`, to an untrusted `Host` (an IP address, `localhost` and `Options.allowedHostNames` are
/// trusted), and on a read-only server, which has no token.
///
/// Thread safety: a value of constants and a `ProgressEventStream`; every member may be used from any
/// thread.
public struct ProgressWebRoutes: Sendable {
    /// How the routes behave.
    public struct Options: Sendable {
        /// Whether commands are refused (`403`) and `/token` is not served (`404`): the page then offers no
        /// control.
        public var isReadOnly = false
        /// The names besides IP addresses and `localhost` that a request's `Host` may carry for `/token` and
        /// `/commands` (`"build-box.local"`), compared without case; the port is not compared.
        public var allowedHostNames: [String] = []
        /// How the tree is walked and served to each reader (`ProgressEventStream.Options`). Its walks are
        /// 100 ms apart by default, not the publisher's 50: a page shows ten changes a second, and each
        /// reader costs the server one write a walk (`web-readers-bench`: 100 readers cost 4.0–6.5% of a core
        /// above one at 50 ms, 2.9–3.5% at 100 ms), while a change still reaches a reader within about
        /// 100 ms.
        public var eventStream: ProgressEventStream.Options = {
            var options = ProgressEventStream.Options()
            options.publisher.interval = .milliseconds(100)
            return options
        }()

        /// The default options: commands with the token, IP addresses and `localhost` only, walks 100 ms
        /// apart.
        public init() {}
    }

    /// The request header that carries the token.
    public static let tokenHeader = "ProgressTree-Token"

    /// The event stream the routes serve (started by `addProgressRoutes`).
    public let events: ProgressEventStream
    /// The token commands must carry: 32 hexadecimal digits, new for each set of routes; `nil` when
    /// read-only.
    public let token: String?
    let options: Options

    init(_ root: ProgressNode, options: Options) {
        self.events = ProgressEventStream(root, options: options.eventStream)
        self.token = options.isReadOnly ? nil : RequestChecks.makeToken()
        self.options = options
    }

    /// Ends every reader's event stream after the last walk (the root's final line, if it is final), so
    /// that the server can stop: a server waits for its responses to end before it stops.
    public func finish() {
        events.finish()
    }

    // MARK: Answers

    static let noStore: HTTPFields = [.cacheControl: "no-store"]

    func page(_ bytes: [UInt8], type: String) -> Response {
        var headers = Self.noStore
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    func status(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: Self.noStore)
    }

    func tokenAnswer(_ request: Request) -> Response {
        guard let token else { return status(.notFound) }
        guard RequestChecks.isTrustedHost(request.head.authority, allowedNames: options.allowedHostNames)
        else { return status(.forbidden) }
        var headers = Self.noStore
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: token)))
    }

    func commandAnswer(_ request: Request) async -> Response {
        let host = request.head.authority
        guard let token, RequestChecks.isTrustedHost(host, allowedNames: options.allowedHostNames),
            RequestChecks.isSameOrigin(request.headers[.origin], host: host),
            let field = HTTPField.Name(Self.tokenHeader),
            RequestChecks.tokenMatches(request.headers[field], token)
        else { return status(.forbidden) }
        let limit = ProgressPublisher.maximumCommandLength
        var body: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard body.count + buffer.readableBytes <= limit else { return status(.contentTooLarge) }
                body.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            return status(.badRequest)
        }
        switch events.applyCommand(body) {
        case .applied, .ignored: return status(.noContent)
        case .malformed: return status(.badRequest)
        case .oversized: return status(.contentTooLarge)
        }
    }

    func eventsAnswer(_ request: Request) -> Response {
        var headers = Self.noStore
        headers[.contentType] = "text/event-stream"
        if let buffering = HTTPField.Name("X-Accel-Buffering") { headers[buffering] = "no" }
        let lastEventID = HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] }
        let subscription = events.subscribe(lastEventID: lastEventID)
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                // Ends the subscription (and with it the loop) as soon as the reader closes its side.
                try await request.body.consumeWithInboundCloseHandler { _ in
                    for await chunk in subscription {
                        try await writer.write(ByteBuffer(bytes: chunk))
                    }
                } onInboundClosed: {
                    subscription.cancel()
                }
                subscription.cancel()
                try await writer.finish(nil)
            })
    }
}

extension Router {
    /// Adds the routes that serve `root`'s tree (`GET /`, `/events`, `/token`, `/dashboard.js`,
    /// `/dashboard.css`, `POST /commands`: see `ProgressWebRoutes`) and starts walking it. Call
    /// `finish()` on the result before the application stops, so that the event streams end.
    @discardableResult
    public func addProgressRoutes(
        for root: ProgressNode, options: ProgressWebRoutes.Options = ProgressWebRoutes.Options()
    ) -> ProgressWebRoutes {
        let routes = ProgressWebRoutes(root, options: options)
        get("/") { _, _ in routes.page(PackageResources.index_html, type: "text/html; charset=utf-8") }
        get("/dashboard.js") { _, _ in
            routes.page(PackageResources.dashboard_js, type: "text/javascript; charset=utf-8")
        }
        get("/dashboard.css") { _, _ in routes.page(PackageResources.dashboard_css, type: "text/css; charset=utf-8") }
        get("/events") { request, _ in routes.eventsAnswer(request) }
        get("/token") { request, _ in routes.tokenAnswer(request) }
        post("/commands") { request, _ in await routes.commandAnswer(request) }
        routes.events.start()
        return routes
    }
}
