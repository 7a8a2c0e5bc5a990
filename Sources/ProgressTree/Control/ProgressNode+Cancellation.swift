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

    /// Cancels this node and every node below it that it reaches: the attached nodes, including children
    /// attached later, and the work still attached below a child that finished.
    ///
    /// Cancellation flows down, never up, and is permanent: later `pause()` and `resume()` do nothing.
    /// A final node is not cancelled itself (the first final outcome stays): not a failed node, nor a
    /// finished one, nor one its parent holds after it finished into it (see `Docs/Cancellation.md`,
    /// "Through finished nodes"); the cancellation still reaches the nodes below it, and children
    /// attached to a finished node it passed through are cancelled as they attach. Each ancestor counts
    /// the nodes cancelled in `descendantOutcomes`. Counts and `fractionCompleted` stay as they were (a
    /// user interface can show "cancelled at 42%"). Calling it again does nothing.
    ///
    /// Effects, after the whole subtree is marked and outside every lock of the library, on the calling
    /// thread: tasks suspended in `checkpoint()` resume by throwing `CancellationError`, then each newly
    /// cancelled node's `cancellationHandler` runs and its linked tasks are cancelled, parent before
    /// children. A handler may use any node, including cancelling or pausing others.
    ///
    /// - Complexity: O(nodes reached in the subtree), iterative.
    public func cancel() {
        cancel(fromAbove: false)
    }

    /// `cancel()`, or with `fromAbove`, as its parent's cancellation would reach this node: a node held by
    /// its parent is final then, and a node out of its parent's reach is not touched. `byFailure`: the
    /// parent's cancellation is a failure's (`ControlFlags.cancelsBelowByFailure`).
    func cancel(fromAbove: Bool, byFailure: Bool = false) {
        var effects = ControlTransitionEffects()
        // Marks the subtree and counts it in its own nodes' outcomes, then in the ancestors' (see
        // `ProgressNode+Failure.swift`); all before the effects, so a handler sees the counts.
        let (cancelled, parent) = cancelSubtrees(
            [self], rootsFromAbove: fromAbove, byFailure: byFailure, effects: &effects)
        if cancelled > 0 {
            Self.recordOutcomes(from: parent, failed: 0, cancelled: cancelled, byFailure: byFailure, firstFailure: nil)
            // Cancelled on its own: its parent goes on, and leaves its undone share out of its estimate.
            if !fromAbove, let parent {
                parent.state.withLock { $0.control.outcomes.cancelledChildren.append(CancelledChild(node: self)) }
            }
        }
        effects.perform(waitersThrow: true)
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
        get { state.withLock { $0.control.cancellation.handler } }
        set {
            if setHandler(\.cancellation, newValue, runsAtOnceIf: .cancelled), let newValue { newValue() }
        }
    }

    /// Throws `CancellationError` if this node is cancelled or failed (`fail(_:)`): a checkpoint for
    /// synchronous loops.
    ///
    /// - Complexity: O(1), one atomic load.
    public func checkCancellation() throws(CancellationError) {
        if !currentControlFlags.isDisjoint(with: [.cancelled, .failed]) { throw CancellationError() }
    }
}
