// The two-way bridge between a node and the Swift `Task` doing its work.

extension ProgressNode {
    /// Runs `operation` in a new task linked to this node both ways, and returns its result.
    ///
    /// - Cancelling this node (or an ancestor) cancels the task running `operation`, so
    ///   `Task.checkCancellation()` and cancellation-aware calls inside it stop the work.
    /// - Cancelling the calling task (or one of its parents) cancels this node, and through it the
    ///   attached nodes below it.
    ///
    /// The operation runs in an unstructured child task that inherits the caller's priority and task-local
    /// values (so `withCurrent` bindings still apply); this function awaits it, so it behaves like a
    /// structured call.
    ///
    /// ```swift
    /// try await withThrowingTaskGroup(of: Void.self) { group in
    ///     for photo in photos {
    ///         let node = ProgressNode(totalUnitCount: 100, parent: album, pendingUnitCount: 1)
    ///         group.addTask { try await node.withCancellationLink { try await download(photo, node) } }
    ///     }
    ///     try await group.waitForAll()
    /// }
    /// // elsewhere: album.cancel() stops every download.
    /// ```
    ///
    /// - Throws: what `operation` throws; typically `CancellationError` after a cancellation.
    public func withCancellationLink<Result: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let task = Task { try await operation() }
        let unlink = link(task)
        defer { unlink() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
            self.cancel()
        }
    }

    /// Creates an unstructured task running `operation`, linked to this node both ways: cancelling the node
    /// cancels the task, and cancelling the task cancels the node.
    ///
    /// Like `Task.init`, the task inherits the caller's priority and task-local values.
    @discardableResult
    public func task<Result: Sendable>(
        priority: TaskPriority? = nil,
        operation: @escaping @Sendable () async throws -> Result
    ) -> Task<Result, any Error> {
        let task = Task(priority: priority) {
            try await withTaskCancellationHandler {
                try await operation()
            } onCancel: {
                self.cancel()
            }
        }
        let unlink = link(task)
        Task { _ = await task.result; unlink() }
        return task
    }

    /// Registers `task` to be cancelled with this node; returns the unregistration. A node already
    /// cancelled cancels the task at once.
    private func link<Success, Failure>(_ task: Task<Success, Failure>) -> @Sendable () -> Void {
        let token = state.withLock { state -> Int? in
            guard !currentControlFlags.contains(.cancelled) else { return nil }
            let token = state.control.makeToken()
            state.control.linkedTaskCancellations[token] = { task.cancel() }
            return token
        }
        guard let token else {
            task.cancel()
            return {}
        }
        return { [self] in
            _ = state.withLock { $0.control.linkedTaskCancellations.removeValue(forKey: token) }
        }
    }
}
