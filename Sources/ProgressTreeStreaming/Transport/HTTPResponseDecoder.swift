/// An HTTP/1.1 response as it comes off a connection: the status line and header fields, then the body
/// in its framing (`Transfer-Encoding: chunked`, a `Content-Length`, or up to the end of the connection).
/// A pure decoder, bytes in, body bytes out, for a mount over HTTP (`HTTPEventClient`).
///
/// Invariants (bounded memory, whatever the input): the head is never buffered beyond `maximumHeadLength`
/// bytes, a chunk's size line beyond 1 KiB; body bytes are handed over where they were read, never
/// buffered. Interim responses (1xx) are skipped.
struct HTTPResponseDecoder {
    /// The status line and header fields of the response.
    struct Head: Equatable {
        /// The status code: 200.
        var status: Int
        /// The status line's reason phrase ("Not Found"), cleaned of control characters.
        var reason: String
        /// Header fields by lowercased name, values trimmed; a repeated field's values joined with ", ".
        var fields: [String: String]

        /// "404 Not Found".
        var statusText: String { reason.isEmpty ? "\(status)" : "\(status) \(reason)" }
    }

    /// Why the response cannot be read.
    enum Failure: Error, Equatable {
        case headTooLarge
        case malformedHead
        case malformedChunk
    }

    /// The longest head read: 32 KiB.
    static let maximumHeadLength = 32 * 1024

    private enum State {
        case head
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailer
        case length(remaining: Int)
        case untilClose
        case done
    }

    private var state = State.head
    private var buffer: [UInt8] = []
    /// The response's head, once it came.
    private(set) var head: Head?

    /// Whether the whole body came (never for a body that ends with the connection).
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Whether the body ends with the connection (neither chunked nor of a known length): its end is the
    /// end of the connection, not a connection cut short.
    var endsWithConnection: Bool {
        if case .untilClose = state { return true }
        return false
    }

    /// Reads `bytes`; hands each piece of the body to `body`, in order.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, body: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
        var index = 0
        while index < bytes.count {
            switch state {
            case .done:
                return
            case .head:
                // Up to the blank line that ends the head, byte by byte (a head is small).
                buffer.append(bytes[index])
                index += 1
                if buffer.count > Self.maximumHeadLength { throw .headTooLarge }
                if buffer.last == 0x0A, buffer.count >= 2,
                    buffer[buffer.count - 2] == 0x0A
                        || (buffer.count >= 4 && buffer[buffer.count - 2] == 0x0D && buffer[buffer.count - 3] == 0x0A)
                {
                    try readHead()
                }
            case .chunkSize, .trailer, .chunkDataEnd:
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A else {
                    buffer.append(byte)
                    if buffer.count > 1024 { throw .malformedChunk }
                    continue
                }
                if buffer.last == 0x0D { buffer.removeLast() }
                let line = buffer
                buffer = []
                try endChunkLine(line)
            case .chunkData(let remaining):
                let count = min(remaining, bytes.count - index)
                body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            case .length(let remaining):
                let count = min(remaining, bytes.count - index)
                body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                state = remaining == count ? .done : .length(remaining: remaining - count)
            case .untilClose:
                body(UnsafeRawBufferPointer(rebasing: bytes[index...]))
                index = bytes.count
            }
        }
    }

    private mutating func endChunkLine(_ line: [UInt8]) throws(Failure) {
        switch state {
        case .chunkDataEnd:
            guard line.isEmpty else { throw .malformedChunk }
            state = .chunkSize
        case .chunkSize:
            // The size in hexadecimal, then optional extensions after a semicolon.
            let digits = line.prefix { $0 != 0x3B }.filter { $0 != 0x20 && $0 != 0x09 }
            guard !digits.isEmpty, digits.count <= 12,
                let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
            else { throw .malformedChunk }
            state = size == 0 ? .trailer : .chunkData(remaining: size)
        case .trailer:
            if line.isEmpty { state = .done }
        default:
            break
        }
    }

    private mutating func readHead() throws(Failure) {
        let text = String(decoding: buffer, as: UTF8.self)
        buffer = []
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.") else { throw .malformedHead }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].count == 3, let status = Int(parts[1]) else { throw .malformedHead }
        let reason = parts.count > 2 ? String(parts[2]) : ""
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        if (100...199).contains(status) && status != 101 {
            state = .head  // an interim response: the real one follows
            return
        }
        head = Head(status: status, reason: MountedNodeMap.cleaned(reason), fields: fields)
        if status == 204 || status == 304 {
            state = .done
        } else if let coding = fields["transfer-encoding"], coding.lowercased().hasSuffix("chunked") {
            state = .chunkSize
        } else if let length = fields["content-length"] {
            guard let count = Int(length), count >= 0 else { throw .malformedHead }
            state = count == 0 ? .done : .length(remaining: count)
        } else {
            state = .untilClose
        }
    }
}

extension Substring {
    /// Without spaces and tabs at either end.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
