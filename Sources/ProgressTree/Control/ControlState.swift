/// The cancellation, pausing and failure bits of a node, kept in an atomic so that hot loops can check
/// them without a lock. Changed only under the node's lock, so that a transition and the snapshot of the
/// children it flows to are one step.
///
/// `cancelled` and `failed` are final and exclusive: once one is set, the other is never set.
struct ControlFlags: OptionSet, Sendable {
    let rawValue: UInt8
    static let cancelled = ControlFlags(rawValue: 1 << 0)
    static let paused = ControlFlags(rawValue: 1 << 1)
    /// Set by `fail(_:)`, with the paused bit cleared in the same store (a failed node is never paused).
    static let failed = ControlFlags(rawValue: 1 << 2)
}

/// The handlers, advisory flags and waiters of a node, guarded by the node's lock.
struct ControlState {
    var isCancellable = true
    var isPausable = false
    var cancellationHandler: (@Sendable () -> Void)?
    var pausingHandler: (@Sendable () -> Void)?
    var resumingHandler: (@Sendable () -> Void)?
    /// Handler calls a transition has marked but not yet made (see `ControlTransitionEffects.perform`).
    /// While one is pending, setting that handler does not run it at once: the pending call runs the
    /// handler current at that moment, so a handler replaced or cleared during a transition is called
    /// once in all (the new one) or not at all (cleared), never twice.
    var pendingCancellationCalls = 0
    var pendingPausingCalls = 0
    var pendingResumingCalls = 0
    /// Tasks linked to this node (`withCancellationLink`, `task(priority:operation:)`), cancelled with it.
    var linkedTaskCancellations: [Int: @Sendable () -> Void] = [:]
    /// Tasks suspended in `checkpoint()` while this node is paused.
    var pauseWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    /// The failure of this node and what failed or was cancelled below it (see `ProgressNode+Failure.swift`).
    var outcomes = OutcomeState()
    private var lastToken = 0

    mutating func makeToken() -> Int {
        lastToken += 1
        return lastToken
    }
}

/// How far down a control transition goes (see `applyControlTransition`).
enum ControlTransitionScope {
    /// Every attached node below (`cancel()`).
    case always
    /// Only below nodes that are paused (`pause()`).
    case whilePaused
    /// Only below nodes that are not paused (`resume()`).
    case whileRunning

    func holds(for flags: ControlFlags) -> Bool {
        switch self {
        case .always: true
        case .whilePaused: flags.contains(.paused)
        case .whileRunning: !flags.contains(.paused)
        }
    }
}

/// Which handler of a node a transition calls.
enum ControlHandlerKind {
    case cancellation, pausing, resuming
}

/// What a control transition does once every lock is released: resume suspended tasks, then run handlers
/// and task cancellations in tree order (parent before children).
struct ControlTransitionEffects {
    enum Callback {
        /// The node's handler of that kind, as it is when the call is made (not when the node was marked).
        case handler(ProgressNode, ControlHandlerKind)
        case closure(@Sendable () -> Void)
    }

    var changedNodes: [ProgressNode] = []
    var callbacks: [Callback] = []
    var waiters: [CheckedContinuation<Void, any Error>] = []

    /// Marks `node` for a call of its `kind` handler. Called under `node`'s lock, with its state.
    mutating func callHandler(of node: ProgressNode, _ kind: ControlHandlerKind, state: inout ControlState) {
        // Fix (test_handler_replaced_from_inside_a_parent_handler_runs_only_the_new_one_once and the other
        // "replaced or cleared" tests): the handler used to be captured here, at marking time, so a handler
        // replaced before the call was made ran twice for one transition (the captured one, and the new one
        // "at once" because the node already had the state), and a cleared one still ran. Now the call
        // reads the handler when it is made, and the setter does not run it at once while a call is pending.
        state[keyPath: kind.pendingCallsKeyPath] += 1
        callbacks.append(.handler(node, kind))
    }

    func perform(waitersThrow: Bool) {
        for node in changedNodes { node.markChanged() }
        for waiter in waiters {
            if waitersThrow { waiter.resume(throwing: CancellationError()) } else { waiter.resume() }
        }
        for callback in callbacks {
            switch callback {
            case .handler(let node, let kind): node.takePendingHandler(kind)?()
            case .closure(let closure): closure()
            }
        }
    }
}

extension ControlHandlerKind {
    var pendingCallsKeyPath: WritableKeyPath<ControlState, Int> {
        switch self {
        case .cancellation: \.pendingCancellationCalls
        case .pausing: \.pendingPausingCalls
        case .resuming: \.pendingResumingCalls
        }
    }

