import ProgressTree
import ProgressTreePlatform

/// Reading a line of the wire format: the other half of `ProgressWireRecord.line`, for readers.
extension ProgressWireRecord {
    /// Reads one line (without its newline).
    ///
    /// Required: `v`, `id`, `state`, `completed`, `total`; every other field has a default. Unknown fields
    /// are ignored.
    /// - Throws: `ProgressWireError.unsupportedVersion` for another major version, `.malformed` for
    ///   anything that is not such an object, `.outOfRange` for values no node can have (an id below 1, a
    ///   negative pending count, a fraction outside 0...1, a count of the wrong type).
    public init(line: some Collection<UInt8>) throws(ProgressWireError) {
        let bytes = Array(line)
        let result = bytes.withUnsafeBytes { raw in Result { () throws(ProgressWireError) in try Self(bytes: raw) } }
        self = try result.get()
    }

    /// Reads one line (without its newline) from where it was read, without a copy.
    package init(bytes: UnsafeRawBufferPointer) throws(ProgressWireError) {
        // The members this version defines, by field; others are skipped (a name repeated keeps its last
        // value). No dictionary, no array and no string per name: a mount reads thousands of lines a second.
        var members = WireMembers()
        do {
            try WireJSON.forEachMember(of: bytes) { (name, value) throws(WireJSON.Failure) in
                if let field = WireField(name: name) { members[field] = value }
            }
        } catch {
            throw .malformed(error.message)
        }
        try self.init(members: members)
    }

