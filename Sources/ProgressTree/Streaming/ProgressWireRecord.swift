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
    public var failedBelow: Int
    /// `descendantOutcomes.cancelledCount`: how many nodes below were cancelled.
    public var cancelledBelow: Int
    /// `isCancellable`: whether a user interface should offer to cancel.
    public var isCancellable: Bool
    /// `isPausable`: whether a user interface should offer to pause.
    public var isPausable: Bool
    /// Seconds since the writer started; informative only.
    public var time: Double?

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
        self.failureReason = nil
        self.failedBelow = 0
        self.cancelledBelow = 0
        self.isCancellable = true
        self.isPausable = false
    }

    /// The line, without its newline: one JSON object, keys in a fixed order, strings escaped (RFC 8259).
    public var line: String {
        var out = "{\"v\":\(Self.version)"
        func add(_ key: String, raw value: String) { out += ",\"" + key + "\":" + value }
        func add(_ key: String, _ value: String?) { add(key, raw: value.map(Self.jsonString) ?? "null") }
        func add(_ key: String, _ value: Int?) { add(key, raw: value.map { "\($0)" } ?? "null") }
        add("time", raw: time.map(Self.jsonNumber) ?? "null")
        add("id", raw: "\(id)")
        add("parent", raw: parentID.map { "\($0)" } ?? "null")
        add("pending", raw: "\(pendingUnitCount)")
        add("name", (label ?? "") as String?)
        add("completed", raw: "\(completedUnitCount)")
        add("total", raw: "\(totalUnitCount)")
        add("fraction", raw: Self.jsonNumber(fractionCompleted))
        add("state", state.rawValue as String?)
        add("indeterminate", raw: isIndeterminate ? "true" : "false")
        add("throughput", throughput)
        add("timeRemaining", raw: estimatedTimeRemaining.map(Self.jsonNumber) ?? "null")
        add("reason", failureReason)
        add("failedBelow", raw: "\(failedBelow)")
        add("cancelledBelow", raw: "\(cancelledBelow)")
        add("description", localizedDescription)
        add("additionalDescription", localizedAdditionalDescription)
        add("kind", kind)
        add("fileOperationKind", fileOperationKind)
        add("fileURL", fileURL)
        add("fileTotalCount", fileTotalCount)
        add("fileCompletedCount", fileCompletedCount)
        add("cancellable", raw: isCancellable ? "true" : "false")
        add("pausable", raw: isPausable ? "true" : "false")
        return out + "}"
    }

    /// Reads one line (without its newline).
    ///
    /// Required: `v`, `id`, `state`, `completed`, `total`; every other field has a default. Unknown fields
    /// are ignored.
    /// - Throws: `ProgressWireError.unsupportedVersion` for another major version, `.malformed` for
    ///   anything that is not such an object, `.outOfRange` for values no node can have (an id below 1, a
    ///   negative pending count, a fraction outside 0...1, a count of the wrong type).
    public init(line: some Collection<UInt8>) throws(ProgressWireError) {
        let members: [String: WireValue]
        do {
            members = try WireJSON.object(Array(line))
        } catch {
            throw .malformed(error.message)
        }
        func integer(_ key: String) throws(ProgressWireError) -> Int64? {
            switch members[key] {
            case nil, .null?: return nil
            case .number(_, let integer?)?: return integer
            default: throw .outOfRange(key)
            }
        }
        func string(_ key: String) throws(ProgressWireError) -> String? {
            switch members[key] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .outOfRange(key)
            }
        }
        func bool(_ key: String, default value: Bool) throws(ProgressWireError) -> Bool {
            switch members[key] {
            case nil, .null?: return value
            case .bool(let flag)?: return flag
            default: throw .outOfRange(key)
            }
        }
        func double(_ key: String) throws(ProgressWireError) -> Double? {
            switch members[key] {
            case nil, .null?: return nil
            case .number(let value, _)?: return value
            default: throw .outOfRange(key)
            }
        }
        func int(_ key: String) throws(ProgressWireError) -> Int? {
            guard let value = try integer(key) else { return nil }
            guard let small = Int(exactly: value) else { throw .outOfRange(key) }
            return small
        }
        guard let version = try integer("v") else { throw .malformed("no version (\"v\")") }
        guard version == Int64(Self.version) else { throw .unsupportedVersion(Int(clamping: version)) }
        guard let id = try int("id"), id >= 1 else { throw .outOfRange("id") }
        let parent = try int("parent")
        if let parent, parent < 1 || parent == id { throw .outOfRange("parent") }
        guard let stateName = try string("state") else { throw .malformed("no state") }
        guard let state = State(rawValue: stateName) else { throw .outOfRange("state") }
        guard let completed = try integer("completed") else { throw .malformed("no completed count") }
        guard let total = try integer("total") else { throw .malformed("no total") }
        let pending = try integer("pending") ?? 0
        guard pending >= 0 else { throw .outOfRange("pending") }
        self.init(id: id, parentID: parent, pendingUnitCount: pending, totalUnitCount: total,
                  completedUnitCount: completed, state: state)
        if let fraction = try double("fraction") {
            guard (0...1).contains(fraction) else { throw .outOfRange("fraction") }
            fractionCompleted = fraction
        }
        isIndeterminate = try bool("indeterminate", default: isIndeterminate)
        failureReason = try string("reason")
        label = try string("name").flatMap { $0.isEmpty ? nil : $0 }
        localizedDescription = try string("description")
        localizedAdditionalDescription = try string("additionalDescription")
        kind = try string("kind")
        fileOperationKind = try string("fileOperationKind")
        fileURL = try string("fileURL")
        fileTotalCount = try int("fileTotalCount")
        fileCompletedCount = try int("fileCompletedCount")
        throughput = try int("throughput")
        estimatedTimeRemaining = try double("timeRemaining")
        failedBelow = max(0, try int("failedBelow") ?? 0)
        cancelledBelow = max(0, try int("cancelledBelow") ?? 0)
        isCancellable = try bool("cancellable", default: true)
        isPausable = try bool("pausable", default: false)
        time = try double("time")
    }

    /// A JSON number: integers without a fraction, others rounded to 6 decimals; `null` if not finite.
    static func jsonNumber(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? "\(Int64(rounded))" : "\(rounded)"
    }

    /// A JSON string literal (RFC 8259 escaping: quotes, backslashes and every control character).
    public static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Why a line of the wire format was not accepted.
