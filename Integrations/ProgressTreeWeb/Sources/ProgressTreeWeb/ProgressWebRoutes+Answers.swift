import HTTPTypes
import Hummingbird
import ProgressTreeStreaming
import ServiceLifecycle
import Synchronization

extension ProgressWebRoutes {
    // The answers of the routes (`addProgressRoutes`), one function each.

    /// The fields of every answer: nothing kept by a cache (a token, a tree's state), and each body read
    /// as the type it is said to be (`nosniff`: an error's text or a stream is never run as a script).
    static let noStore: HTTPFields = {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let name = HTTPField.Name("X-Content-Type-Options") { headers[name] = "nosniff" }
        return headers
    }()

    /// What the page may load and reach: its own files, its own routes, nothing from another host; no
    /// `Referer` sent (a stream ticket in the page's address stays there).
    static let pageHeaders: HTTPFields = {
        var headers = noStore
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
        if let name = HTTPField.Name("Referrer-Policy") { headers[name] = "no-referrer" }
        return headers
    }()

    static func status(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: noStore)
    }

    /// The page, or, for a path without its trailing slash, a redirect to it: the page's URLs are relative
    /// (`events`, `dashboard.js`), so they name the routes only from the path that ends with `/`. The
    /// redirect is relative too (`./`, the last component and `/`, the query kept), so it holds under any
    /// prefix a proxy adds; the leading `./` keeps a component with a colon (`https:evil.example`, a job
    /// name a lookup accepts) from reading as another scheme, an address on another site.
    func pageAnswer(_ request: Request) -> Response {
        let path = request.uri.path
        guard path.hasSuffix("/") else {
            let last = path.split(separator: "/").last.map(String.init) ?? ""
            let query = request.uri.query.map { "?" + $0 } ?? ""
            var headers = Self.noStore
            headers[.location] = "./" + (last.isEmpty ? "" : last + "/") + query
            return Response(status: .found, headers: headers)
        }
        return file(PackageResources.index_html, type: "text/html; charset=utf-8", headers: Self.pageHeaders)
    }

    func file(_ bytes: [UInt8], type: String, headers: HTTPFields = noStore) -> Response {
        var headers = headers
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The token, to a page of an allowed origin or a program that reached a trusted `Host`. The page asks
    /// with `POST`, so that its browser sends `Origin`; a program may `GET` it.
    func tokenAnswer(_ request: Request) -> Response {
        guard let token else { return Self.status(.notFound) }
        guard checks.allows(host: request.head.authority, origin: request.headers[.origin]) else {
            return Self.status(.forbidden)
        }
        var headers = Self.noStore
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: token)))
    }

    func commandAnswer(_ request: Request) async -> Response {
        guard let token, checks.allows(host: request.head.authority, origin: request.headers[.origin]),
            let field = HTTPField.Name(Self.tokenHeader),
            RequestChecks.tokenMatches(request.headers[field], token)
        else { return Self.status(.forbidden) }
        let limit = ProgressPublisher.maximumCommandLength
        var body: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard body.count + buffer.readableBytes <= limit else { return Self.status(.contentTooLarge) }
                body.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            return Self.status(.badRequest)
        }
        if let commandSender = self.commandSender {
            switch await commandSender(body) {
            case .delivered: return Self.status(.noContent)
            case .malformed: return Self.status(.badRequest)
            case .refused(let status, let message):
                var headers = Self.noStore
                headers[.contentType] = "text/plain; charset=utf-8"
                return Response(
                    status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message)))
            }
        }
        switch events.applyCommand(body) {
        case .applied, .ignored: return Self.status(.noContent)
        case .malformed: return Self.status(.badRequest)
        case .oversized: return Self.status(.contentTooLarge)
        }
    }

    /// The event stream of one reader. It ends when the reader leaves; when the routes are finished; and
    /// when the server stops (its graceful shutdown, `swift-service-lifecycle`: a `ServiceGroup`, as
    /// `Application.runService()` makes, on SIGTERM), which does not wait for it. In the last two cases the
    /// reader's last event says so: `event: ended`, `{"v":1,"ended":"closed"}` or `"stopping"`.
    func eventsAnswer(_ request: Request) -> Response {
        var headers = Self.noStore
        headers[.contentType] = "text/event-stream"
        if let buffering = HTTPField.Name("X-Accel-Buffering") { headers[buffering] = "no" }
        let lastEventID = HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] }
        let subscription = events.subscribe(lastEventID: lastEventID)
        let routes = self
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                let end = StreamEnd()
                await withGracefulShutdownHandler {
                    // Ends the subscription (and with it the loop) as soon as the reader closes its side.
                    try? await request.body.consumeWithInboundCloseHandler { _ in
                        for await chunk in subscription {
                            try await writer.write(ByteBuffer(bytes: chunk))
                        }
                        // Before the handler below runs: it also runs when this closure returns.
                        end.set(.streamEnded)
                    } onInboundClosed: {
                        end.set(.readerLeft)
                        subscription.cancel()
                    }
                } onGracefulShutdown: {
                    end.set(.stopping)
                    subscription.cancel()
                }
                subscription.cancel()
                let reason: String? =
                    switch end.value {
                    case .readerLeft, nil: nil
                    case .stopping: routes.commandSender == nil ? Self.stoppingReason : nil
                    case .streamEnded: routes.endReason ?? Self.closedReason
                    }
                // Reconnection wanted: the connection just closes, as a lost one does.
                if let reason, reason != Self.reconnectReason {
                    try? await writer.write(
                        ByteBuffer(string: "event: ended\ndata: {\"v\":1,\"ended\":\"\(reason)\"}\n\n"))
                }
                try? await writer.finish(nil)
            })
    }

    /// Why a reader's stream ended: the first cause known wins.
    final class StreamEnd: Sendable {
        enum Cause: Sendable {
            /// The reader closed its side: nobody to tell.
            case readerLeft
            /// The server's graceful shutdown.
            case stopping
            /// The subscription ended by itself: the routes were finished.
            case streamEnded
        }

        private let cause = Mutex<Cause?>(nil)

        /// The first cause given.
        func set(_ value: Cause) {
            cause.withLock { $0 = $0 ?? value }
        }

        var value: Cause? {
            cause.withLock { $0 }
        }
    }
}