    /// The record a line with these members stands for (what `init(bytes:)` does once it has read them).
    init(members: borrowing WireMembers) throws(ProgressWireError) {
        func value(_ key: WireField) -> WireValue? { members[key] }
        func integer(_ key: WireField) throws(ProgressWireError) -> Int64? {
            switch value(key) {
            case nil, .null?: return nil
            case .number(_, let integer?)?: return integer
            default: throw .outOfRange(key.name)
            }
        }
        func string(_ key: WireField) throws(ProgressWireError) -> String? {
            switch value(key) {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .outOfRange(key.name)
            }
        }
        func bool(_ key: WireField, default fallback: Bool) throws(ProgressWireError) -> Bool {
            switch value(key) {
            case nil, .null?: return fallback
            case .bool(let flag)?: return flag
            default: throw .outOfRange(key.name)
            }
        }
        func double(_ key: WireField) throws(ProgressWireError) -> Double? {
            switch value(key) {
            case nil, .null?: return nil
            case .number(let number, _)?: return number
            default: throw .outOfRange(key.name)
            }
        }
        func int(_ key: WireField) throws(ProgressWireError) -> Int? {
            guard let number = try integer(key) else { return nil }
            guard let small = Int(exactly: number) else { throw .outOfRange(key.name) }
            return small
        }
        guard let version = try integer(.version) else { throw .malformed("no version (\"v\")") }
        guard version == Int64(Self.version) else { throw .unsupportedVersion(Int(clamping: version)) }
        guard let id = try int(.id), id >= 1 else { throw .outOfRange("id") }
        let parent = try int(.parent)
        if let parent, parent < 1 || parent == id { throw .outOfRange("parent") }
        guard let stateName = try string(.state) else { throw .malformed("no state") }
        guard let state = State(rawValue: stateName) else { throw .outOfRange("state") }
        guard let completed = try integer(.completed) else { throw .malformed("no completed count") }
        guard let total = try integer(.total) else { throw .malformed("no total") }
        let pending = try integer(.pending) ?? 0
        guard pending >= 0 else { throw .outOfRange("pending") }
        self.init(
            id: id, parentID: parent, pendingUnitCount: pending, totalUnitCount: total,
            completedUnitCount: completed, state: state)
        if let fraction = try double(.fraction) {
            guard (0...1).contains(fraction) else { throw .outOfRange("fraction") }
            fractionCompleted = fraction
        }
        isIndeterminate = try bool(.indeterminate, default: isIndeterminate)
        failureReason = try string(.reason)
        label = try string(.name).flatMap { $0.isEmpty ? nil : $0 }
        localizedDescription = try string(.description)
        localizedAdditionalDescription = try string(.additionalDescription)
        kind = try string(.kind)
        fileOperationKind = try string(.fileOperationKind)
        fileURL = try string(.fileURL)
        fileTotalCount = try int(.fileTotalCount)
        fileCompletedCount = try int(.fileCompletedCount)
        throughput = try int(.throughput)
        estimatedTimeRemaining = try double(.timeRemaining)
        failedBelow = max(0, try int(.failedBelow) ?? 0)
        cancelledBelow = max(0, try int(.cancelledBelow) ?? 0)
        isCancellable = try bool(.cancellable, default: true)
        isPausable = try bool(.pausable, default: false)
        time = try double(.time)
        switch value(.properties) {
        case nil, .null?: break
        case .properties(let values, let skipped)?:
            properties = values
            skippedProperties = skipped
        default: skippedProperties = 1  // not an object: left out, the rest of the line kept
        }
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

/// A reader's request that its publisher walk at most once every so often: the `interval` command
/// (`Docs/WireFormat.md`, "Commands"), `{"v":1,"command":"interval","seconds":0.2}`. `0` withdraws the
/// request (the publisher's own interval again). A writer that does not know the command ignores it, as it
/// ignores every unknown command.
struct WireIntervalRequest: Equatable {
    /// The longest interval a publisher takes from a request: a reader cannot stop its walks.
    static let maximumMilliseconds = 10_000

    /// The interval asked for, in milliseconds (0: none), within 0…`maximumMilliseconds`.
    let milliseconds: Int

    init(milliseconds: Int) {
        self.milliseconds = min(max(milliseconds, 0), Self.maximumMilliseconds)
    }

    /// The command's line, without the newline: the seconds with up to three decimals.
    var line: String {
        let whole = milliseconds / 1000
        let thousandths = milliseconds % 1000
        var seconds = "\(whole)"
        if thousandths != 0 {
            var decimals = String(thousandths)
            decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
            while decimals.hasSuffix("0") { decimals.removeLast() }
            seconds += "." + decimals
        }
        return "{\"v\":\(ProgressWireRecord.version),\"command\":\"interval\",\"seconds\":\(seconds)}"
    }

    /// Reads an `interval` command line; `nil` when it is not one. Seconds beyond the maximum are taken as
    /// the maximum; a negative, missing or non-numeric `seconds` makes the line no command.
    static func parse(_ line: some Collection<UInt8>) -> WireIntervalRequest? {
        guard let members = try? WireJSON.object(Array(line)),
            case .number(_, let version?)? = members["v"], version == Int64(ProgressWireRecord.version),
            case .string("interval")? = members["command"],
            case .number(let seconds, _)? = members["seconds"], seconds.isFinite, seconds >= 0
        else { return nil }
        let milliseconds = min(seconds, Double(maximumMilliseconds) / 1000) * 1000
        return WireIntervalRequest(milliseconds: Int(milliseconds.rounded()))
    }
}

/// The last value of each member of a line that this version of the format defines, held inline (no
/// allocation).
struct WireMembers {
    private var version, time, id, parent, pending, name, completed, total, fraction, state: WireValue?
    private var indeterminate, throughput, timeRemaining, reason, failedBelow, cancelledBelow: WireValue?
    private var description, additionalDescription, kind, fileOperationKind, fileURL, fileTotalCount: WireValue?
    private var fileCompletedCount, cancellable, pausable, properties: WireValue?

    subscript(field: WireField) -> WireValue? {
        get {
            switch field {
            case .version: version
            case .time: time
            case .id: id
            case .parent: parent
            case .pending: pending
            case .name: name
            case .completed: completed
            case .total: total
            case .fraction: fraction
            case .state: state
            case .indeterminate: indeterminate
            case .throughput: throughput
            case .timeRemaining: timeRemaining
            case .reason: reason
            case .failedBelow: failedBelow
            case .cancelledBelow: cancelledBelow
            case .description: description
            case .additionalDescription: additionalDescription
            case .kind: kind
            case .fileOperationKind: fileOperationKind
            case .fileURL: fileURL
            case .fileTotalCount: fileTotalCount
            case .fileCompletedCount: fileCompletedCount
            case .cancellable: cancellable
            case .pausable: pausable
            case .properties: properties
            }
        }
        set {
            switch field {
            case .version: version = newValue
            case .time: time = newValue
            case .id: id = newValue
            case .parent: parent = newValue
            case .pending: pending = newValue
            case .name: name = newValue
            case .completed: completed = newValue
            case .total: total = newValue
            case .fraction: fraction = newValue
            case .state: state = newValue
            case .indeterminate: indeterminate = newValue
            case .throughput: throughput = newValue
            case .timeRemaining: timeRemaining = newValue
            case .reason: reason = newValue
            case .failedBelow: failedBelow = newValue
            case .cancelledBelow: cancelledBelow = newValue
            case .description: description = newValue
            case .additionalDescription: additionalDescription = newValue
            case .kind: kind = newValue
            case .fileOperationKind: fileOperationKind = newValue
            case .fileURL: fileURL = newValue
            case .fileTotalCount: fileTotalCount = newValue
            case .fileCompletedCount: fileCompletedCount = newValue
            case .cancellable: cancellable = newValue
            case .pausable: pausable = newValue
            case .properties: properties = newValue
            }
        }
    }
}

/// The members of a line that this version of the format defines.
enum WireField: Int, CaseIterable {
    case version, time, id, parent, pending, name, completed, total, fraction, state, indeterminate, throughput
    case timeRemaining, reason, failedBelow, cancelledBelow, description, additionalDescription, kind
    case fileOperationKind, fileURL, fileTotalCount, fileCompletedCount, cancellable, pausable, properties

    /// The member's name in a line.
    var name: String {
        switch self {
        case .version: "v"
        case .time: "time"
        case .id: "id"
        case .parent: "parent"
        case .pending: "pending"
        case .name: "name"
        case .completed: "completed"
        case .total: "total"
        case .fraction: "fraction"
        case .state: "state"
        case .indeterminate: "indeterminate"
        case .throughput: "throughput"
        case .timeRemaining: "timeRemaining"
        case .reason: "reason"
        case .failedBelow: "failedBelow"
        case .cancelledBelow: "cancelledBelow"
        case .description: "description"
        case .additionalDescription: "additionalDescription"
        case .kind: "kind"
        case .fileOperationKind: "fileOperationKind"
        case .fileURL: "fileURL"
        case .fileTotalCount: "fileTotalCount"
        case .fileCompletedCount: "fileCompletedCount"
        case .cancellable: "cancellable"
        case .pausable: "pausable"
        case .properties: "properties"
        }
    }

    /// The field named by the (unescaped) bytes `name`, if this version defines one: a switch on the
    /// length, then at most three names compared (a mount looks up 25 names a line).
    init?(name: UnsafeRawBufferPointer) {
        func named(_ literal: StaticString, _ field: WireField) -> WireField? {
            let spelled = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
            return spelled.hasSameBytes(as: name) ? field : nil
        }
        let found: WireField? =
            switch name.count {
            case 1: named("v", .version)
            case 2: named("id", .id)
            case 4: named("time", .time) ?? named("name", .name) ?? named("kind", .kind)
            case 5: named("total", .total) ?? named("state", .state)
            case 6: named("parent", .parent) ?? named("reason", .reason)
            case 7: named("pending", .pending) ?? named("fileURL", .fileURL)
            case 8: named("fraction", .fraction) ?? named("pausable", .pausable)
            case 9: named("completed", .completed)
            case 10: named("throughput", .throughput) ?? named("properties", .properties)
            case 11:
                named("failedBelow", .failedBelow) ?? named("description", .description)
                    ?? named("cancellable", .cancellable)
            case 13: named("indeterminate", .indeterminate) ?? named("timeRemaining", .timeRemaining)
            case 14: named("cancelledBelow", .cancelledBelow) ?? named("fileTotalCount", .fileTotalCount)
            case 17: named("fileOperationKind", .fileOperationKind)
            case 18: named("fileCompletedCount", .fileCompletedCount)
            case 21: named("additionalDescription", .additionalDescription)
            default: nil
            }
        guard let found else { return nil }
        self = found
    }
}
