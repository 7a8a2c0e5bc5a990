extension ProgressNode {
    /// Whether a user interface should offer to cancel this work. Advisory: `cancel()` works regardless.
    /// Defaults to `true` (as `NSProgress` on Apple platforms; Foundation on Linux defaults to `false`).
    public var isCancellable: Bool {
        get { state.withLock { $0.control.isCancellable } }
        set {
            state.withLock { $0.control.isCancellable = newValue }
            markChanged()
        }
    }

    /// Whether this node was cancelled, directly or through an ancestor. Permanent once `true`.
    ///
    /// - Complexity: O(1), one atomic load: cheap enough to check in a tight loop.
    public var isCancelled: Bool { currentControlFlags.contains(.cancelled) }

    /// Cancels this node and every attached node below it, including children attached later.
    ///
    /// Cancellation flows down, never up, and is permanent: later `pause()` and `resume()` do nothing.
    /// Counts and `fractionCompleted` stay as they were (a user interface can show "cancelled at 42%").
    /// Calling it again does nothing.
    ///
    /// Effects, after the whole subtree is marked and outside every lock of the library, on the calling
    /// thread: tasks suspended in `checkpoint()` resume by throwing `CancellationError`, then each newly
    /// cancelled node's `cancellationHandler` runs and its linked tasks are cancelled, parent before
    /// children. A handler may use any node, including cancelling or pausing others.
    ///
    /// - Complexity: O(attached nodes in the subtree), iterative.
    public func cancel() {
        applyControlTransition(waitersThrow: true) { node, state, effects in
            guard !node.updateControlFlags(inserting: .cancelled).contains(.cancelled) else { return false }
            effects.callHandler(of: node, .cancellation, state: &state.control)
            effects.callbacks.append(contentsOf: state.control.linkedTaskCancellations.values.map { .closure($0) })
            state.control.linkedTaskCancellations = [:]
            effects.waiters.append(contentsOf: state.control.pauseWaiters.values)
            state.control.pauseWaiters = [:]
            return true
        }
    }

    /// Called once when this node is cancelled, on the thread that called `cancel()` (on this node or an
    /// ancestor), outside every lock. Setting it on a node already cancelled calls it at once, on the
    /// setting thread.
    ///
    /// The cancellation calls the handler set when it reaches this node's turn, so replacing or clearing
    /// it while a cancellation runs (from another handler or another thread) calls the new handler once,
    /// or none when cleared, never two. A handler set while this node's call is still pending is not
    /// called at once by the setter: the pending call runs it.
    public var cancellationHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.control.cancellationHandler } }
        set {
            if setHandler(.cancellation, newValue, runsAtOnceIf: .cancelled), let newValue { newValue() }
        }
    }

    /// Throws `CancellationError` if this node is cancelled: a checkpoint for synchronous loops.
    ///
    /// - Complexity: O(1), one atomic load.
    public func checkCancellation() throws(CancellationError) {
        if isCancelled { throw CancellationError() }
    }
}
