import ProgressTreePlatform

/// The transport of a mount over HTTP (`ProgressNode.mountConnection(url:…)`, `Docs/Mounting.md`, "Over
/// HTTP"): a minimal HTTP/1.1 client on a thread of its own that reads a served tree's event stream
/// (`Docs/WireFormat.md`, "Over HTTP") and hands the mount what a stream would carry.
///
/// The mount reads a pipe as it reads any stream (`ProgressMount`, on the reactor's thread): the client
/// writes into it each default event's data as a line of the format, and, among them, a snapshot marker
/// (`SnapshotMarker`) when a connection is answered and at the server's `synced` event, so that the
/// mount finishes the nodes a reconnection's snapshot did not name, in order with the lines, and a marker
/// when a connection names another run than the one before (the mount then starts again). The mount's
/// commands come back on a second pipe, and the client posts each to the server, in order.
///
/// - A connection that drops before the root's final line is made again after the server's `retry`
///   (1 s unless it said otherwise, held between 0.1 and 30 s) with `Last-Event-ID`; attempts that fail
///   wait twice as long each time, at most 5 s. Meanwhile the mirror stays as it was.
/// - A server out of reach (a connection refused, unreachable or not answered, or a proxy answering 502,
///   503 or 504 for it) for `Options.reconnectionLimit` fails the mount with the URL and the last error:
///   "http://10.200.1.2:8080/events: connection refused for 10 s". Another status, or a 200 that is not an
///   event stream, fails it at once: "http://…/events answered 404 Not Found".
/// - The client ends when the mount does (the root's final line, a failure, `close()`): the mount closes
///   its end of the command pipe, which the client watches whatever it does but connect.
///
/// One thread per mount over HTTP, blocked in `poll` while nothing comes (mounts of streams share the
/// reactor's one thread; a process mounts few served trees).
struct HTTPEventClient {
    /// How long a connection or an answer is waited for before it counts as none: 5 s, less when the
    /// reconnection limit is nearer.
    static let answerTimeout = Duration.seconds(5)
    /// The longest wait between two attempts that failed.
    static let maximumBackoff = Duration.seconds(5)

    private enum Token {
        case known(String)
        case unknown
        /// `GET /token` answered 404: the server takes no commands.
        case readOnly
    }

    /// How a connection ended.
    private enum Outcome {
        /// It was answered and carried events, then dropped, ended or went silent.
        case dropped
        /// It was not answered with an event stream: `problem` ("connection refused"); fatal ones fail the
        /// mount at once with `reason`.
        case failed(problem: String, fatalReason: String?)
        /// The mount ended (or the pipe to it broke): nothing more to do.
        case stopped
    }

    let location: HTTPLocation
    let mount: ProgressMount
    /// The write end of the pipe the mount reads (owned).
    let output: Int32
    /// The read end of the pipe the mount writes its commands to (owned).
    let commandInput: Int32
    let reconnectionLimit: Duration
    let silenceLimit: Duration
    private var token: Token
    private var retry = Duration.seconds(1)
    private var lastEventID = ""
    /// The run the server named last (its `run` event), if any: a connection that names another one
    /// serves a new run, which replaces the mirror's nodes (`SnapshotMarker.newRun`).
    private var runID: String?
    private var connections = 0
    private var commandSplitter = LineSplitter(maximumLineLength: 4096)

    /// Starts the client's thread for `mount`.
    static func start(
        location: HTTPLocation, mount: ProgressMount, output: Int32, commandInput: Int32, token: String?,
        options: ProgressMount.Options
    ) {
        DetachedThread.start {
            var client = HTTPEventClient(
                location: location, mount: mount, output: output, commandInput: commandInput,
                reconnectionLimit: options.reconnectionLimit, silenceLimit: options.silenceLimit,
                token: token.map(Token.known) ?? .unknown)
            client.run()
        }
    }

