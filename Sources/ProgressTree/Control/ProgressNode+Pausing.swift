extension ProgressNode {
    /// Whether a user interface should offer to pause this work. Advisory: `pause()` works regardless.
    /// Defaults to `false`, as in Foundation.
    public var isPausable: Bool {
        get { state.withLock { $0.control.isPausable } }
        set {
            state.withLock { $0.control.isPausable = newValue }
            markChanged()
        }
    }

    /// Whether this node is paused, directly or through an ancestor.
    ///
    /// - Complexity: O(1), one atomic load.
    public var isPaused: Bool {
        // Sequentially consistent: an update that finishes the node reads this after storing its count,
        // while `pause()` reads the counts after storing the flag (see `ControlFlags.swift`).
        controlFlagsOrderedWithCounts.contains(.paused)
    }

    /// Pauses this node and every node below it that it reaches: the attached nodes, including children
    /// attached later, and the work still attached below a child that finished.
    ///
    /// A final node (finished, cancelled or failed) is not paused itself, and neither is a node its parent
    /// holds after it finished into it (see `Docs/Cancellation.md`, "Through finished nodes"), but the
    /// pause goes on to the nodes attached below it. A node already paused does not change (its handler
    /// does not run), and the pause still reaches the nodes below it. A paused node that finishes leaves
    /// the pause itself (its `resumingHandler` runs on the finishing thread and its checkpoints return), so a
    /// finished node is never paused; the nodes below it stay paused until a `resume()` reaches them.
    /// Pausing is cooperative: the work sees it through `isPaused` or by awaiting `checkpoint()`.
    ///
    /// Effects, after the subtree is marked and outside every lock, on the calling thread: each newly
    /// paused node's `pausingHandler` runs, parent before children.
    ///
    /// - Complexity: O(nodes reached in the subtree), iterative.
    public func pause() {
        applyControlTransition(goesOnBelow: .whilePaused, Self.applyPause)
    }

    /// Resumes this node and every node below it that it reaches and that is paused.
    ///
    /// Nodes not paused (or cancelled) do not change; the resume goes on below each of them. Effects, outside every lock,
    /// on the calling thread: tasks suspended in `checkpoint()` continue, then each resumed node's
    /// `resumingHandler` runs, parent before children.
    ///
    /// - Complexity: O(nodes reached in the subtree), iterative.
    public func resume() {
        applyControlTransition(goesOnBelow: .whileRunning, Self.applyResume)
    }

    /// `pause()` at one node, under its lock (see `applyControlTransition`); returns whether it paused it.
    static func applyPause(
        _ node: ProgressNode, fromAbove: Bool, _ state: inout NodeState, _ effects: inout ControlTransitionEffects
    ) -> Bool {
        let flags = node.currentControlFlags
        // Checked first, so that a node that finished before never shows paused, even for a moment.
        if node.isFinalForTransitions(fromAbove: fromAbove, under: state) {
            if !flags.contains(.pausedThrough) { _ = node.updateControlFlags(inserting: .pausedThrough, under: state) }
            return false
        }
        if flags.contains(.paused) { return false }
        // A node is never left both finished and paused. An update that finishes it stores the count and
        // then reads the flag (a root takes no lock for that), so the counts are read again after the flag
        // is set: either this pause sees the node finished and takes the flag back (the node is passed
        // through instead), or the update sees the flag and leaves the pause, which waits for this lock
        // (both sides sequentially consistent, see `ControlFlags.swift`).
        _ = node.updateControlFlags(inserting: .paused, removing: .pausedThrough, under: state)
        if FractionMath.isFinished(
            completed: node.completedStorage.load(ordering: .sequentiallyConsistent),
            total: node.totalStorage.load(ordering: .sequentiallyConsistent))
        {
            _ = node.updateControlFlags(inserting: .pausedThrough, removing: .paused, under: state)
            return false
        }
        effects.callHandler(of: node, \.pausing, state: &state.control)
        return true
    }

    /// `resume()` at one node, under its lock; returns whether it resumed it.
    static func applyResume(
        _ node: ProgressNode, fromAbove: Bool, _ state: inout NodeState, _ effects: inout ControlTransitionEffects
    ) -> Bool {
        let flags = node.currentControlFlags
        if flags.contains(.pausedThrough) { _ = node.updateControlFlags(removing: .pausedThrough, under: state) }
        // A cancelled node keeps its pause for good. Any other paused node it reaches is resumed, a held one
        // included (paused by its own `pause()` after its counts fell back below its total): no node is left
        // pausing the nodes below it, so the resume goes on below every node it visits.
        guard flags.contains(.paused), !flags.contains(.cancelled) else { return false }
        _ = node.updateControlFlags(removing: .paused, under: state)
        node.releaseFromPause(&state, effects: &effects)
        return true
    }

    /// Runs what leaving a pause runs: the `resumingHandler` and the tasks waiting in `checkpoint()`.
    /// After the flag was cleared.
    func releaseFromPause(_ state: inout NodeState, effects: inout ControlTransitionEffects) {
        effects.callHandler(of: self, \.resuming, state: &state.control)
        effects.waiters.append(contentsOf: state.control.pauseWaiters.values)
        state.control.pauseWaiters = [:]
    }

    /// A finished node is not paused (`pause()` skips it): one that finishes while paused leaves the pause
    /// itself, so that its checkpoints return and its `resumingHandler` runs. The nodes attached below it
    /// keep their state: while a `resume()` can still reach them through this node (it is a root, or held by
    /// its parent), the node keeps standing for a paused node to them (`ControlFlags.pausedThrough`).
    /// One atomic load when not paused.
    @inline(__always)
    func leavePauseIfFinishedWhilePaused() {
        if isPaused { leavePauseAfterFinishing() }
    }

    @inline(never)
    private func leavePauseAfterFinishing() {
        var effects = ControlTransitionEffects()
        state.withLock { state in
            let flags = currentControlFlags
            guard flags.contains(.paused), !flags.contains(.cancelled) else { return }
            let reachable = state.link.kind == .none || isHeld
            _ = updateControlFlags(inserting: reachable ? .pausedThrough : [], removing: .paused, under: state)
            releaseFromPause(&state, effects: &effects)
            effects.changedNodes.append(self)
        }
        effects.perform(waitersThrow: false)
    }

    /// Called once each time this node becomes paused, on the thread that called `pause()`, outside every
    /// lock. Setting it on a node already paused calls it at once, on the setting thread — unless the
    /// pause is still being delivered, in which case that delivery calls it (once), as for
    /// `cancellationHandler`.
    public var pausingHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.control.pausing.handler } }
        set {
            if setHandler(\.pausing, newValue, runsAtOnceIf: .paused), let newValue { newValue() }
        }
    }

    /// Called once each time this node resumes from a pause, on the thread that called `resume()`,
    /// outside every lock. The call runs the handler set at that moment.
    public var resumingHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.control.resuming.handler } }
        set { _ = setHandler(\.resuming, newValue, runsAtOnceIf: nil) }
    }

    /// A checkpoint for long-running `async` work: returns at once while the node runs, suspends (without
    /// blocking a thread) while it is paused, and throws `CancellationError` when the node is cancelled or
    /// failed — also while suspended — or when the calling task is cancelled.
    ///
    /// ```swift
    /// for file in files {
    ///     try await progress.checkpoint()
    ///     try await copy(file)
    ///     progress.advance()
    /// }
    /// ```
    ///
    /// - Complexity: O(1) (two atomic loads) when not paused.
    public func checkpoint() async throws(CancellationError) {
        while true {
            let flags = currentControlFlags
            if !flags.isDisjoint(with: [.cancelled, .failed]) || Task.isCancelled { throw CancellationError() }
            if !flags.contains(.paused) { return }
            do { try await waitUntilResumed() } catch { throw CancellationError() }
        }
    }

    /// Suspends until `resume()` or `cancel()` (which throws), or the task is cancelled (which throws).
    /// Returns at once if the node is no longer paused when the waiter would be registered.
    private func waitUntilResumed() async throws {
        let token = state.withLock { $0.control.makeToken() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let registered = state.withLock { state -> Bool in
                    let flags = currentControlFlags
                    guard flags.contains(.paused), !flags.contains(.cancelled) else { return false }
                    state.control.pauseWaiters[token] = continuation
                    return true
                }
                if !registered {
                    continuation.resume()
                } else if Task.isCancelled {
                    removeWaiter(token)?.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            removeWaiter(token)?.resume(throwing: CancellationError())
        }
    }

    private func removeWaiter(_ token: Int) -> CheckedContinuation<Void, any Error>? {
        state.withLock { $0.control.pauseWaiters.removeValue(forKey: token) }
    }
}
