extension ProgressNode {
    /// Applies a transition to this node and every node below it that a transition reaches, and then its
    /// effects (waiters resume without throwing): `pause()`, `resume()`, and a fresh child taking its
    /// parent's state (`firstFromAbove`). See the next function.
    func applyControlTransition(
        goesOnBelow rule: ControlTransitionScope, firstFromAbove: Bool = false,
        _ apply: (_ node: ProgressNode, _ fromAbove: Bool, inout NodeState, inout ControlTransitionEffects) -> Bool
    ) {
        var effects = ControlTransitionEffects()
        Self.applyControlTransition(
            to: [self], rootsFromAbove: firstFromAbove, goesOnBelow: rule, effects: &effects, apply)
        effects.perform(waitersThrow: false)
    }

    /// Applies a transition to `roots` and every node below them that a transition reaches (attached
    /// children, and held ones: see ProgressNode+HeldChildren.swift), iteratively (a 10,000-deep chain
    /// needs no deep stack). `apply` runs under each node's lock in turn, never two at once, and returns
    /// whether that node changed state; it is told whether the node was reached from above (`fromAbove`:
    /// every node but the roots, unless `rootsFromAbove`), since a node held by its parent after finishing
    /// into it is final for the transitions of its ancestors but not for its own. Nodes are visited parent
    /// before children, in the order the children were added; the changed ones are marked in `effects`.
    /// Returns the nodes visited, in that order (preorder), each with the index of its parent among them
    /// (-1 for a root) and whether `apply` changed it.
    ///
    /// A final node (finished, cancelled, failed, or held) is never changed itself, but a transition passes
    /// through it to the nodes below, and leaves its mark there (`ControlFlags.pausedThrough`): the node then
    /// stands for its paused or running ancestor to the nodes below it, for the checks below and for the
    /// children attached to it later.
    ///
    /// A child is listed under its parent's lock and visited later under its own, so a child is visited
    /// only if, at that moment, it can still be reached (attached, or held) and, for `pause()`
    /// (`.whilePaused`) and `resume()` (`.whileRunning`), the node that listed it still pauses the nodes
    /// below it, or still does not. The rules this keeps:
    ///
    /// - A transition never marks a node that no ancestor's later transition can reach. A child may
    ///   finish between being listed and being visited; if nothing is attached below it, it leaves its
    ///   parent, and may be set back below its total afterwards: marking it paused then would leave it
    ///   paused for good. A node has one parent, once, so "can still be reached" means by the node that
    ///   listed it; finishing decides under the child's lock whether it is held or let go, so a child marked
    ///   before that leaves the pause when it finishes, as any paused node does.
    /// - Of two transitions of one node, the later one has the last word below it. A pause goes on below
    ///   a node only while that node pauses the nodes below it, a resume only while it does not: a
    ///   transition that changes the node before this check makes this one skip the child; one that changes
    ///   it after visits the child after this one (it sets the node's flag before it takes the child's
    ///   lock), so a child is never left paused under a running node, or running under a paused one.
    @discardableResult
    static func applyControlTransition(
        to roots: [ProgressNode], rootsFromAbove: Bool, goesOnBelow rule: ControlTransitionScope,
        effects: inout ControlTransitionEffects,
        _ apply: (_ node: ProgressNode, _ fromAbove: Bool, inout NodeState, inout ControlTransitionEffects) -> Bool
    ) -> [(node: ProgressNode, parent: Int, changed: Bool)] {
        var visited: [(node: ProgressNode, parent: Int, changed: Bool)] = []
        var stack: [(node: ProgressNode, parent: Int)] = roots.reversed().map { ($0, -1) }
        while let (node, parentIndex) = stack.popLast() {
            let index = visited.count
            // The node that listed this one; `nil` for a root.
            let lister = parentIndex >= 0 ? visited[parentIndex].node : nil
            let fromAbove = lister != nil || rootsFromAbove
            let (changed, children) = node.state.withLock { state -> (Bool, [ProgressNode]) in
                if fromAbove {
                    guard state.link.kind == .attached || node.isHeld else { return (false, []) }
                }
                if let lister, !rule.holds(below: lister) { return (false, []) }
                // `apply` leaves the node in the transition's state, or marks it passed through (a final
                // node), so the transition goes on below every node it visits.
                let changed = apply(node, fromAbove, &state, &effects)
                node.settleFreshChildren(&state)  // after `apply`: see ProgressNode+FreshChildren.swift
                return (changed, state.children.entries.map(\.node))
            }
            if changed { effects.changedNodes.append(node) }
            visited.append((node, parentIndex, changed))
            stack.append(contentsOf: children.reversed().map { ($0, index) })
        }
        return visited
    }

    /// Whether this node is final for a transition: finished, cancelled or failed, or, reached from above,
    /// held by its parent (its finish was credited there, so for its ancestors it is finished for good).
    /// `state` is the node's, which its lock lends.
    func isFinalForTransitions(fromAbove: Bool, under state: borrowing NodeState) -> Bool {
        if !currentControlFlags.isDisjoint(with: [.cancelled, .failed]) { return true }
        if fromAbove && isHeld { return true }
        return FractionMath.isFinished(
            completed: completedStorage.load(ordering: .sequentiallyConsistent),
            total: totalStorage.load(ordering: .sequentiallyConsistent))
    }

    /// Gives this node, just attached (with `addChild`, as a fresh child, or implicitly), the cancelled or
    /// paused state its parent had when it was attached (`flags`, read when it was inserted): below a node
    /// that cancels the nodes below it, it is cancelled; below one that pauses them, it is paused. As a
    /// transition from the parent would: a child that finished on arrival is passed through to the nodes
    /// attached below it, and one that left at once (nothing attached below it) is not touched.
    func inheritControlState(_ flags: ControlFlags, from parent: ProgressNode) {
        if flags.cancelsBelow {
            cancel(fromAbove: true, byFailure: flags.cancelsBelowByFailure)
        } else if flags.pausesBelow {
            applyControlTransition(goesOnBelow: .whilePaused, firstFromAbove: true, Self.applyPause)
            // The child ends in its parent's state as of now: a `resume()` of the parent since `flags` was
            // read may have visited the child before the pause above (found it running and left it alone),
            // and a parent that finished may have left its own parent's reach since (dropping the mark it
            // passed on). Both happen under the parent's lock, so they show here, read under it; one after this
            // check visits the child after our pause and finds it paused.
            if parent.state.withLock({ _ in parent.currentControlFlags.pausesBelow }) { return }
            applyControlTransition(goesOnBelow: .whileRunning, firstFromAbove: true, Self.applyResume)
        }
    }
}
