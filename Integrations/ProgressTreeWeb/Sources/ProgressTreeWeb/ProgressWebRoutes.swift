import HTTPTypes
import Hummingbird
import ProgressTree
import ProgressTreeStreaming
import Synchronization

/// One node's tree, served (`Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)"; `Docs/WebDashboard.md`):
/// its event stream, its run, its command token, and the answers of the routes a router serves it at
/// (`addProgressRoutes`, on a `Router` or a `RouterGroup`, at any path):
///
/// | route | answer |
/// |---|---|
/// | `GET` the group's path, with or without `/` | the page (`text/html`); without the trailing slash, `302` to it |
/// | `GET dashboard.js`, `GET dashboard.css` | the page's script and styles |
/// | `GET events` | the tree as `text/event-stream` (`ProgressEventStream`), its run named first |
/// | `GET` or `POST token` | the token (`text/plain`), to a trusted page or program; `404` when read-only |
/// | `POST commands` | one command line with `ProgressTree-Token`: `204`, `400`, `403` or `413` |
///
/// Every answer has `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`; the page also has a
/// `Content-Security-Policy` (nothing from another host) and `Referrer-Policy: no-referrer`. Reading is open
/// to whoever the application lets reach the routes (its own middleware in front: its login, its sessions);
/// a command takes the token, which only a page of the server's own origin, or of an allowed origin
/// (`Options.allowedOrigins`, behind a proxy), can read, and is refused (`403`) from any other origin, to an
/// untrusted `Host` (DNS rebinding), and on a read-only tree, which has no token.
///
/// Each value is one run: its walks start when it is made and stop at `finish()`; a tree served anew (a
/// new value, a restarted process) is a new run with a new `runID`, and a page that reconnects to it
/// starts again from its state.
///
/// Thread safety: a value of constants and a `ProgressEventStream`; every member may be used from any
/// thread.
public struct ProgressWebRoutes: Sendable {
    /// How the routes behave.
    public struct Options: Sendable {
        /// Whether commands are refused (`403`) and `token` is not served (`404`): the page then offers no
        /// control.
        public var isReadOnly = false
        /// The names besides IP addresses and `localhost` that a request's `Host` may carry for `token` and
        /// `commands` (`"build-box.local"`, or the upstream name a proxy sends, `"backend"`), compared
        /// without case; the port is not compared.
        public var allowedHostNames: [String] = []
        /// The origins, besides the server's own, whose pages may read the token and send commands: the
        /// page's address as the browser shows it behind a reverse proxy that rewrites `Host`
        /// (`"https://progress.example.com"`, `"http://10.0.0.5:8080"`: scheme, host and port, a default
        /// port may be left out), compared without case. The server's own origin needs no entry: `http://`
        /// or `https://` and the request's `Host`, when that `Host` is trusted. There is no wildcard: an
        /// entry that is not an origin stops the program with a message naming it: check an entry that comes
        /// from outside the program with `normalizedOrigin(_:)` first.
        public var allowedOrigins: [String] = []
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

        /// The default options: commands with the token, from the server's own origin, to IP addresses and
        /// `localhost`; walks 100 ms apart.
        public init() {}

        /// `origin` as `allowedOrigins` keeps it, and as a request's `Origin` is compared with it:
        /// `scheme://host[:port]` lowercased, without the scheme's default port (80, 443) and without a
        /// trailing `/` (`"https://Progress.Example.com:443/"` is `"https://progress.example.com"`); `nil`
        /// when it is not such an origin: another scheme than `http` or `https`, a wildcard, a path, a query,
        /// a user, a space, a name that is not ASCII (write it in punycode, as the browser sends it), a
        /// bracketed host that is not an IPv6 address, or a port that is not 1 to 5 ASCII digits up to 65535.
        ///
        /// Every entry of `allowedOrigins` must be an origin (a programming error stops the program
        /// otherwise): check one that comes from outside the program (a command-line argument, a
        /// configuration file) here first, and answer a `nil` with a message of your own.
        ///
        /// ```swift
        /// guard ProgressWebRoutes.Options.normalizedOrigin(argument) != nil else {
        ///     throw UsageError("--allowed-origin \(argument): write scheme://host[:port]")  // yours
        /// }
        /// options.allowedOrigins.append(argument)
        /// ```
        public static func normalizedOrigin(_ origin: String) -> String? {
            RequestChecks.normalizedOrigin(origin)
        }
    }

    /// The request header that carries the token.
    public static let tokenHeader = "ProgressTree-Token"