    private init(
        location: HTTPLocation, mount: ProgressMount, output: Int32, commandInput: Int32, reconnectionLimit: Duration,
        silenceLimit: Duration, token: Token
    ) {
        self.location = location
        self.mount = mount
        self.output = output
        self.commandInput = commandInput
        self.reconnectionLimit = reconnectionLimit
        self.silenceLimit = silenceLimit
        self.token = token
    }

    private mutating func run() {
        CurrentThread.setName("PT.http")
        defer {
            FileDescriptor.close(output)
            FileDescriptor.close(commandInput)
        }
        var troubleSince: ContinuousClock.Instant?
        var backoff = retry
        while true {
            let attemptStart = ContinuousClock.now
            let remaining = troubleSince.map { $0 + reconnectionLimit - attemptStart } ?? reconnectionLimit
            let timeout = min(Self.answerTimeout, max(.milliseconds(500), remaining))
            let problem: String
            switch connectAndRead(timeout: timeout) {
            case .stopped:
                return
            case .dropped:
                // Answered, then lost: the limit counts from now, the first wait is the server's.
                troubleSince = ContinuousClock.now
                backoff = retry
                problem = "the connection dropped"
            case .failed(let text, let fatalReason):
                if let fatalReason { return fail(fatalReason) }
                troubleSince = troubleSince ?? attemptStart
                problem = text
            }
            let since = troubleSince ?? attemptStart
            let left = since + reconnectionLimit - ContinuousClock.now
            if left <= .zero {
                return fail("\(location.url): \(problem) for \(Self.describe(reconnectionLimit))")
            }
            guard waitServingCommands(min(backoff, left)) else { return }
            backoff = min(backoff * 2, max(retry, Self.maximumBackoff))
        }
    }

    /// Fails the mount with `reason`: set before the stream closes, so that its end fails the mirrored
    /// root with it (the lines already written are read first).
    private func fail(_ reason: String) {
        mount.shared.withLock { $0.transportFailure = reason }
    }

