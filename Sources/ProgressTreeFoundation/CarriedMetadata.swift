import Foundation
import ProgressTree

/// The metadata a node and a `Foundation.Progress` share: the kind and the six `userInfo` keys the two
/// have in common (file operation, file URL, file counts, throughput, time remaining), as values both
/// sides can hold. Read from a Progress (its `userInfo` values are `Any`: numbers arrive as `Int`,
/// `Double` or `NSNumber`, the operation as `Progress.FileOperationKind` or `String`) or from a node.
struct CarriedMetadata: Equatable, Sendable {
    var kind: String?
    var fileOperationKind: String?
    var fileURL: URL?
    var fileTotalCount: Int?
    var fileCompletedCount: Int?
    var throughput: Int?
    var estimatedTimeRemaining: Double?

    init(kind: String? = nil, fileOperationKind: String? = nil, fileURL: URL? = nil) {
        self.kind = kind
        self.fileOperationKind = fileOperationKind
        self.fileURL = fileURL
    }

    /// What `progress` carries. Reads `kind` and `userInfo`: values holding references, so on Linux a
    /// read that races with the owner writing them is unsafe (see `ProgressSampler`): read only when the
    /// counts moved.
    init(_ progress: Progress) {
        kind = progress.kind?.rawValue
        let userInfo = progress.userInfo
        fileOperationKind = Self.string(userInfo[.fileOperationKindKey])
        fileURL = Self.url(userInfo[.fileURLKey])
        fileTotalCount = Self.number(userInfo[.fileTotalCountKey]).flatMap(Self.integer)
        fileCompletedCount = Self.number(userInfo[.fileCompletedCountKey]).flatMap(Self.integer)
        throughput = Self.number(userInfo[.throughputKey]).flatMap(Self.integer)
        estimatedTimeRemaining = Self.number(userInfo[.estimatedTimeRemainingKey])
    }

    /// Writes into `node` what differs from `previous`; with no `previous` (the first time), only what is
    /// set, so that nothing the node's owner set is removed.
    func apply(to node: ProgressNode, changedFrom previous: CarriedMetadata?) {
        func changed<Value: Equatable>(_ value: KeyPath<CarriedMetadata, Value?>) -> Value?? {
            let new = self[keyPath: value]
            guard let previous else { return new.map { .some($0) } }
            return previous[keyPath: value] == new ? nil : .some(new)
        }
        if let kind = changed(\.kind) { node.kind = kind.map(ProgressNode.Kind.init(rawValue:)) }
        if let operation = changed(\.fileOperationKind) {
            node.fileOperationKind = operation.map(ProgressNode.FileOperationKind.init(rawValue:))
        }
        if let url = changed(\.fileURL) { node.fileURL = url }
        if let count = changed(\.fileTotalCount) { node.fileTotalCount = count }
        if let count = changed(\.fileCompletedCount) { node.fileCompletedCount = count }
        if let rate = changed(\.throughput) { node.throughput = rate }
        if let seconds = changed(\.estimatedTimeRemaining) { node.estimatedTimeRemaining = seconds }
    }

    /// A `userInfo` value as `ProgressNode` stores it, for a key both sides know; `nil` for another key or
    /// a value of a type the node would not read back.
    static func nodeValue(_ value: Any, forKey key: Foundation.ProgressUserInfoKey) -> (any Sendable)? {
        switch key {
        case .fileOperationKindKey: string(value).map(ProgressNode.FileOperationKind.init(rawValue:))
        case .fileURLKey: url(value)
        case .fileTotalCountKey, .fileCompletedCountKey, .throughputKey: number(value).flatMap(integer)
        case .estimatedTimeRemainingKey: number(value)
        default: nil
        }
    }

    /// A node's `userInfo` as a Progress's: the same raw keys; `FileOperationKind` values as Foundation's.
    static func foundationUserInfo(_ userInfo: [ProgressNode.UserInfoKey: any Sendable]) -> [Foundation
        .ProgressUserInfoKey: Any]
    {
        var result: [Foundation.ProgressUserInfoKey: Any] = [:]
        for (key, value) in userInfo {
            if let operation = value as? ProgressNode.FileOperationKind {
                result[Foundation.ProgressUserInfoKey(rawValue: key.rawValue)] = Progress.FileOperationKind(
                    rawValue: operation.rawValue)
            } else {
                result[Foundation.ProgressUserInfoKey(rawValue: key.rawValue)] = value
            }
        }
        return result
    }

    private static func string(_ value: Any?) -> String? {
        switch value {
        case let operation as Progress.FileOperationKind: operation.rawValue
        case let operation as ProgressNode.FileOperationKind: operation.rawValue
        case let raw as String: raw
        default: nil
        }
    }

    private static func url(_ value: Any?) -> URL? {
        switch value {
        case let url as URL: url
        case let url as NSURL: url as URL
        default: nil
        }
    }

    /// A number of any of the types Foundation's `userInfo` holds numbers as; `nil` if not finite.
    private static func number(_ value: Any?) -> Double? {
        let number: Double? =
            switch value {
            case let double as Double: double
            case let integer as Int: Double(integer)
            case let integer as Int64: Double(integer)
            case let number as NSNumber: number.doubleValue
            default: nil
            }
        return number.flatMap { $0.isFinite ? $0 : nil }
    }

    private static func integer(_ number: Double) -> Int? {
        abs(number) < 9e18 ? Int(number.rounded()) : nil
    }
}