    /// The event stream the routes serve.
    public let events: ProgressEventStream
    /// The token commands must carry: 32 hexadecimal digits, new for each value; `nil` when read-only.
    public let token: String?
    let checks: RequestChecks
    private let ending: EndingBox
    /// Where commands go once checked: `nil` applies them to `events`' tree. A relay's routes also tell
    /// their readers nothing when the server stops: the tree lives on elsewhere, and a reader that
    /// reconnects (through a load balancer, to another instance) finds it there.
    let commandSender: CommandSender?

    /// Sends a checked command line (token, origin and length checked; the line as the page sent it, at
    /// most 4 KiB, not yet parsed) to the tree it names, wherever that tree is (`init(relaying:token:options:sendCommand:)`).
    public typealias CommandSender = @Sendable (_ line: [UInt8]) async -> CommandDelivery

    /// What became of a command a `CommandSender` was given, as `POST commands` answers it.
    public enum CommandDelivery: Sendable, Equatable {
        /// Handed on to the tree (or ignored, as an unknown command is): `204 No Content`.
        case delivered
        /// Not a command line of the wire format: `400 Bad Request`.
        case malformed
        /// Refused, with the status and a sentence for the person who sent it (`text/plain`): `404` for a
        /// job nobody knows, `409` for one that ended or that no process runs, `503` when the store cannot
        /// be reached.
        case refused(HTTPResponse.Status, String)
    }

    /// Why streams end, for the event that tells readers so (`nil` while the tree is served).
    final class EndingBox: Sendable {
        let reason = Mutex<String?>(nil)
    }

    /// Serves `root`'s tree: its walks start now (`Options.eventStream`), one walk for every reader of every
    /// router that serves these routes. Call `finish()` when it is no longer served (the job is gone, or
    /// the application stops), so that the walks stop and the readers' streams end.
    ///
    /// - Precondition: every entry of `options.allowedOrigins` is an origin (see there).
    public init(_ root: ProgressNode, options: Options = Options()) {
        self.events = ProgressEventStream(root, options: options.eventStream)
        self.token = options.isReadOnly ? nil : Secret.make()
        self.checks = RequestChecks(allowedHostNames: options.allowedHostNames, allowedOrigins: options.allowedOrigins)
        self.ending = EndingBox()
        self.commandSender = nil
        events.start()
    }

    /// Serves a tree walked elsewhere: `events` relays its lines (`ProgressEventStream.init(relayingRun:options:)`),
    /// `token` is the one commands must carry (the same on every instance that serves the tree, so that a
    /// page may read it from one and send commands to another; `nil`: read-only), and each checked command
    /// goes to `sendCommand`, whose answer the route gives. `options.eventStream` is not used: `events` is
    /// made already. Starts `events`' keep-alives. When the server stops, its readers' streams close
    /// without an `ended` event: the tree is served on elsewhere, and pages reconnect (to another instance
    /// behind a load balancer) rather than stop.
    ///
    /// - Precondition: every entry of `options.allowedOrigins` is an origin (see there).
    public init(
        relaying events: ProgressEventStream, token: String?, options: Options = Options(),
        sendCommand: @escaping CommandSender
    ) {
        self.events = events
        self.token = token
        self.checks = RequestChecks(allowedHostNames: options.allowedHostNames, allowedOrigins: options.allowedOrigins)
        self.ending = EndingBox()
        self.commandSender = sendCommand
        events.start()
    }

    /// The run these routes serve (`ProgressEventStream.runID`): 32 hexadecimal digits, new for each value.
    public var runID: String { events.runID }

    /// Stops walking and ends every reader's event stream after the last walk (the root's final line, if
    /// it is final) with an `ended` event (`"closed"`), so that a server can stop: a server waits for its
    /// responses to end before it stops. A reader that comes later gets the final state, then `ended`.
    public func finish() {
        finish(reason: Self.closedReason)
    }

    /// Ends every reader's event stream as a lost connection would, without an `ended` event, so that each
    /// page says "reconnecting…" and connects again, to this server or another (a relay whose store went
    /// away: the next connection finds the tree again, or an error until the store is back).
    public func finishForReconnection() {
        finish(reason: Self.reconnectReason)
    }

    /// `finish()`, with the reason the `ended` event gives.
    func finish(reason: String) {
        ending.reason.withLock { $0 = $0 ?? reason }
        events.finish()
    }

    /// The `ended` event's reason once `finish` was called; `nil` before.
    var endReason: String? {
        ending.reason.withLock { $0 }
    }

    /// The `ended` reason when the routes were finished: the tree is no longer served.
    static let closedReason = "closed"
    /// The `ended` reason when the server stops (its graceful shutdown).
    static let stoppingReason = "stopping"
    /// The reason kept by `finishForReconnection()`: no `ended` event is sent.
    static let reconnectReason = ""
}
