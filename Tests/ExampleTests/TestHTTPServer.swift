#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import Synchronization
import ProgressTreePlatform

/// A small HTTP/1.1 server on 127.0.0.1 for the fetch example's tests, started and stopped by the test:
/// `GET /name` answers with the file of that name (with a Content-Length), anything else with 404. Each
/// file is sent in `chunkSize` pieces with `pause` between them, so a test can act in the middle of a
/// transfer; the server records what it sent and whether the client closed the connection before the end.
/// `stop()` ends it (call it in a `defer`): nothing is left running.
final class TestHTTPServer: Sendable {
    /// What happened to one request.
    struct Transfer: Sendable, Equatable {
        var path: String
        var bytesSent = 0
        var completed = false
        /// The client closed the connection before the whole body was sent.
        var closedByClient = false
    }

    let port: UInt16
    private let files: [String: Data]
    private let chunkSize: Int
    private let pause: Duration
    private let listener: Int32
    private let transfers = Lock<[Transfer]>([])
    private let connections = DispatchGroup()
    private let isStopping = Atomic<Bool>(false)

    init(files: [String: Data], chunkSize: Int = 1 << 20, pause: Duration = .zero) throws {
        self.files = files
        self.chunkSize = chunkSize
        self.pause = pause
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        connections.enter()
        Thread.detachNewThread { [self] in
            defer { connections.leave() }
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return  // the listener was shut down
                }
                connections.enter()
                Thread.detachNewThread { [self] in
                    defer { connections.leave() }
                    serve(connection)
                }
            }
        }
    }

    /// Stops listening, waits for the connections being served to end, and closes the listener.
    func stop() {
        guard !isStopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        _ = connections.wait(timeout: .now() + 30)
        close(listener)
    }

    /// The requests served so far, in the order they came.
    var served: [Transfer] { transfers.withLock { $0 } }

    /// The URL of `path` on this server.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Whether `path` has had at least `bytes` of its body sent.
    func hasSent(_ bytes: Int, of path: String) -> Bool {
        transfers.withLock { $0.contains { $0.path == path && $0.bytesSent >= bytes } }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: [13, 10, 13, 10]) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        let path = line.count >= 2 ? String(line[1].dropFirst()) : ""
        let index = transfers.withLock { transfers in
            transfers.append(Transfer(path: path))
            return transfers.count - 1
        }
        guard let body = files[path] else {
            let message = "not here\n"
            _ = send(
                connection,
                "HTTP/1.1 404 Not Found\r\nContent-Length: \(message.utf8.count)\r\nConnection: close\r\n\r\n\(message)"
            )
            return
        }
        guard send(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n") else {
            return
        }
        var offset = 0
        while offset < body.count {
            if offset > 0 && pause > .zero {
                Thread.sleep(
                    forTimeInterval: Double(pause.components.attoseconds) * 1e-18 + Double(pause.components.seconds))
            }
            let end = min(offset + chunkSize, body.count)
            let sent = body[offset..<end].withUnsafeBytes { send(connection, $0) }
            guard sent else {
                transfers.withLock { $0[index].closedByClient = true }
                return
            }
            offset = end
            transfers.withLock { $0[index].bytesSent = offset }
        }
        transfers.withLock { $0[index].completed = true }
    }

    /// Sends all of `bytes`; `false` when the client has gone (EPIPE, ECONNRESET). No SIGPIPE.
    private func send(_ connection: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = systemSend(connection, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private func send(_ connection: Int32, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { send(connection, UnsafeRawBufferPointer($0)) }
    }

    /// A port on 127.0.0.1 where nothing listens: bound, then closed.
    static func refusingPort() throws -> UInt16 {
        let server = try TestHTTPServer(files: [:])
        server.stop()
        return server.port
    }
}

#if canImport(Glibc)
private let systemSend = Glibc.send
#else
private let systemSend = Darwin.send
#endif

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
