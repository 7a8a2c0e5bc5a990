/// Splits a byte stream into lines of at most `maximumLineLength` bytes, in bounded memory.
///
/// Invariants: the buffer never holds more than `maximumLineLength` bytes; a longer line is reported once
/// as `.oversized` and its bytes are dropped up to the next newline (never buffered); a line is reported
/// without its newline (and without a `\r` before it).
struct LineSplitter {
    enum Piece: Equatable {
        case line([UInt8])
        case oversized(Int)
    }

    let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Dropping an oversized line: how many bytes of it were dropped so far.
    private var dropping: Int?

    init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    /// The complete lines in what came before and `bytes`.
    mutating func append(_ bytes: ArraySlice<UInt8>) -> [Piece] {
        var pieces: [Piece] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let newline = bytes[start...].firstIndex(of: 0x0A)
            let end = newline ?? bytes.endIndex
            if let dropped = dropping {
                if newline != nil {
                    pieces.append(.oversized(dropped + (end - start)))
                    dropping = nil
                } else {
                    dropping = dropped + (end - start)
                }
            } else if buffer.count + (end - start) > maximumLineLength {
                dropping = buffer.count + (end - start)
                buffer = []
                if newline != nil {
                    pieces.append(.oversized(dropping!))
                    dropping = nil
                }
            } else {
                buffer.append(contentsOf: bytes[start..<end])
                if newline != nil {
                    if buffer.last == 0x0D { buffer.removeLast() }
                    pieces.append(.line(buffer))
                    buffer = []
                }
            }
            start = newline.map { $0 + 1 } ?? bytes.endIndex
        }
        return pieces
    }

    /// What is left at the end of the stream: a line cut short (no newline), if any.
    mutating func remainder() -> [UInt8]? {
        defer { buffer = [] }
        return buffer.isEmpty ? nil : buffer
    }
}
