import ProgressTree

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
