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
