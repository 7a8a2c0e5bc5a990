#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import Synchronization
import ProgressTreePlatform

/// A small HTTP/1.1 server on 127.0.0.1 for the tests of the fetch example and of adopted URLSession
/// tasks, started and stopped by the test: `GET /name` answers with the file of that name (with a
/// Content-Length, or chunked with none for a name in `chunked`), anything else with 404. A request with a
/// body (an upload) has it read to its end and is answered `200 OK`, "stored". Each file is sent in
/// `chunkSize` pieces with `pause` between them, so a test can act in the middle of a transfer; the server
/// records what it sent and received and whether the client closed the connection before the end.
/// `stop()` ends it (call it in a `defer`): nothing is left running.
package final class TestHTTPServer: Sendable {
    /// What happened to one request.
    package struct Transfer: Sendable, Equatable {
        package var path: String
        package var bytesSent = 0
        /// The bytes of the request's body read.
        package var bytesReceived = 0
        package var completed = false
        /// The client closed the connection before the whole body was sent.
        package var closedByClient = false
    }

    package let port: UInt16
    private let files: [String: Data]
    private let chunked: Set<String>
    private let chunkSize: Int
    private let pause: Duration
    private let listener: Int32
    private let transfers = Lock<[Transfer]>([])
    private let connections = DispatchGroup()
    private let isStopping = Atomic<Bool>(false)

    package init(
        files: [String: Data], chunked: Set<String> = [], chunkSize: Int = 1 << 20, pause: Duration = .zero
    ) throws {
        self.files = files
        self.chunked = chunked
        self.chunkSize = chunkSize
        self.pause = pause
        let listener = socket(AF_INET, streamType, 0)
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
                #if canImport(Darwin)
                var on: Int32 = 1  // Darwin has no MSG_NOSIGNAL: the socket itself raises no SIGPIPE
                setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
                #endif
                connections.enter()
                Thread.detachNewThread { [self] in
                    defer { connections.leave() }
                    serve(connection)
                }
            }
        }
    }

    /// Stops listening, waits for the connections being served to end, and closes the listener.
    package func stop() {
        guard !isStopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        _ = connections.wait(timeout: .now() + 30)
        close(listener)
    }

    /// The requests served so far, in the order they came.
    package var served: [Transfer] { transfers.withLock { $0 } }

    /// The URL of `path` on this server.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Whether `path` has had at least `bytes` of its body sent.
    package func hasSent(_ bytes: Int, of path: String) -> Bool {
        transfers.withLock { $0.contains { $0.path == path && $0.bytesSent >= bytes } }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var headerEnd: Int?
        while headerEnd == nil {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
            headerEnd = request.endOfHeader
        }
        let header = String(decoding: request[..<headerEnd!], as: UTF8.self).lowercased()
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        let path = line.count >= 2 ? String(line[1].dropFirst()) : ""
        let index = transfers.withLock { transfers in
            transfers.append(Transfer(path: path))
            return transfers.count - 1
        }
        if let length = header.contentLength, length > 0 {
            if header.contains("expect: 100-continue") {
                guard send(connection, "HTTP/1.1 100 Continue\r\n\r\n") else { return }
            }
            var received = request.count - headerEnd!
            transfers.withLock { $0[index].bytesReceived = received }
            while received < length {
                let count = read(connection, &buffer, min(buffer.count, length - received))
                guard count > 0 else {
                    transfers.withLock { $0[index].closedByClient = true }
                    return
                }
                received += count
                transfers.withLock { $0[index].bytesReceived = received }
            }
            let message = "stored\n"
            if send(
                connection,
                "HTTP/1.1 200 OK\r\nContent-Length: \(message.utf8.count)\r\nConnection: close\r\n\r\n\(message)")
            {
                transfers.withLock { $0[index].completed = true }
            }
            return
        }
        guard let body = files[path] else {
            let message = "not here\n"
            _ = send(
                connection,
                "HTTP/1.1 404 Not Found\r\nContent-Length: \(message.utf8.count)\r\nConnection: close\r\n\r\n\(message)"
            )
            return
        }
        let isChunked = chunked.contains(path)
        let length = isChunked ? "Transfer-Encoding: chunked" : "Content-Length: \(body.count)"
        guard send(connection, "HTTP/1.1 200 OK\r\n\(length)\r\nConnection: close\r\n\r\n") else {
            return
        }
        var offset = 0
        while offset < body.count {
            if offset > 0 && pause > .zero {
                Thread.sleep(
                    forTimeInterval: Double(pause.components.attoseconds) * 1e-18 + Double(pause.components.seconds))
            }
            let end = min(offset + chunkSize, body.count)
            let sent =
                (!isChunked || send(connection, String(end - offset, radix: 16) + "\r\n"))
                && body[offset..<end].withUnsafeBytes { send(connection, $0) }
                && (!isChunked || send(connection, "\r\n"))
            guard sent else {
                transfers.withLock { $0[index].closedByClient = true }
                return
            }
            offset = end
            transfers.withLock { $0[index].bytesSent = offset }
        }
        if isChunked && !send(connection, "0\r\n\r\n") {
            transfers.withLock { $0[index].closedByClient = true }
            return
        }
        transfers.withLock { $0[index].completed = true }
    }

    /// Sends all of `bytes`; `false` when the client has gone (EPIPE, ECONNRESET). No SIGPIPE.
    private func send(_ connection: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = systemSend(connection, bytes.baseAddress! + sent, bytes.count - sent, noSignal)
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
    package static func refusingPort() throws -> UInt16 {
        let server = try TestHTTPServer(files: [:])
        server.stop()
        return server.port
    }
}

#if canImport(Glibc)
private let systemSend = Glibc.send
/// `SOCK_STREAM`: a case of an enumeration in Glibc, a number in Darwin.
private let streamType = Int32(SOCK_STREAM.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let systemSend = Darwin.send
private let streamType = SOCK_STREAM
private let noSignal: Int32 = 0  // SO_NOSIGPIPE is set on each connection instead
#endif

private extension Array where Element == UInt8 {
    /// The index just past the blank line that ends a request's header, if it has come.
    var endOfHeader: Int? {
        guard count >= 4 else { return nil }
        let blankLine: [UInt8] = [13, 10, 13, 10]
        return (0...(count - 4)).first { self[$0..<($0 + 4)].elementsEqual(blankLine) }.map { $0 + 4 }
    }
}

private extension String {
    /// The value of a lowercased header's `content-length`, if it has one.
    var contentLength: Int? {
        for line in split(separator: "\r\n") where line.hasPrefix("content-length:") {
            return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
