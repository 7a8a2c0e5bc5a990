/// One line of the ProgressTree wire format (`Docs/WireFormat.md`): an absolute snapshot of one node.
///
/// Every line stands alone: it carries the whole state of its node, never a change, so a reader that
/// keeps the last line of each `id` has the tree whatever lines it lost, got twice or got out of order
/// (a line older than one already applied only delays the newer state until the next line of that node).
///
/// ```
/// {"v":1,"id":2,"parent":1,"pending":1,"name":"IMG_0001.jpg","completed":4500000,"total":9000000,
///  "fraction":0.5,"state":"running",...}
/// ```
///
/// `--progress json` writes these lines, and `ProgressPublisher` writes them for `ProgressNode.mount`.
public struct ProgressWireRecord: Sendable, Equatable {
    /// The major version this library writes and reads. A line with another major version is an error
    /// (`ProgressWireError.unsupportedVersion`); fields this version does not know are ignored.
    public static let version = 1

    /// The state of a node.
    public enum State: String, Sendable, CaseIterable {
        /// At work.
        case running
        /// Paused (directly or through an ancestor).
        case paused
        /// Cancelled: final.
        case cancelled
        /// Failed, with a `failureReason`: final.
        case failed
        /// Finished: final.
        case finished

        /// Whether the node is done for good: finished, cancelled or failed.
        public var isFinal: Bool { self == .cancelled || self == .failed || self == .finished }
    }

    /// The node's id, at least 1, stable for the life of the stream. The root of a stream is the line
    /// without a parent.
    public var id: Int
    /// The parent's id; `nil` for the root of the stream.
    public var parentID: Int?
    /// The share of the parent's units this node stands for (0 for the root).
    public var pendingUnitCount: Int64
    /// `ProgressNode.totalUnitCount`.
    public var totalUnitCount: Int64
    /// `ProgressNode.completedUnitCount` (including the pending units of children that finished).
    public var completedUnitCount: Int64
    /// `ProgressNode.fractionCompleted`, 0...1.
    public var fractionCompleted: Double
    /// `ProgressNode.isIndeterminate` (never `true` once finished).
    public var isIndeterminate: Bool
    /// The node's state.
    public var state: State
    /// Why a failed node failed; `nil` unless `state` is `.failed`.
    public var failureReason: String?
    /// What a display labels the node with (a description set by the user, or a file node's default).
    public var label: String?
    /// `localizedDescription` when set by the user (not the default, which a reader derives itself).
    public var localizedDescription: String?
    /// `localizedAdditionalDescription` when set by the user.
    public var localizedAdditionalDescription: String?
    /// `ProgressNode.kind`'s raw value.
    public var kind: String?
    /// `fileOperationKind`'s raw value.
    public var fileOperationKind: String?
    /// `fileURL`, as a URL string.
    public var fileURL: String?
    /// `fileTotalCount`, when set.
    public var fileTotalCount: Int?
    /// `fileCompletedCount`, when set.
    public var fileCompletedCount: Int?
    /// Bytes (units) per second, set or estimated.
    public var throughput: Int?
    /// Seconds remaining, set or estimated.
    public var estimatedTimeRemaining: Double?
    /// `descendantOutcomes.failedCount`: how many nodes below failed.
    public var failedBelow = 0
    /// `descendantOutcomes.cancelledCount`: how many nodes below were cancelled.
    public var cancelledBelow = 0
    /// `isCancellable`: whether a user interface should offer to cancel.
    public var isCancellable = true
    /// `isPausable`: whether a user interface should offer to pause.
    public var isPausable = false
    /// Seconds since the writer started; informative only.
    public var time: Double?
    /// The node's own values of its `WireProgressProperty` properties, by `wireName` (`"properties"`, an
    /// addition to version 1; `Docs/WireFormat.md`, "Properties"). Empty when it set none: the line then
    /// has no `properties` member at all. A value that is not `ProgressWireValue.isCrossable` is not
    /// written.
    public var properties: [String: ProgressWireValue] = [:]
    /// How many property values were left out of `properties`, not part of the line: when the record was
    /// read from a node, the values it set that cannot cross (not crossable, or an empty `wireName`); when
    /// read from a line, a `properties` member that is not an object (1) or the entries of it that are not
    /// crossable values (`null`, an object, an array of arrays).
    public var skippedProperties = 0

    /// A record of a running node with the given counts and nothing else set.
    public init(
        id: Int, parentID: Int?, pendingUnitCount: Int64 = 0, totalUnitCount: Int64, completedUnitCount: Int64,
        state: State = .running
    ) {
        self.id = id
        self.parentID = parentID
        self.pendingUnitCount = pendingUnitCount
        self.totalUnitCount = totalUnitCount
        self.completedUnitCount = completedUnitCount
        self.fractionCompleted =
            totalUnitCount > 0 ? min(1, max(0, Double(completedUnitCount) / Double(totalUnitCount))) : 0
        self.isIndeterminate = totalUnitCount < 0 || completedUnitCount < 0
        self.state = state
    }