    /// One connection: the request, the answer's head, then its events into the mount's stream until it
    /// drops, ends, goes silent for `silenceLimit`, or the mount ends.
    private mutating func connectAndRead(timeout: Duration) -> Outcome {
        let socket: Int32
        do {
            socket = try Sockets.connect(host: location.host, port: location.port, milliseconds: timeout.milliseconds)
        } catch {
            return .failed(problem: Self.describe(error), fatalReason: nil)
        }
        defer { FileDescriptor.close(socket) }
        var request =
            "GET \(location.path) HTTP/1.1\r\nHost: \(location.hostField)\r\nAccept: text/event-stream\r\n"
            + "Cache-Control: no-store\r\nUser-Agent: ProgressTree\r\n"
        if !lastEventID.isEmpty && lastEventID.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) {
            request += "Last-Event-ID: \(lastEventID)\r\n"
        }
        request += "\r\n"
        guard FileDescriptor.sendAll(socket, Array(request.utf8)) else {
            return .failed(problem: "the connection dropped", fatalReason: nil)
        }
        var decoder = HTTPResponseDecoder()
        var parser = EventStreamParser(
            maximumLineLength: ProgressMount.maximumLineLength + 64, lastEventID: lastEventID)
        defer { lastEventID = parser.lastEventID }
        var isAnswered = false
        let headDeadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let wait = isAnswered ? silenceLimit : headDeadline - ContinuousClock.now
            let ready = Polling.pollReadable([socket, commandInput], milliseconds: wait.pollMilliseconds)
            if ready.isEmpty {
                return isAnswered ? .dropped : .failed(problem: "no answer", fatalReason: nil)
            }
            if ready.contains(commandInput) && !serveCommands() { return .stopped }
            guard ready.contains(socket) else { continue }
            let count = FileDescriptor.read(socket, &buffer)
            if count < 0 && ErrorNumber.last == ErrorNumber.wouldBlock { continue }
            guard count > 0 else {
                if isAnswered { return .dropped }
                let problem =
                    count < 0 ? Self.lowercased(ErrorNumber.text(ErrorNumber.last)) : "closed without an answer"
                return .failed(problem: problem, fatalReason: nil)
            }
            var items: [EventStreamParser.Item] = []
            do {
                try buffer.withUnsafeBytes { bytes in
                    try decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { body in
                        parser.feed(body) { items.append($0) }
                    }
                }
            } catch {
                if isAnswered { return .dropped }
                return .failed(problem: "an answer that is not HTTP", fatalReason: nil)
            }
            var lines: [UInt8] = []
            if !isAnswered {
                guard let head = decoder.head else { continue }
                if let outcome = check(head) { return outcome }
                isAnswered = true
                connections += 1
                if connections > 1 { mount.shared.withLock { $0.diagnostics.reconnections += 1 } }
                lines += SnapshotMarker.begins.line
            }
            lines += wireLines(items)
            if !lines.isEmpty && !FileDescriptor.sendAll(output, lines) { return .stopped }
            if decoder.isComplete { return .dropped }
        }
    }

    /// `nil` for an event stream; otherwise how the attempt ended.
    private func check(_ head: HTTPResponseDecoder.Head) -> Outcome? {
        guard head.status == 200 else {
            // A proxy whose server is gone or restarting: the server may come back.
            let isTransient = [502, 503, 504].contains(head.status)
            return .failed(
                problem: "answered \(head.statusText)",
                fatalReason: isTransient ? nil : "\(location.url) answered \(head.statusText)")
        }
        let type = head.fields["content-type"] ?? ""
        guard type.lowercased().hasPrefix("text/event-stream") else {
            return .failed(
                problem: "not an event stream",
                fatalReason: "\(location.url) answered \(head.statusText) with Content-Type "
                    + "\(type.isEmpty ? "none" : MountedNodeMap.cleaned(String(type.prefix(100))))"
                    + ", not text/event-stream"
            )
        }
        return nil
    }

    /// The lines of the format (and snapshot markers) that `items` carry, each with its newline; the
    /// server's `retry` taken, oversized events counted.
    private mutating func wireLines(_ items: [EventStreamParser.Item]) -> [UInt8] {
        var lines: [UInt8] = []
        var oversized = 0
        for item in items {
            switch item {
            case .event(let type, var data):
                if type == "synced" {
                    lines += SnapshotMarker.synced.line
                } else if type == "run" {
                    // `{"v":1,"run":"…"}`: another run than the one mirrored starts the mirror again.
                    guard let members = try? WireJSON.object(data), case .string(let run)? = members["run"] else {
                        continue
                    }
                    if let known = runID, known != run { lines += SnapshotMarker.newRun.line }
                    runID = run
                } else if type == "message" {
                    // One line: data fields joined by LF read as one (JSON takes the space as it took the
                    // line break), and no server line passes for a marker.
                    for index in data.indices where data[index] == 0x0A { data[index] = 0x20 }
                    if data.first == 0 { data[0] = 1 }
                    lines += data
                    lines.append(0x0A)
                }
            case .retry(let milliseconds):
                retry = .milliseconds(min(max(milliseconds, 100), 30_000))
            case .oversized:
                oversized += 1
            }
        }
        if oversized > 0 { mount.shared.withLock { $0.diagnostics.oversizedLines += oversized } }
        return lines
    }

    /// Waits `duration`, posting the commands that come meanwhile; `false` once the mount ended.
    private mutating func waitServingCommands(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return true }
            if Polling.waitReady(commandInput, milliseconds: left.pollMilliseconds) && !serveCommands() {
                return false
            }
        }
    }

    // MARK: Commands

    /// Reads the commands the mount wrote and posts each, in order; `false` at the pipe's end (the mount
    /// ended).
    private mutating func serveCommands() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = FileDescriptor.read(commandInput, &chunk)
        if count < 0 && ErrorNumber.last == ErrorNumber.wouldBlock { return true }
        guard count > 0 else { return false }
        let pieces = chunk.withUnsafeBytes { commandSplitter.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        for case .line(let line) in pieces where !line.isEmpty { post(line) }
        return true
    }

    /// Posts one command line to the server's `commands`, with the token (asked of `token` once, unless
    /// given); counted when it fails, or when the server is read-only.
    private mutating func post(_ line: [UInt8]) {
        guard let token = knownToken() else { return }
        let answer = Self.exchange(
            location, method: "POST", path: location.sibling("commands"),
            fields: ["ProgressTree-Token: \(token)", "Content-Type: application/json"], body: line)
        if !(answer.map { (200..<300).contains($0.head.status) } ?? false) {
            mount.shared.withLock { $0.diagnostics.failedCommands += 1 }
        }
    }

    /// The token, asked of the server the first time it is needed; `nil` (the command counted) when the
    /// server is read-only or could not say.
    private mutating func knownToken() -> String? {
        switch token {
        case .known(let value):
            return value
        case .readOnly:
            mount.shared.withLock { $0.diagnostics.unsentCommands += 1 }
            return nil
        case .unknown:
            let answer = Self.exchange(location, method: "GET", path: location.sibling("token"), fields: [], body: [])
            if let answer, answer.head.status == 200 {
                let value = String(decoding: answer.body, as: UTF8.self).filter { !$0.isWhitespace }
                if !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                    token = .known(value)
                    return value
                }
            } else if answer?.head.status == 404 {
                token = .readOnly
                mount.shared.withLock { $0.diagnostics.unsentCommands += 1 }
                return nil
            }
            mount.shared.withLock { $0.diagnostics.failedCommands += 1 }
            return nil  // asked again at the next command
        }
    }

    /// One request on a connection of its own (`Connection: close`), within `answerTimeout` for each
    /// step: the answer's head and at most 4 KiB of its body, or `nil` when it failed.
    static func exchange(
        _ location: HTTPLocation, method: String, path: String, fields: [String], body: [UInt8]
    ) -> (head: HTTPResponseDecoder.Head, body: [UInt8])? {
        guard
            let socket = try? Sockets.connect(
                host: location.host, port: location.port, milliseconds: answerTimeout.milliseconds)
        else { return nil }
        defer { FileDescriptor.close(socket) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(location.hostField)\r\nConnection: close\r\n"
        for field in fields { request += field + "\r\n" }
        if method == "POST" { request += "Content-Length: \(body.count)\r\n" }
        guard FileDescriptor.sendAll(socket, Array((request + "\r\n").utf8) + body) else { return nil }
        var decoder = HTTPResponseDecoder()
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + answerTimeout
        while !decoder.isComplete {
            let left = deadline - ContinuousClock.now
            guard left > .zero, Polling.waitReady(socket, milliseconds: left.pollMilliseconds) else { return nil }
            let count = FileDescriptor.read(socket, &buffer)
            if count < 0 && ErrorNumber.last == ErrorNumber.wouldBlock { continue }
            guard count > 0 else { break }
            do {
                try buffer.withUnsafeBytes { bytes in
                    try decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { piece in
                        received += piece.prefix(max(0, 4096 - received.count))
                    }
                }
            } catch {
                return nil
            }
        }
        guard let head = decoder.head, decoder.isComplete || decoder.endsWithConnection else { return nil }
        return (head, received)
    }

    // MARK: Wording

    /// A failure to connect, as a reason says it: "connection refused", "no answer", "cannot resolve host".
    static func describe(_ error: PlatformError) -> String {
        switch error {
        case .system(_, let code) where Sockets.isTimeout(code): "no answer"
        case .system(_, let code): lowercased(ErrorNumber.text(code))
        case .resolve(let host, _): "cannot resolve \(host)"
        case .unsafePath(_, let why): why
        }
    }

    /// "Connection refused" → "connection refused" (a reason goes on after a colon).
    static func lowercased(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// "10 s", "0.5 s".
    static func describe(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }
}

extension Duration {
    /// The duration in whole milliseconds, at least 0 (a timeout).
    fileprivate var milliseconds: Int {
        Int(pollMilliseconds)
    }
}
