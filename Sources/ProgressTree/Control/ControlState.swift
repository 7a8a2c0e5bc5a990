/// The cancellation and pausing bits of a node, kept in an atomic so that hot loops can check them
/// without a lock.
struct ControlFlags: OptionSet, Sendable {
    let rawValue: UInt8
    static let cancelled = ControlFlags(rawValue: 1 << 0)
    static let paused = ControlFlags(rawValue: 1 << 1)
}

/// The handlers and advisory flags of a node, guarded by the node's lock.
struct ControlState {
    var isCancellable = true
    var isPausable = false
}

extension ProgressNode {
    /// Applies a parent's cancelled or paused state to a newly attached child.
    func inheritControlState(_ flags: ControlFlags) {
    }
}
