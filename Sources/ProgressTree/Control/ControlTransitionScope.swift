/// How far down a control transition goes (see `applyControlTransition`).
enum ControlTransitionScope {
    /// Every attached node below (`cancel()`).
    case always
    /// Only below nodes that are paused (`pause()`).
    case whilePaused
    /// Only below nodes that are not paused (`resume()`).
    case whileRunning

    func holds(for flags: ControlFlags) -> Bool {
        switch self {
        case .always: true
        case .whilePaused: flags.contains(.paused)
        case .whileRunning: !flags.contains(.paused)
        }
    }
}
