import Dispatch

// Activity while loading: work of unknown size, shown as an indeterminate node while it runs.

extension ProgressNode {
    /// Runs `work`, whose size is unknown, as this node's activity, and returns its result to the caller.
    ///
    /// While `work` runs the node is indeterminate (`totalUnitCount` -1, `completedUnitCount` 0), which a user
    /// interface shows as a spinner or an indeterminate bar; when the activity ends the node is finished,
    /// cancelled or failed, and the indicator goes away.
    ///
    /// ```swift
    /// let loading = ProgressNode.discreteProgress(totalUnitCount: 0)   // the view observes it
    /// let rows = try await loading.performActivity { try await service.fetchRows() }
    /// ```
    ///
    /// - Returns normally: the node is **finished** (1 of 1) before the result is returned, on the caller's
    ///   actor (the function is `nonisolated`; the result is `Sendable` and comes back to the caller's
    ///   isolation like any `await`).
    /// - `work` throws: the error is rethrown. The activity ends: the node is **cancelled** if the error is a
    ///   `CancellationError` or the node was cancelled; otherwise it **fails** with the error (`fail(_:)`),
    ///   so an interface shows the failure, never a success or a cancellation.
    /// - Cancellation: `work` runs in a task linked to the node both ways (`withCancellationLink(_:)`).
    ///   Cancelling the node (or an ancestor) cancels that task; cancelling the calling task cancels the node.
    ///   If the node is cancelled when `work` returns, its result is discarded and `CancellationError` is
    ///   thrown; if the node is cancelled before the call, `work` does not run.
    ///
    /// The node's counts are overwritten: use a node that stands for this work only (it may be attached to a
    /// parent, which receives its pending count when the activity finishes).
    ///
    /// ## Thread safety
    /// Call it from any task. Another thread may observe or cancel the node meanwhile.
    ///
    /// - Complexity: O(1) besides `work`, plus one unstructured task.
    /// - Throws: what `work` throws, or `CancellationError`.
    public func performActivity<Value: Sendable>(
        _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        if isCancelled { throw CancellationError() }
        beginActivity()
        let result: Result<Value, any Error>
        do {
            result = .success(try await withCancellationLink(work))
        } catch {
            result = .failure(error)
        }
        return try endActivity(result).get()
    }

    /// Runs `work`, whose size is unknown, on `workQueue` as this node's activity, and delivers its result to
    /// `completion` on `completionQueue`.
    ///
    /// The node becomes indeterminate (`totalUnitCount` -1, `completedUnitCount` 0) before this function
    /// returns, and stays so while `work` runs. On `completionQueue`, just before `completion` is called, the
    /// activity ends: `completion` sees the node finished, cancelled or failed.
    ///
    /// ```swift
    /// let loading = ProgressNode.discreteProgress(totalUnitCount: 0)   // the view observes it
    /// loading.performActivity(on: .global(), deliveringOn: .main) {
    ///     try database.fetchRows()
    /// } completion: { result in
    ///     show(result)
    /// }
    /// ```
    ///
    /// - `.success`: `work` returned and the node was not cancelled; the node is **finished** (1 of 1).
    /// - `.failure(CancellationError())`: the node was cancelled before `work` started (then `work` does not
    ///   run) or by the time it returned (its result is discarded); the node is **cancelled**.
    /// - `.failure(error)` for an error thrown by `work`: the node is **cancelled** if `error` is a
    ///   `CancellationError` or the node was cancelled, and **failed** with `error` otherwise.
    ///
    /// A closure cannot be stopped from outside: to make `work` cancellable, check `isCancelled` or call
    /// `checkCancellation()` on this node inside it.
    ///
    /// ## Thread safety
    /// Call it from any thread. `work` runs once on `workQueue`, `completion` once on `completionQueue`.
    ///
    /// - Complexity: O(1) besides `work`, plus two dispatches.
    public func performActivity<Value: Sendable>(
        on workQueue: DispatchQueue,
        deliveringOn completionQueue: DispatchQueue,
        _ work: @escaping @Sendable () throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        beginActivity()
        workQueue.async {
            let result: Result<Value, any Error>
            if self.isCancelled {
                result = .failure(CancellationError())
            } else {
                do { result = .success(try work()) } catch { result = .failure(error) }
            }
            completionQueue.async {
                completion(self.endActivity(result))
            }
        }
    }

    /// Makes the node indeterminate: -1 total, 0 completed.
    private func beginActivity() {
        totalUnitCount = -1
        completedUnitCount = 0
    }

    /// Ends the activity for the outcome of the work and returns the outcome to deliver: finished on success
    /// (unless cancelled meanwhile, which turns it into a `CancellationError`), cancelled on cancellation,
    /// failed on other errors.
    private func endActivity<Value>(_ result: Result<Value, any Error>) -> Result<Value, any Error> {
        switch result {
        case .success where isCancelled:
            return .failure(CancellationError())
        case .success:
            // 1 of 1, completed first, so the node goes from indeterminate to finished without showing 0 of 1.
            completedUnitCount = 1
            totalUnitCount = 1
            return result
        case .failure(let error):
            if error is CancellationError || isCancelled {
                cancel()
            } else {
                fail(error)
            }
            return result
        }
    }
}
