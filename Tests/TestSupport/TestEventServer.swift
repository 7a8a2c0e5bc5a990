#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import Synchronization
import ProgressTreePlatform

/// A small server of Server-Sent Events for the tests of a mount over HTTP (`mountConnection(url:)`),
/// started and stopped by the test (or by the `sse-test-server` program of the cross-machine test): it
/// serves the contract of `Docs/WireFormat.md`, "Over HTTP", as a test scripts it.
///
/// - `GET /events` (any path ending in `events`) answers `eventsStatus` (200 with
///   `Content-Type: text/event-stream` by default), with no length (the body ends with the connection) or
///   chunked, then `snapshot()` and whatever `send(_:)` sends later, to every connection open. Each request's
///   `Last-Event-ID` is recorded.
/// - `GET /token` answers the token (404 when there is none: a read-only server).
/// - `POST /commands` records the body and answers 204 when `ProgressTree-Token` is the token, 403
///   otherwise.
/// - `drop()` closes the event connections (a chunked one ended cleanly, or cut); `stop()` ends everything
///   (call it in a `defer`): nothing is left running.
package final class TestEventServer: Sendable {
    /// A request the server read.
    package struct Request: Sendable, Equatable {
        package var method: String
        package var path: String
        /// Header fields by lowercased name.
        package var fields: [String: String]
        package var body: String
    }

    /// How an event stream's body is framed.
    package enum Framing: Sendable {
        /// No length: the body ends with the connection.
        case identity
        /// `Transfer-Encoding: chunked`, each `send` one chunk.
        case chunked
    }

    package let port: UInt16
    package let host: String
    private let framing: Framing
    private let token: String?
    private let eventsStatus: String
    private let snapshot: @Sendable () -> String
    private let listener: Int32
    private let state = Lock(State())
    private let threads = DispatchGroup()
    private let isStopping = Atomic<Bool>(false)

    private struct State {
        var requests: [Request] = []
        var streams: [Int32] = []
    }

    /// A server on `host` (127.0.0.1 by default) at `port` (0: any free one). Each event connection first
    /// gets `snapshot()` (`retry: 100` and a blank line by default, so that tests reconnect fast).
    package init(
        host: String = "127.0.0.1", port: UInt16 = 0, framing: Framing = .identity,
        token: String? = "0123456789abcdef0123456789abcdef", eventsStatus: String = "200 OK",
        snapshot: @escaping @Sendable () -> String = { "retry: 100\n\n" }
    ) throws {
        self.host = host
        self.framing = framing
        self.token = token
        self.eventsStatus = eventsStatus
        self.snapshot = snapshot
        let (listener, port) = try Sockets.listen(host: host, port: port, backlog: 16)
        // Accepted below with blocking waits.
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) & ~O_NONBLOCK)
        self.listener = listener
        self.port = port
        threads.enter()
        Thread.detachNewThread { [self] in
            defer { threads.leave() }
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return  // the listener was shut down
                }
                threads.enter()
                Thread.detachNewThread { [self] in
                    defer { threads.leave() }
                    serve(connection)
                }
            }
        }
    }

    /// The URL of `path` on this server.
    package func url(_ path: String = "events") -> String { "http://\(host):\(port)/\(path)" }

    /// The requests read so far, in order.
    package var requests: [Request] { state.withLock { $0.requests } }

    /// The event-stream requests so far.
    package var eventRequests: [Request] { requests.filter { $0.method == "GET" && $0.path.hasSuffix("events") } }

    /// The bodies of the commands posted so far, in order.
    package var commands: [Request] { requests.filter { $0.method == "POST" } }

    /// How many event connections are open.
    package var openStreams: Int { state.withLock { $0.streams.count } }

    /// Sends `text` (event-stream text: "id: 3\ndata: {…}\n\n") to every event connection open.
    package func send(_ text: String) {
        state.withLock { state in
            for stream in state.streams { _ = write(stream, text) }
        }
    }

    /// Closes every event connection: a chunked one `cleanly` with its last chunk, or cut; an identity one
    /// by closing.
    package func drop(cleanly: Bool = false) {
        state.withLock { state in
            for stream in state.streams {
                if cleanly && framing == .chunked { _ = send(stream, "0\r\n\r\n") }
                shutdown(stream, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops listening, closes every connection, and waits for the server's threads to end.
    package func stop() {
        guard !isStopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        drop()
        _ = threads.wait(timeout: .now() + 30)
    }

    private func serve(_ connection: Int32) {
        var isStream = false
        defer {
            if isStream { state.withLock { $0.streams.removeAll { $0 == connection } } }
            close(connection)
        }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 8192)
        var headEnd: Int?
        while headEnd == nil {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            received += buffer[0..<count]
            headEnd = Self.endOfHead(received)
        }
        let headText = String(decoding: received[..<headEnd!], as: UTF8.self)
        let lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(received[headEnd!...])
        let length = Int(fields["content-length"] ?? "0") ?? 0
        while body.count < length {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            body += buffer[0..<count]
        }
        let request = Request(
            method: requestLine.count > 0 ? String(requestLine[0]) : "",
            path: requestLine.count > 1 ? String(requestLine[1]) : "", fields: fields,
            body: String(decoding: body, as: UTF8.self))
        state.withLock { $0.requests.append(request) }
        switch (request.method, request.path) {
        case ("GET", let path) where path.hasSuffix("/token"):
            if let token {
                _ = send(
                    connection,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(token.utf8.count)\r\n\r\n\(token)"
                )
            } else {
                _ = send(connection, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            }
        case ("POST", let path) where path.hasSuffix("/commands"):
            let allowed = token != nil && fields["progresstree-token"] == token
            _ = send(
                connection,
                allowed ? "HTTP/1.1 204 No Content\r\n\r\n" : "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        case ("GET", let path) where path.hasSuffix("events"):
            guard eventsStatus.hasPrefix("200") else {
                _ = send(connection, "HTTP/1.1 \(eventsStatus)\r\nContent-Length: 0\r\n\r\n")
                return
            }
            let framingField = framing == .chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n"
            // The head and the snapshot under the lock: a `send` comes after both, never between.
            let opened = state.withLock { state -> Bool in
                guard
                    send(
                        connection,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                            + "X-Accel-Buffering: no\r\n\(framingField)\r\n"),
                    write(connection, snapshot())
                else { return false }
                state.streams.append(connection)
                return true
            }
            guard opened else { return }
            isStream = true
            // Until the client goes away or the stream is dropped.
            while read(connection, &buffer, buffer.count) > 0 {}
        default:
            _ = send(connection, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        }
    }

    /// Writes `text` as the stream's framing wants it.
    private func write(_ connection: Int32, _ text: String) -> Bool {
        guard !text.isEmpty else { return true }
        guard framing == .chunked else { return send(connection, text) }
        return send(connection, String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n")
    }

    private func send(_ connection: Int32, _ text: String) -> Bool {
        FileDescriptor.sendAll(connection, Array(text.utf8))
    }

    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) }.map { $0 + 4 }
    }
}

/// Event-stream text for tests: one event per wire line, with the walk's id.
package enum EventText {
    /// `id: walk` and `data: line`, a blank line after.
    package static func event(_ line: String, id walk: Int) -> String {
        "id: \(walk)\ndata: \(line)\n\n"
    }

    /// The `synced` event of walk `walk`.
    package static func synced(_ walk: Int) -> String {
        "event: synced\ndata: {\"v\":1,\"synced\":\(walk)}\n\n"
    }
}