public enum ProgressWireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a JSON object of the format (or cut short).
    case malformed(String)
    /// A major version this library does not read.
    case unsupportedVersion(Int)
    /// A field with a value no node can have, or of the wrong type.
    case outOfRange(String)
    /// A line longer than the limit (`ProgressMount.maximumLineLength`).
    case oversized(Int)

    /// A sentence for logs and failure reasons.
    public var description: String {
        switch self {
        case .malformed(let why): "malformed progress line (\(why))"
        case .unsupportedVersion(let version):
            "unsupported progress wire format version \(version) (this program reads version \(ProgressWireRecord.version))"
        case .outOfRange(let field): "progress line with \(field) out of range"
        case .oversized(let length): "progress line of \(length) bytes or more is over the limit"
        }
    }
}

/// A command sent back to a publisher on its control channel (`Docs/WireFormat.md`, "Commands"):
/// `{"v":1,"command":"pause","id":3}`.
public enum ProgressWireCommand: String, Sendable, CaseIterable {
    /// `cancel()` the node.
    case cancel
    /// `pause()` the node.
    case pause
    /// `resume()` the node.
    case resume

    /// The command's line for node `id`, without the newline.
    public func line(id: Int) -> String {
        "{\"v\":\(ProgressWireRecord.version),\"command\":\"\(rawValue)\",\"id\":\(id)}"
    }

    /// Reads a command line; `nil` when it is not one (such lines are ignored by publishers).
    public static func parse(_ line: some Collection<UInt8>) -> (command: ProgressWireCommand, id: Int)? {
        guard let members = try? WireJSON.object(Array(line)),
            case .number(_, let version?)? = members["v"], version == Int64(ProgressWireRecord.version),
            case .string(let name)? = members["command"], let command = ProgressWireCommand(rawValue: name),
            case .number(_, let id64?)? = members["id"], let id = Int(exactly: id64), id >= 1
        else { return nil }
        return (command, id)
    }
}
