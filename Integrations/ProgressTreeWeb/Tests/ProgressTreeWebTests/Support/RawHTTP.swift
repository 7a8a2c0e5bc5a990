#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 client on a blocking POSIX socket to 127.0.0.1, for tests: a reader written from the
/// specification, not from the server's code (no client library is a dependency of the package).
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    /// Everything read so far.
    private(set) var received: [UInt8] = []

    init(port: Int) throws {
        #if canImport(Darwin)
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(description: "connect: \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Sends a request: `method path`, `Host`, the headers given, and the body (with its length).
    func send(
        _ method: String, _ path: String, host: String = "127.0.0.1", headers: [(String, String)] = [],
        body: [UInt8] = []
    ) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { return }  // the server closed: the answer says why
            offset += written
        }
    }

    /// Reads until `done` holds for the decoded body or `seconds` pass; whether it held.
    @discardableResult
    func read(seconds: Double = 10, until done: (Response) -> Bool) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + seconds
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let response = response, done(response) { return true }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = end - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
            guard left > 0 else { return false }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return response.map(done) ?? false }
            received.append(contentsOf: buffer[0..<count])
        }
    }

    /// A whole answer to a request that ends (read until the body is complete).
    func answer(seconds: Double = 10) throws -> Response {
        guard read(seconds: seconds, until: { $0.isComplete }), let response else {
            throw Failure(description: "no complete answer: \(String(decoding: received, as: UTF8.self))")
        }
        return response
    }

    /// The answer read so far: status, headers (names lowercased), the body decoded (chunked or not).
    var response: Response? {
        guard let end = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = head.first, let status = Int(statusLine.split(separator: " ")[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingPrefix(" ").description
        }
        var body: [UInt8] = []
        var isComplete = false
        var rest = received[end.upperBound...]
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while let lineEnd = rest.firstRange(of: Array("\r\n".utf8)),
                let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16),
                rest.count >= rest.distance(from: rest.startIndex, to: lineEnd.upperBound) + size + 2
            {
                let start = lineEnd.upperBound
                body.append(contentsOf: rest[start..<(start + size)])
                rest = rest[(start + size + 2)...]
                if size == 0 {
                    isComplete = true
                    break
                }
            }
        } else {
            body = Array(rest)
            isComplete = body.count >= Int(headers["content-length"] ?? "0") ?? 0
        }
        return Response(
            status: status, headers: headers, body: String(decoding: body, as: UTF8.self), isComplete: isComplete)
    }

    struct Response {
        let status: Int
        let headers: [String: String]
        let body: String
        let isComplete: Bool
    }
}
