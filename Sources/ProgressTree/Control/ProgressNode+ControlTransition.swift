extension ProgressNode {
    /// Applies a transition to this node and every attached node below it, iteratively (a 10,000-deep
    /// chain needs no deep stack). `apply` runs under each node's lock in turn, never two at once, and
    /// returns whether that node changed state; nodes are visited parent before children, in the order
    /// the children were added.
    ///
    /// A child is listed under its parent's lock and visited later under its own, so a child is visited
    /// only if, at that moment, it is still attached and, for `pause()` (`.whilePaused`) and `resume()`
    /// (`.whileRunning`), the node that listed it is still paused, or still running. The rules this keeps:
    ///
    /// - A transition never marks a node that no ancestor's later transition can reach. A child may
    ///   finish (and so detach) between being listed and being visited, and be set back below its total
    ///   afterwards; marking it paused then would leave it paused for good. A node has one parent, once, so
    ///   "still attached" means attached to the node that listed it; finishing detaches under the child's
    ///   lock, so a child marked before that leaves the pause when it finishes, as any paused node does.
    /// - Of two transitions of one node, the later one has the last word below it. A pause goes on below
    ///   a node only while that node is paused, a resume only while it is running: a transition that
    ///   changes the node before this check makes this one skip the child; one that changes it after
    ///   visits the child after this one (it sets the node's flag before it takes the child's lock), so a
    ///   child is never left paused under a running node, or running under a paused one.
    /// - Below the node `pause()` or `resume()` was called on, when the call did not leave it in that state
    ///   (finished, or cancelled), the transition still reaches its children.
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
                node.settleFreshChildren(&state)  // after `apply`: see ProgressNode+FreshChildren.swift
                return state.children.entries.map(\.node)
            }
            for child in children.reversed() {
                stack.append(Visit(node: child, lister: node, listerMustStayAsLeft: childrenNeedListerAsLeft))
            }
        }
        effects.perform(waitersThrow: waitersThrow)
    }

    /// Applies a parent's cancelled, failed or paused state (`flags`, read when the child was inserted) to a
    /// newly attached child: below a cancelled or failed node a child is cancelled; below a paused one it
    /// is paused, unless it has finished.
    func inheritControlState(_ flags: ControlFlags) {
        if !flags.isDisjoint(with: [.cancelled, .failed]) {
            cancel()
        } else if flags.contains(.paused) {
            // A child that finished (on arrival, or since) was credited and let go: the pause does not flow
            // into it, nor into the nodes still attached below it, which the parent's `resume()` could not
            // reach.
            guard parent != nil else { return }
            pause()
            // The child ends in its parent's state as of now: a `resume()` of the parent since `flags` was
            // read may have visited the child before the `pause()` above (found it running and left it
            // alone). Our pause is done, so a resume of the parent after this check visits the child and
            // finds it paused; one before it shows here, and so does a child that finished (and detached)
            // meanwhile, with the nodes below it that our pause reached.
            if let parent, parent.isPaused { return }
            resume()
        }
    }
}
