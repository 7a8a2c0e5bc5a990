/// How far down a control transition goes (see `applyControlTransition`).
enum ControlTransitionScope {
    /// Every attached node below (`cancel()`).
    case always
    /// Only below nodes that pause the nodes below them (`pause()`): paused, or passed through by a pause.
    case whilePaused
    /// Only below nodes that do not (`resume()`).
    case whileRunning

    /// Whether the transition goes on below `lister`, the node that listed the child it would visit next
    /// (its flags are loaded only for a rule that depends on them).
    func holds(below lister: ProgressNode) -> Bool {
        switch self {
        case .always: true
        case .whilePaused: lister.currentControlFlags.pausesBelow
        case .whileRunning: !lister.currentControlFlags.pausesBelow
        }
    }
}
