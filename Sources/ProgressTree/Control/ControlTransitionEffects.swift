/// What a control transition does once every lock is released: resume suspended tasks, then run handlers
/// and task cancellations in tree order (parent before children).
struct ControlTransitionEffects {
    var changedNodes: [ProgressNode] = []
    /// Handler calls and task cancellations, in tree order.
    var callbacks: [@Sendable () -> Void] = []
    var waiters: [CheckedContinuation<Void, any Error>] = []

    /// Marks `node` for a call of its `kind` handler. Called under `node`'s lock, with its state.
    ///
    /// The handler is read when the call is made, not here, and counted as pending until then: a handler
    /// replaced in between runs once (the new one, not also "at once" by its setter), and a handler
    /// cleared in between does not run.
    mutating func callHandler(of node: ProgressNode, _ kind: ControlHandlerKind, state: inout ControlState) {
        state[keyPath: kind].pendingCalls += 1
        callbacks.append { node.takePendingHandler(kind)?() }
    }

    /// Takes what ends with the node's work (cancelled or failed), under its lock: its linked tasks, to
    /// be cancelled, and its tasks suspended in `checkpoint()`, to throw `CancellationError`.
    mutating func endWork(of state: inout ControlState) {
        callbacks.append(contentsOf: state.linkedTaskCancellations.values)
        state.linkedTaskCancellations = [:]
        waiters.append(contentsOf: state.pauseWaiters.values)
        state.pauseWaiters = [:]
    }

    func perform(waitersThrow: Bool) {
        for node in changedNodes { node.markChanged() }
        for waiter in waiters {
            if waitersThrow { waiter.resume(throwing: CancellationError()) } else { waiter.resume() }
        }
        for callback in callbacks { callback() }
    }
}
