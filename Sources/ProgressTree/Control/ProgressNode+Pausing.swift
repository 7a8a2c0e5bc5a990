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

    /// Pauses this node and every attached node below it, including children attached later.
    ///
    /// A node already paused, cancelled, failed or finished does not change (its handler does not run), but
    /// the pause still reaches the attached nodes below it. A paused node that finishes leaves the pause
    /// as if `resume()` were called on it (its `resumingHandler` runs on the finishing thread and its
    /// checkpoints return), so a finished node is never paused. Pausing is cooperative: the work sees it
    /// through `isPaused` or by awaiting `checkpoint()`.
    ///
    /// Effects, after the subtree is marked and outside every lock, on the calling thread: each newly
    /// paused node's `pausingHandler` runs, parent before children.
    ///
    /// - Complexity: O(attached nodes in the subtree), iterative.
    public func pause() {
        applyControlTransition(waitersThrow: false, goesOnBelow: .whilePaused) { node, state, effects in
            guard node.currentControlFlags.isDisjoint(with: [.cancelled, .paused, .failed]), !node.isFinished else {
                return false
            }
            // A node is never left both finished and paused. An update that finishes it stores the count
            // and then reads the flag (a root takes no lock for that), so the counts are read again after
            // the flag is set: either this pause sees the node finished and takes the flag back, or the
            // update sees the flag and leaves the pause with `resume()`, which waits for this lock (both
            // sides sequentially consistent, see `ControlFlags.swift`). The check above keeps a node that
            // finished before from showing paused even for that moment.
            _ = node.updateControlFlags(inserting: .paused)
            if node.isFinished {
                _ = node.updateControlFlags(removing: .paused)
                return false
            }
            effects.callHandler(of: node, .pausing, state: &state.control)
            return true
        }
    }

    /// Resumes this node and every attached node below it that is paused.
    ///
    /// Nodes not paused (or cancelled) do not change. Effects, outside every lock, on the calling thread:
    /// tasks suspended in `checkpoint()` continue, then each resumed node's `resumingHandler` runs, parent
    /// before children.
    ///
    /// - Complexity: O(attached nodes in the subtree), iterative.
    public func resume() {
        applyControlTransition(waitersThrow: false, goesOnBelow: .whileRunning) { node, state, effects in
            let flags = node.currentControlFlags
            guard flags.contains(.paused), !flags.contains(.cancelled) else { return false }
            _ = node.updateControlFlags(removing: .paused)
            effects.callHandler(of: node, .resuming, state: &state.control)
            effects.waiters.append(contentsOf: state.control.pauseWaiters.values)
            state.control.pauseWaiters = [:]
            return true
        }
    }

    /// Called once each time this node becomes paused, on the thread that called `pause()`, outside every
    /// lock. Setting it on a node already paused calls it at once, on the setting thread — unless the
    /// pause is still being delivered, in which case that delivery calls it (once), as for
    /// `cancellationHandler`.
    public var pausingHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.control.pausingHandler } }
        set {
            if setHandler(.pausing, newValue, runsAtOnceIf: .paused), let newValue { newValue() }
        }
    }

    /// Called once each time this node resumes from a pause, on the thread that called `resume()`,
    /// outside every lock. The call runs the handler set at that moment.
    public var resumingHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.control.resumingHandler } }
        set { _ = setHandler(.resuming, newValue, runsAtOnceIf: nil) }
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
