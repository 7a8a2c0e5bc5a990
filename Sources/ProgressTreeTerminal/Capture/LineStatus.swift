import ProgressTree

/// A line's state, as the display shows it: at work, paused, or one of the three final outcomes.
///
/// The terminal's own type: a line is captured from a node (its snapshot) or from the wire-format record a
/// failed child left behind, and the json composer writes it back as a record's state. Which state a
/// snapshot shows (a final outcome first, then paused) is decided once, by the model
/// (`ProgressWireRecord.State(_:)`).
enum LineStatus: Equatable, Sendable {
    case running, paused, cancelled, failed, finished

    /// The state `snapshot` shows.
    init(_ snapshot: ProgressNode.Snapshot) {
        self.init(ProgressWireRecord.State(snapshot))
    }

    /// The state a wire-format record gives.
    init(_ state: ProgressWireRecord.State) {
        switch state {
        case .running: self = .running
        case .paused: self = .paused
        case .cancelled: self = .cancelled
        case .failed: self = .failed
        case .finished: self = .finished
        }
    }

    /// The state written in a wire-format record (json mode).
    var wireState: ProgressWireRecord.State {
        switch self {
        case .running: .running
        case .paused: .paused
        case .cancelled: .cancelled
        case .failed: .failed
        case .finished: .finished
        }
    }
}
