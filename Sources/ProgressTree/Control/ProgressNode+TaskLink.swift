import Synchronization
import ProgressTreePlatform

// The two-way bridge between a node and the Swift `Task` doing its work.

extension ProgressNode {
    /// Runs `operation` in a new task linked to this node both ways, and returns its result.
    ///
    /// - Cancelling this node (or an ancestor), or its failing (`fail(_:)`, on it or an ancestor), cancels
    ///   the task running `operation`, so `Task.checkCancellation()` and cancellation-aware calls inside it
    ///   stop the work.
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
        let task = Task { try await self.runLinked(operation) }
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
        // The task removes its own link when it ends: no other task awaits it for that, since awaiting a
        // task raises its priority to the waiter's and `priority` must stay as given.
        let unlinkSlot = UnlinkSlot()
        let task = Task(priority: priority) {
            defer { unlinkSlot.taskDidEnd() }
            return try await withTaskCancellationHandler {
                try await self.runLinked(operation)
            } onCancel: {
                self.cancel()
            }
        }
        unlinkSlot.linkDidStart(link(task))
        return task
    }

    /// Runs `operation` in a task linked to this node, cancelling the task first when the node is already
    /// cancelled or failed.
    ///
    /// A task linked to a node that is already cancelled never runs `operation` uncancelled. The link is
    /// registered just after the task is created (and cancels it then), but the task may start, and even
    /// end, before that; so the task checks the node itself first.
    private func runLinked<Result>(_ operation: () async throws -> Result) async throws -> Result {
        if !currentControlFlags.isDisjoint(with: [.cancelled, .failed]) { withUnsafeCurrentTask { $0?.cancel() } }
        return try await LinkedWork.$current.withValue(LinkedWork(node: self, scope: ImplicitScope.innermost())) {
            try await operation()
        }
    }

    /// The node whose work runs here, for naming it (in a log record, a diagnostic): the node made current
    /// (`current()`: `becomeCurrent`, `withCurrent`) or the node whose linked task runs this code
    /// (`withCancellationLink`, `task(priority:operation:)`), whichever was bound innermost; `nil` if none.
    ///
    /// Inside `node.withCancellationLink { … }` it is `node`, where `current()` finds nothing (a linked task
    /// does not make its node current: nodes created inside do not attach to it). To attach new nodes,
    /// `current()` is the rule.
    public static func currentWork() -> ProgressNode? {
        let scope = ImplicitScope.innermost()
        // A scope bound after the link (inside its task) is the innermost; otherwise the link is.
        if let linked = LinkedWork.current, linked.scope === scope { return linked.node }
        return scope?.node ?? LinkedWork.current?.node
    }

    /// Registers `task` to be cancelled with this node (when it is cancelled or fails); returns the
    /// unregistration. A node already cancelled or failed cancels the task at once.
    private func link<Success, Failure>(_ task: Task<Success, Failure>) -> @Sendable () -> Void {
        let token = state.withLock { state -> Int? in
            // A cancelled or failed node's work is over: a task linked now is cancelled at once.
            guard currentControlFlags.isDisjoint(with: [.cancelled, .failed]) else { return nil }
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

/// The node whose linked task runs the current code, and the implicit scope that was innermost when it
/// began (`currentWork()` tells a scope bound inside the task from one inherited).
private struct LinkedWork: Sendable {
    @TaskLocal static var current: LinkedWork?
    let node: ProgressNode
    let scope: ImplicitScope?
}

/// Removes the link of a `task(priority:operation:)` task once both the link exists and the task ended,
/// whichever comes last.
private final class UnlinkSlot: Sendable {
    private enum State {
        case waiting
        case linked(@Sendable () -> Void)
        case taskEnded
    }

    private let state = Lock(State.waiting)

    func linkDidStart(_ unlink: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .linked(unlink)
            return false
        }
        if runNow { unlink() }
    }

    func taskDidEnd() {
        let unlink = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .taskEnded }
            if case .linked(let unlink) = state { return unlink }
            return nil
        }
        unlink?()
    }
}
