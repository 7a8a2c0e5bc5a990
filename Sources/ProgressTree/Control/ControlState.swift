/// The handlers, advisory flags and waiters of a node, guarded by the node's lock.
struct ControlState {
    var isCancellable = true
    var isPausable = false
    var cancellation = HandlerSlot()
    var pausing = HandlerSlot()
    var resuming = HandlerSlot()
    /// Tasks linked to this node (`withCancellationLink`, `task(priority:operation:)`), cancelled with it.
    var linkedTaskCancellations: [Int: @Sendable () -> Void] = [:]
    /// Tasks suspended in `checkpoint()` while this node is paused.
    var pauseWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    /// The failure of this node and what failed or was cancelled below it (see `ProgressNode+Failure.swift`).
    var outcomes = OutcomeState()
    private var lastToken = 0

    mutating func makeToken() -> Int {
        lastToken += 1
        return lastToken
    }
}

/// A handler of a node (`cancellationHandler`, `pausingHandler`, `resumingHandler`), in its `ControlState`.
struct HandlerSlot {
    var handler: (@Sendable () -> Void)?
    /// Calls a transition has marked but not yet made (see `ControlTransitionEffects.perform`). While one
    /// is pending, setting the handler does not run it at once: the pending call runs the handler current
    /// at that moment, so a handler replaced or cleared during a transition is called once in all (the new
    /// one) or not at all (cleared), never twice.
    var pendingCalls = 0
}

/// Which handler of a node a transition calls: `\.cancellation`, `\.pausing` or `\.resuming`.
typealias ControlHandlerKind = WritableKeyPath<ControlState, HandlerSlot> & Sendable

extension ProgressNode {
    /// Ends a pending handler call of `kind`: returns the handler to call now (outside the lock).
    func takePendingHandler(_ kind: ControlHandlerKind) -> (@Sendable () -> Void)? {
        state.withLock { state in
            state.control[keyPath: kind].pendingCalls -= 1
            return state.control[keyPath: kind].handler
        }
    }

    /// Stores a handler; returns whether the setter must run it at once: the node is already in the state
    /// the handler reacts to (`flag`; `nil`: never) and no call for it is pending (a pending call will run
    /// this handler).
    ///
    /// The handler it replaces is released after the lock: it may hold the last reference to an object
    /// whose `deinit` is user code that uses this node (as in "cancel on deinit"), which must not run
    /// under the node's lock.
    func setHandler(
        _ kind: ControlHandlerKind, _ handler: (@Sendable () -> Void)?, runsAtOnceIf flag: ControlFlags?
    ) -> Bool {
        let (runsAtOnce, replaced) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            let replaced = state.control[keyPath: kind].handler
            state.control[keyPath: kind].handler = handler
            guard let flag, handler != nil else { return (false, replaced) }
            let runsAtOnce = currentControlFlags.contains(flag) && state.control[keyPath: kind].pendingCalls == 0
            return (runsAtOnce, replaced)
        }
        _ = replaced  // released here, after the lock
        return runsAtOnce
    }
}
