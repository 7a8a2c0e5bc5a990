/// The event-stream framing of Server-Sent Events, read as the HTML standard's "event stream
/// interpretation" says (https://html.spec.whatwg.org/multipage/server-sent-events.html): a pure parser,
/// bytes in, events out, for a mount over HTTP (`Docs/WireFormat.md`, "Over HTTP").
///
/// - Lines end with CR, LF or CRLF (a CRLF split between two reads is one line end); a UTF-8 byte order
///   mark at the start of the stream is dropped.
/// - A line that starts with `:` is a comment. Otherwise the field is what comes before the first `:`
///   (the whole line when there is none), the value what comes after it, one space after the colon dropped.
/// - `data` appends the value and a LF to the event's data; `event` sets its type; `id` sets the last event
///   ID (unless the value holds a NUL); `retry` with only ASCII digits says the reconnection time. Other
///   fields are ignored.
/// - An empty line dispatches the event: the last event ID string takes the buffer's value, and an event
///   with data is handed over with its data's last LF removed and its type ("message" when none was set).
///
/// Invariants (bounded memory, whatever the input): a line is never buffered beyond `maximumLineLength`
/// bytes (a longer one is dropped up to its end and reported once as `.oversized`), and an event's data
/// never beyond `maximumLineLength` bytes (an event with more is reported as `.oversized`, its data
/// dropped).
struct EventStreamParser {
    /// What the stream said.
    enum Item: Equatable {
        /// An event dispatched: its type, and its data fields joined with LF.
        case event(type: String, data: [UInt8])
        /// A `retry` field: the reconnection time in milliseconds.
        case retry(Int)
        /// A line, or an event's data, over the limit: dropped.
        case oversized
    }

    /// The longest line, and the most data of one event, kept.
    let maximumLineLength: Int
    /// The spec's "last event ID string": the `id` of the last event dispatched (kept across `restart()`).
    private(set) var lastEventID = ""
    private var idBuffer = ""
    private var line: [UInt8] = []
    private var isDroppingLine = false
    /// The previous byte was a CR: a LF right after it ends no other line.
    private var afterCarriageReturn = false
    /// No line ended yet since the stream started: its first may begin with a byte order mark.
    private var atStreamStart = true
    private var data: [UInt8] = []
    private var isDataOversized = false
    private var eventType = ""

    /// A parser for a stream (one connection): `lastEventID` is the last event ID of the connection
    /// before, if any (what a reconnection sent as `Last-Event-ID`, and what stays until an `id` field).
    init(maximumLineLength: Int, lastEventID: String = "") {
        self.maximumLineLength = max(16, maximumLineLength)
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
    }

    /// Reads `bytes`, calling `body` with each item they complete, in order.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (Item) -> Void) {
        for byte in bytes {
            if byte == 0x0A && afterCarriageReturn {
                afterCarriageReturn = false
                continue
            }
            afterCarriageReturn = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                endLine(body)
            } else if !isDroppingLine {
                if line.count >= maximumLineLength {
                    isDroppingLine = true
                    line = []
                    body(.oversized)
                } else {
                    line.append(byte)
                }
            }
        }
    }

    private mutating func endLine(_ body: (Item) -> Void) {
        defer {
            line.removeAll(keepingCapacity: line.count <= 4096)
            isDroppingLine = false
            atStreamStart = false
        }
        guard !isDroppingLine else { return }
        var start = 0
        if atStreamStart && line.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        guard start < line.count else { return dispatch(body) }
        guard line[start] != 0x3A else { return }  // a comment
        let colon = line[start...].firstIndex(of: 0x3A)
        let field = line[start..<(colon ?? line.count)]
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count && line[valueStart] == 0x20 { valueStart += 1 }
        let value = line[valueStart...]
        switch String(decoding: field, as: UTF8.self) {
        case "data":
            guard !isDataOversized else { return }
            if data.count + value.count + 1 > maximumLineLength {
                isDataOversized = true
                data = []
            } else {
                data += value
                data.append(0x0A)
            }
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { idBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.count <= 18, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                body(.retry(Int(String(decoding: value, as: UTF8.self)) ?? 0))
            }
        default:
            break
        }
    }

    private mutating func dispatch(_ body: (Item) -> Void) {
        lastEventID = idBuffer
        defer {
            data.removeAll(keepingCapacity: data.count <= 4096)
            eventType = ""
            isDataOversized = false
        }
        if isDataOversized { return body(.oversized) }
        guard !data.isEmpty else { return }
        data.removeLast()
        body(.event(type: eventType.isEmpty ? "message" : eventType, data: data))
    }
}
