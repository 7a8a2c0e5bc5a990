/// How far down a control transition goes (see `applyControlTransition`).
enum ControlTransitionScope {
    /// Every attached node below (`cancel()`).
    case always
    /// Only below nodes that pause the nodes below them (`pause()`): paused, or passed through by a pause.
    case whilePaused
    /// Only below nodes that do not (`resume()`).
    case whileRunning

    func holds(for flags: ControlFlags) -> Bool {
        switch self {
        case .always: true
        case .whilePaused: flags.pausesBelow
        case .whileRunning: !flags.pausesBelow
        }
    }
}
