import ProgressTreePlatform
import Synchronization

/// A node made current with a pending unit count, waiting for the first node created inside it.
///
/// Shared by the thread-local flavour (`becomeCurrent`) and the task-local one (`withCurrent`), so both
/// follow one rule: the first node created while the scope is innermost claims the whole pending count;
/// if none did by the end of the scope, the scope's end claims it and credits it to the node. The claim
/// is one atomic exchange, so when concurrent tasks race for one binding exactly one wins.
package final class ImplicitScope: Sendable {
    package let node: ProgressNode
    package let pendingUnitCount: Int64
    /// When the scope began, on a process-wide clock: the innermost of a thread scope and a task scope is
    /// the one that began last.
    let order = ImplicitScope.clock.add(1, ordering: .relaxed).newValue
    private let claimed = Atomic<Bool>(false)

    private static let clock = Atomic<UInt64>(0)

    package init(node: ProgressNode, pendingUnitCount: Int64) {
        self.node = node
        self.pendingUnitCount = pendingUnitCount
    }

    /// Takes the pending count; `true` for exactly one caller.
    package func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Ends the scope: if nobody claimed the pending count, credits it to the node.
    package func end() {
        if claim() { node.advance(by: pendingUnitCount) }
    }

    // MARK: Finding the current scope

    /// The scope bound to the current task by `withCurrent(pendingUnitCount:_:)`; inherited by child tasks.
    @TaskLocal static var taskScope: ImplicitScope?

    /// The innermost scope on this thread or task, if any.
    static func innermost() -> ImplicitScope? {
        let threadScope = ThreadScopeStack.current(creating: false)?.scopes.last
        guard let taskScope else { return threadScope }
        guard let threadScope else { return taskScope }
        return threadScope.order > taskScope.order ? threadScope : taskScope
    }
}

/// The per-thread stack of scopes opened by `becomeCurrent(withPendingUnitCount:)`.
///
/// Reached through a POSIX thread-specific key; only its own thread ever touches an instance, which is why
/// it needs no lock and is not `Sendable`.
final class ThreadScopeStack {
    var scopes: [ImplicitScope] = []
    /// What each scope's companion does when the scope ends (see `ThreadScopeCompanion`), in step with `scopes`.
    var companionEnds: [(() -> Void)?] = []

    static func current(creating: Bool) -> ThreadScopeStack? {
        if let stack = threadScopeStacks.current { return stack }
        guard creating else { return nil }
        let stack = ThreadScopeStack()
        threadScopeStacks.set(stack)
        return stack
    }
}

/// Each thread's scope stack, released when the thread exits.
private let threadScopeStacks = ThreadLocalReference<ThreadScopeStack>()
