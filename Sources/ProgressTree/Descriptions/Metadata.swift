/// The descriptive data of a node (user info, kind, description overrides), guarded by the node's lock.
struct Metadata {
    var userInfo: [ProgressNode.UserInfoKey: any Sendable] = [:]
}

extension ProgressNode {
    /// A key of `userInfo`. The keys Foundation defines are provided as constants.
    public struct UserInfoKey: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
    }
}
