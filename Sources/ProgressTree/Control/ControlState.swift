/// The cancellation and pausing bits of a node, kept in an atomic so that hot loops can check them
/// without a lock. Changed only under the node's lock, so that a transition and the snapshot of the
/// children it flows to are one step.
struct ControlFlags: OptionSet, Sendable {
    let rawValue: UInt8
    static let cancelled = ControlFlags(rawValue: 1 << 0)
    static let paused = ControlFlags(rawValue: 1 << 1)
}

/// The handlers, advisory flags and waiters of a node, guarded by the node's lock.
struct ControlState {
    var isCancellable = true
    var isPausable = false
    var cancellationHandler: (@Sendable () -> Void)?
    var pausingHandler: (@Sendable () -> Void)?
    var resumingHandler: (@Sendable () -> Void)?
    /// Tasks linked to this node (`withCancellationLink`, `task(priority:operation:)`), cancelled with it.
    var linkedTaskCancellations: [Int: @Sendable () -> Void] = [:]
    /// Tasks suspended in `checkpoint()` while this node is paused.
    var pauseWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var lastToken = 0

    mutating func makeToken() -> Int {
        lastToken += 1
        return lastToken
    }
}

/// What a control transition does once every lock is released: resume suspended tasks, then run handlers
/// and task cancellations in tree order (parent before children).
struct ControlTransitionEffects {
    var changedNodes: [ProgressNode] = []
    var callbacks: [@Sendable () -> Void] = []
    var waiters: [CheckedContinuation<Void, any Error>] = []

    func perform(waitersThrow: Bool) {
        for node in changedNodes { node.markChanged() }
        for waiter in waiters {
            if waitersThrow { waiter.resume(throwing: CancellationError()) } else { waiter.resume() }
        }
        for callback in callbacks { callback() }
    }
}

extension ProgressNode {
    var currentControlFlags: ControlFlags {
        ControlFlags(rawValue: controlFlags.load(ordering: .sequentiallyConsistent))
    }

    /// Applies a transition to this node and every attached node below it, iteratively (a 10,000-deep
    /// chain needs no deep stack). `apply` runs under each node's lock in turn, never two at once, and
    /// returns whether that node changed state; nodes are visited parent before children, in the order
    /// the children were added.
    func applyControlTransition(
        waitersThrow: Bool, _ apply: (ProgressNode, inout NodeState, inout ControlTransitionEffects) -> Bool
    ) {
        var effects = ControlTransitionEffects()
        var stack: [ProgressNode] = [self]
        while let node = stack.popLast() {
            let children = node.state.withLock { state -> [ProgressNode] in
                if apply(node, &state, &effects) { effects.changedNodes.append(node) }
                return state.children.entries.map(\.node)
            }
            stack.append(contentsOf: children.reversed())
        }
        effects.perform(waitersThrow: waitersThrow)
    }

    /// Sets or clears `flag` under the caller's lock; returns the flags as they were.
    func updateControlFlags(inserting inserted: ControlFlags = [], removing removed: ControlFlags = []) -> ControlFlags {
        let old = currentControlFlags
        controlFlags.store(old.union(inserted).subtracting(removed).rawValue, ordering: .sequentiallyConsistent)
        return old
    }

    /// Applies a parent's cancelled or paused state to a newly attached child.
    func inheritControlState(_ flags: ControlFlags) {
        if flags.contains(.cancelled) {
            cancel()
        } else if flags.contains(.paused) {
            pause()
        }
    }
}