    var handlerKeyPath: WritableKeyPath<ControlState, (@Sendable () -> Void)?> {
        switch self {
        case .cancellation: \.cancellationHandler
        case .pausing: \.pausingHandler
        case .resuming: \.resumingHandler
        }
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
    ///
    /// A child is listed under its parent's lock and visited later under its own, so a child is visited
    /// only if, at that moment, it is still attached and, for `pause()` (`.whilePaused`) and `resume()`
    /// (`.whileRunning`), the node that listed it is still paused, or still running.
    ///
    /// Fix (test_a_leaf_finished_and_reset_during_a_pause_of_its_parent_is_not_left_paused): a child may
    /// finish (and so detach) between the two and be set back below its total; `pause()` then marked a node
    /// no ancestor's `resume()` reaches any more, paused for good. A node has one parent, once, so "still
    /// attached" means attached to the node that listed it; finishing detaches under the child's lock, so a
    /// child marked before that leaves the pause when it finishes, as any paused node does.
    ///
    /// Fix (test_a_child_of_a_node_finished_during_a_pause_of_the_root_is_not_left_paused and
    /// test_a_pause_that_overtakes_a_resume_of_the_root_leaves_the_child_paused): a `resume()` of the node
    /// that listed the child (its own, or the one a node that finishes does to leave its pause) could pass
    /// the child before this pause reached it, and the pause then marked the child, under a running node,
    /// for good when that node had finished and detached. The same with the roles swapped: a `pause()`
    /// passed the child, still paused, before a `resume()` reached it and un-paused it under a paused node.
    /// So a pause goes on below a node only while that node is paused, a resume only while it is running: a
    /// transition that changes the node before this check makes this one skip the child; one that changes
    /// it after visits the child after this one (it sets the node's flag before it takes the child's lock)
    /// and has the last word. Below the node `pause()` or `resume()` was called on, when the call did not
    /// leave it in that state (finished, or cancelled), the transition still reaches its children.
    func applyControlTransition(
        waitersThrow: Bool, goesOnBelow rule: ControlTransitionScope = .always,
        _ apply: (ProgressNode, inout NodeState, inout ControlTransitionEffects) -> Bool
    ) {
        var effects = ControlTransitionEffects()
        /// A node to visit, the node that listed it (`nil` for `self`), and whether that one must still
        /// be as the transition left it when this one is visited.
        struct Visit {
            let node: ProgressNode
            let lister: ProgressNode?
            let listerMustStayAsLeft: Bool
        }
        var stack = [Visit(node: self, lister: nil, listerMustStayAsLeft: false)]
        while let visit = stack.popLast() {
            let node = visit.node
            var childrenNeedListerAsLeft = false
            let children = node.state.withLock { state -> [ProgressNode] in
                if let lister = visit.lister {
                    guard state.link.kind == .attached else { return [] }
                    if visit.listerMustStayAsLeft && !rule.holds(for: lister.currentControlFlags) { return [] }
                }
                if apply(node, &state, &effects) { effects.changedNodes.append(node) }
                if rule != .always {
                    let holds = rule.holds(for: node.currentControlFlags)
                    // Deeper than `self`, only below nodes the transition left in its state (one it did not is
                    // finishing, or cancelled with cancelled children). Below `self` itself always; while it
                    // stays in that state, if the call left it so.
                    if visit.lister != nil && !holds { return [] }
                    childrenNeedListerAsLeft = holds
                }
                return state.children.entries.map(\.node)
            }
            for child in children.reversed() {
                stack.append(Visit(node: child, lister: node, listerMustStayAsLeft: childrenNeedListerAsLeft))
            }
        }
        effects.perform(waitersThrow: waitersThrow)
    }

    /// Sets or clears `flag` under the caller's lock; returns the flags as they were.
    func updateControlFlags(inserting inserted: ControlFlags = [], removing removed: ControlFlags = []) -> ControlFlags {
        let old = currentControlFlags
        controlFlags.store(old.union(inserted).subtracting(removed).rawValue, ordering: .sequentiallyConsistent)
        return old
    }

    /// Ends a pending handler call of `kind`: returns the handler to call now (outside the lock).
    func takePendingHandler(_ kind: ControlHandlerKind) -> (@Sendable () -> Void)? {
        state.withLock { state in
            state.control[keyPath: kind.pendingCallsKeyPath] -= 1
            return state.control[keyPath: kind.handlerKeyPath]
        }
    }

    /// Stores a handler; returns whether the setter must run it at once: the node is already in the state
    /// the handler reacts to (`flag`; `nil`: never) and no call for it is pending (a pending call will run
    /// this handler).
    func setHandler(
        _ kind: ControlHandlerKind, _ handler: (@Sendable () -> Void)?, runsAtOnceIf flag: ControlFlags?
    ) -> Bool {
        // Fix (test_clearing_a_cancellation_handler_releases_what_it_captured_outside_the_nodes_lock): the
        // old handler used to be released inside the lock, so when it held the last reference to an object
        // its `deinit` (user code, which may well use this node, as in "cancel on deinit") ran under the
        // lock. It is now moved out and released after the lock.
        let (runsAtOnce, replaced) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            let replaced = state.control[keyPath: kind.handlerKeyPath]
            state.control[keyPath: kind.handlerKeyPath] = handler
            guard let flag, handler != nil else { return (false, replaced) }
            let runsAtOnce = currentControlFlags.contains(flag) && state.control[keyPath: kind.pendingCallsKeyPath] == 0
            return (runsAtOnce, replaced)
        }
        _ = replaced  // released here, after the lock
        return runsAtOnce
    }

    /// Applies a parent's cancelled, failed or paused state to a newly attached child: below a cancelled or
    /// failed node a child is cancelled.
    func inheritControlState(_ flags: ControlFlags) {
        if !flags.isDisjoint(with: [.cancelled, .failed]) {
            cancel()
        } else if flags.contains(.paused) {
            // Fix (test_a_finished_child_added_to_a_paused_parent_leaves_no_node_below_it_paused): a child
            // that finished (on arrival, or since) was credited and let go: the pause does not flow into it.
            // It did, and paused the nodes still attached below it, out of reach of the parent's `resume()`.
            guard parent != nil else { return }
            pause()
            // Fix (test_child_attached_while_the_parent_is_resumed_ends_up_running): `flags` was read when
            // the child was inserted. A `resume()` of the parent since then may have visited this child
            // before the `pause()` above (finding it running, so leaving it alone), which left the child
            // paused under a running parent. Our pause is now done, so any resume of the parent after this
            // check will visit the child and find it paused; one before it shows here. So does a child that
            // finished (and detached) meanwhile, with the nodes below it that our pause reached.
            if let parent, parent.isPaused { return }
            resume()
        }
    }
}
