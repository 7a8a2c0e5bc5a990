// Implicit composition: code that creates its own node (`ProgressNode(totalUnitCount:)`) attaches to the
// node its caller made current, without the two having to pass nodes around.
//
// Two flavours with one rule (see `ImplicitScope`): thread-local, as Foundation (`becomeCurrent`,
// `resignCurrent`, `performAsCurrent`), and task-local for Swift concurrency (`withCurrent`).

extension ProgressNode {
    /// The node made current on this thread (`becomeCurrent`) or bound to this task (`withCurrent`), the
    /// innermost if both; `nil` if none.
    ///
    /// Unlike Foundation's `Progress.current()`, it can be called from `async` code, where it sees the
    /// task's binding.
    public static func current() -> ProgressNode? {
        ImplicitScope.innermost()?.node
    }

    // MARK: Thread-local

    /// Makes this node current on this thread: the first node created on this thread by
    /// `ProgressNode(totalUnitCount:)` before `resignCurrent()` attaches to it with `pendingUnitCount`.
    ///
    /// Calls nest: each `becomeCurrent` pushes onto this thread's stack and `resignCurrent` pops it.
    /// Prefer `performAsCurrent(withPendingUnitCount:using:)`, which cannot forget to resign, and
    /// `withCurrent(pendingUnitCount:_:)` in `async` code (a task can move between threads).
    ///
    /// - Precondition: `pendingUnitCount` is not negative.
    @available(*, noasync, message: "use withCurrent(pendingUnitCount:_:) in async code")
    public func becomeCurrent(withPendingUnitCount pendingUnitCount: Int64) {
        Self.checkPendingUnitCount(pendingUnitCount, in: "becomeCurrent(withPendingUnitCount:)")
        let scope = ImplicitScope(node: self, pendingUnitCount: pendingUnitCount)
        let stack = ThreadScopeStack.current(creating: true)!
        stack.scopes.append(scope)
        stack.companionEnds.append(ImplicitScope.beginCompanion(of: scope))
    }

    /// Ends the scope begun by the matching `becomeCurrent(withPendingUnitCount:)`. If no node attached in
    /// it, its pending count is added to `completedUnitCount` now (the work it stood for is considered done).
    ///
    /// - Precondition: this node is the innermost current node of this thread.
    @available(*, noasync, message: "use withCurrent(pendingUnitCount:_:) in async code")
    public func resignCurrent() {
        guard let stack = ThreadScopeStack.current(creating: false), let scope = stack.scopes.last,
            scope.node === self
        else {
            preconditionFailure(
                "resignCurrent(): this node is not the current node of this thread; "
                    + "call it once after each becomeCurrent(withPendingUnitCount:), on the same thread")
        }
        stack.scopes.removeLast()
        stack.companionEnds.removeLast()?()
        scope.end()
    }

    /// Runs `work` with this node current on this thread for `pendingUnitCount` of its units, as
    /// `becomeCurrent` … `resignCurrent` does, resigning even when `work` throws.
    ///
    /// - Precondition: `pendingUnitCount` is not negative.
    @available(*, noasync, message: "use withCurrent(pendingUnitCount:_:) in async code")
    public func performAsCurrent<Result, Failure: Error>(
        withPendingUnitCount pendingUnitCount: Int64, using work: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        Self.checkPendingUnitCount(pendingUnitCount, in: "performAsCurrent(withPendingUnitCount:using:)")
        becomeCurrent(withPendingUnitCount: pendingUnitCount)
        defer { resignCurrent() }
        return try work()
    }

    // MARK: Task-local

    /// Runs `body` with this node bound as current for `pendingUnitCount` of its units, in this task and
    /// in the child tasks it creates.
    ///
    /// The first node created by `ProgressNode(totalUnitCount:)` anywhere in `body` (or its child tasks)
    /// attaches with the whole pending count; when concurrent tasks race, exactly one wins. If none attached
    /// by the time `body` returns or throws, the pending count is added to `completedUnitCount`.
    ///
    /// - Precondition: `pendingUnitCount` is not negative.
    public func withCurrent<Result, Failure: Error>(
        pendingUnitCount: Int64, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        Self.checkPendingUnitCount(pendingUnitCount, in: "withCurrent(pendingUnitCount:_:)")
        let scope = ImplicitScope(node: self, pendingUnitCount: pendingUnitCount)
        let endCompanion = ImplicitScope.beginCompanion(of: scope)  // the body runs on this thread only
        defer {
            endCompanion?()
            scope.end()
        }
        // The task-local's `withValue` rethrows untyped: the body's outcome crosses it as a value.
        let outcome = ImplicitScope.$taskScope.withValue(scope) { () -> Swift.Result<Result, Failure> in
            do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
        }
        return try outcome.get()
    }

    /// Runs the asynchronous `body` with this node bound as current for `pendingUnitCount` of its units,
    /// in this task and the child tasks it creates. Same rule as the synchronous overload.
    public func withCurrent<Result>(
        pendingUnitCount: Int64,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async rethrows -> Result {
        Self.checkPendingUnitCount(pendingUnitCount, in: "withCurrent(pendingUnitCount:_:)")
        let scope = ImplicitScope(node: self, pendingUnitCount: pendingUnitCount)
        defer { scope.end() }
        return try await ImplicitScope.$taskScope.withValue(scope, operation: body)
    }
}