    /// The line, without its newline: one JSON object, keys in a fixed order, strings escaped (RFC 8259).
    public var line: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        appendLine(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `line`'s bytes (without a newline) to `out`: no string is made for a member, except the
    /// digits of a number with a fraction.
    package func appendLine(to out: inout [UInt8]) {
        var writer = LineWriter(out: out)
        out = []
        writer.raw("{\"v\":")
        writer.integer(Int64(Self.version))
        writer.number("time", time)
        writer.integer("id", Int64(id))
        writer.integer("parent", parentID.map(Int64.init))
        writer.integer("pending", pendingUnitCount)
        writer.string("name", label ?? "")
        writer.integer("completed", completedUnitCount)
        writer.integer("total", totalUnitCount)
        writer.number("fraction", fractionCompleted)
        writer.string("state", state.rawValue)
        writer.bool("indeterminate", isIndeterminate)
        writer.integer("throughput", throughput.map(Int64.init))
        writer.number("timeRemaining", estimatedTimeRemaining)
        writer.string("reason", failureReason)
        writer.integer("failedBelow", Int64(failedBelow))
        writer.integer("cancelledBelow", Int64(cancelledBelow))
        writer.string("description", localizedDescription)
        writer.string("additionalDescription", localizedAdditionalDescription)
        writer.string("kind", kind)
        writer.string("fileOperationKind", fileOperationKind)
        writer.string("fileURL", fileURL)
        writer.integer("fileTotalCount", fileTotalCount.map(Int64.init))
        writer.integer("fileCompletedCount", fileCompletedCount.map(Int64.init))
        writer.bool("cancellable", isCancellable)
        writer.bool("pausable", isPausable)
        if !properties.isEmpty { appendProperties(to: &writer.out) }
        writer.raw("}")
        out = writer.out
    }

    /// Whether `other`'s line is this record's, without writing either.
    package func writesSameLine(as other: ProgressWireRecord) -> Bool {
        asWritten == other.asWritten
    }

    /// The record as its line has it: numbers rounded to 6 decimals (one not finite, written `null`, as
    /// `nil`, or as infinity for the fraction), a missing name as the empty one, no count of skipped values.
    private var asWritten: ProgressWireRecord {
        var record = self
        record.label = label ?? ""
        record.fractionCompleted = Self.writtenNumber(fractionCompleted) ?? .infinity
        record.time = time.flatMap(Self.writtenNumber)
        record.estimatedTimeRemaining = estimatedTimeRemaining.flatMap(Self.writtenNumber)
        record.skippedProperties = 0
        return record
    }

    /// `,"properties":{…}`: the crossable values, by name in ascending order (so that equal records write
    /// equal lines); nothing when none is crossable.
    private func appendProperties(to out: inout [UInt8]) {
        var first = true
        for name in properties.keys.sorted() {
            guard let value = properties[name], value.isCrossable else { continue }
            out.append(contentsOf: (first ? ",\"properties\":{" : ",").utf8)
            first = false
            out.append(contentsOf: Self.jsonString(name).utf8)
            out.append(UInt8(ascii: ":"))
            value.appendJSON(to: &out)
        }
        if !first { out.append(UInt8(ascii: "}")) }
    }

    /// A finite number as a line writes it: rounded to 6 decimals; `nil` for one not finite (`null`).
    private static func writtenNumber(_ value: Double) -> Double? {
        value.isFinite ? (value * 1_000_000).rounded() / 1_000_000 : nil
    }

    /// Writes the members of a line into bytes: numbers as integers without a fraction, others rounded to 6
    /// decimals, `null` if not finite; strings escaped as RFC 8259 asks (quotes, backslashes and every
    /// control character).
    private struct LineWriter {
        var out: [UInt8]

        mutating func raw(_ text: StaticString) {
            text.withUTF8Buffer { out.append(contentsOf: $0) }
        }

        /// `,"name":`
        private mutating func key(_ name: StaticString) {
            raw(",\"")
            raw(name)
            raw("\":")
        }

        mutating func bool(_ name: StaticString, _ value: Bool) {
            key(name)
            raw(value ? "true" : "false")
        }

        mutating func integer(_ name: StaticString, _ value: Int64?) {
            key(name)
            integer(value)
        }

        mutating func number(_ name: StaticString, _ value: Double?) {
            key(name)
            guard let value, let rounded = ProgressWireRecord.writtenNumber(value) else { return raw("null") }
            if rounded == rounded.rounded() && abs(rounded) < 1e15 {
                integer(Int64(rounded))
            } else {
                out.append(contentsOf: rounded.description.utf8)
            }
        }

        mutating func string(_ name: StaticString, _ text: String?) {
            key(name)
            string(text)
        }

        mutating func integer(_ value: Int64?) {
            guard let value else { return raw("null") }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            // The digits appended lowest first, then put in order in place.
            let first = out.count
            var magnitude = value.magnitude
            repeat {
                out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            out[first...].reverse()
        }

        /// A JSON string, or `null`.
        mutating func string(_ text: String?) {
            guard var text else { return raw("null") }
            out.append(UInt8(ascii: "\""))
            text.withUTF8 { bytes in
                var run = 0  // start of the bytes not yet copied
                for (index, byte) in bytes.enumerated()
                where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    out.append(contentsOf: bytes[run..<index])
                    run = index + 1
                    out.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                    case 0x0A: out.append(UInt8(ascii: "n"))
                    case 0x0D: out.append(UInt8(ascii: "r"))
                    case 0x09: out.append(UInt8(ascii: "t"))
                    default:
                        let hex: [UInt8] = Array("0123456789abcdef".utf8)
                        out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                        out.append(hex[Int(byte >> 4)])
                        out.append(hex[Int(byte & 0xF)])
                    }
                }
                out.append(contentsOf: bytes[run...])
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    /// A JSON string literal (RFC 8259 escaping: quotes, backslashes and every control character).
    public static func jsonString(_ text: String) -> String {
        var writer = LineWriter(out: [])
        writer.string(text)
        return String(decoding: writer.out, as: UTF8.self)
    }
}
