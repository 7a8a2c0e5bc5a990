import ProgressTreePlatform

/// Splits a byte stream into lines of at most `maximumLineLength` bytes, in bounded memory.
///
/// Invariants: the buffer never holds more than `maximumLineLength` bytes; a line is reported without its
/// newline (and without a `\r` before it). A longer line is, by `longLines`, either reported once as
/// `.oversized` with its bytes dropped up to the next newline (never buffered), or cut into lines of at
/// most `maximumLineLength` bytes, each cut before a UTF-8 sequence, never inside one.
struct LineSplitter {
    enum Piece: Equatable {
        case line([UInt8])
        case oversized(Int)
    }

    /// What becomes of a line longer than the limit.
    enum LongLines {
        /// Dropped and reported as `.oversized` (a line of the wire format cannot be read in part).
        case dropped
        /// Cut into lines (a program's output: nothing of it is lost).
        case cut
    }

    let maximumLineLength: Int
    let longLines: LongLines
    private var buffer: [UInt8] = []
    /// Dropping an oversized line: how many bytes of it were dropped so far.
    private var dropping: Int?

    init(maximumLineLength: Int, longLines: LongLines = .dropped) {
        self.maximumLineLength = max(4, maximumLineLength)
        self.longLines = longLines
    }

    /// Whether a line over the limit is being dropped (its end has not come yet).
    var isDroppingLine: Bool { dropping != nil }

    /// A line as `forEachPiece` hands it over: valid only during the call.
    enum BorrowedPiece {
        case line(UnsafeRawBufferPointer)
        case oversized(Int)
    }

    /// The complete lines in what came before and `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> [Piece] {
        var pieces: [Piece] = []
        forEachPiece(in: bytes) { piece in
            switch piece {
            case .line(let line): pieces.append(.line(Array(line)))
            case .oversized(let length): pieces.append(.oversized(length))
            }
        }
        return pieces
    }

    /// Calls `body` with each complete line in what came before and `bytes`, in order. A line that lies
    /// whole in `bytes` is handed over where it is, without a copy.
    mutating func forEachPiece(in bytes: UnsafeRawBufferPointer, _ body: (BorrowedPiece) -> Void) {
        var start = 0
        while start < bytes.count {
            let newline = Bytes.firstIndex(of: 0x0A, in: bytes, from: start)
            let end = newline ?? bytes.count
            if let dropped = dropping {
                if newline != nil {
                    body(.oversized(dropped + (end - start)))
                    dropping = nil
                } else {
                    dropping = dropped + (end - start)
                }
            } else if buffer.count + (end - start) > maximumLineLength {
                switch longLines {
                case .dropped:
                    let length = buffer.count + (end - start)
                    buffer = []
                    if newline != nil {
                        body(.oversized(length))
                    } else {
                        dropping = length
                    }
                case .cut:
                    // Fill the buffer up to the limit, cut it before a UTF-8 sequence, and go on with the rest.
                    let room = maximumLineLength - buffer.count
                    buffer.append(contentsOf: bytes[start..<start + room])
                    let cut = Self.completeCharacters(buffer)
                    buffer.withUnsafeBytes { body(.line(UnsafeRawBufferPointer(rebasing: $0[..<cut]))) }
                    buffer = Array(buffer[cut...])
                    start += room
                    continue
                }
            } else if newline != nil && buffer.isEmpty {
                // The whole line is in `bytes`: no copy.
                var line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                if line.last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
                body(.line(line))
            } else {
                buffer.append(contentsOf: bytes[start..<end])
                if newline != nil {
                    if buffer.last == 0x0D { buffer.removeLast() }
                    buffer.withUnsafeBytes { body(.line($0)) }
                    buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
                }
            }
            start = newline.map { $0 + 1 } ?? bytes.count
        }
    }

    /// How many of `bytes` make whole UTF-8 sequences: all of them, or up to the last sequence, which
    /// is cut short (bytes that are not UTF-8 count as whole: there is nothing to keep together).
    static func completeCharacters(_ bytes: [UInt8]) -> Int {
        var lead = bytes.count - 1
        while lead >= 0, lead >= bytes.count - 4, bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
        guard lead > 0, lead >= bytes.count - 4 else { return bytes.count }
        let byte = bytes[lead]
        let length =
            (0xC2...0xDF).contains(byte) ? 2 : (0xE0...0xEF).contains(byte) ? 3 : (0xF0...0xF4).contains(byte) ? 4 : 1
        return lead + length <= bytes.count ? bytes.count : lead
    }

    /// The complete lines in what came before and `bytes`.
    mutating func append(_ bytes: ArraySlice<UInt8>) -> [Piece] {
        bytes.withUnsafeBytes { append($0) }
    }

    /// What is left at the end of the stream: a line cut short (no newline), if any.
    mutating func remainder() -> [UInt8]? {
        defer { buffer = [] }
        return buffer.isEmpty ? nil : buffer
    }
}
