/// Which handler of a node a transition calls.
enum ControlHandlerKind {
    case cancellation, pausing, resuming

    /// The count of calls of this handler that a transition marked and has not made yet.
    var pendingCallsKeyPath: WritableKeyPath<ControlState, Int> {
        switch self {
        case .cancellation: \.pendingCancellationCalls
        case .pausing: \.pendingPausingCalls
        case .resuming: \.pendingResumingCalls
        }
    }

    /// The handler itself.
    var handlerKeyPath: WritableKeyPath<ControlState, (@Sendable () -> Void)?> {
        switch self {
        case .cancellation: \.cancellationHandler
        case .pausing: \.pausingHandler
        case .resuming: \.resumingHandler
        }
    }
}
