import Synchronization

// Held children: a node that finishes into its parent while nodes are still attached below it (a node
// finished by hand while its children run, or one that completed 1 of a total of 0) is credited and leaves
// its parent's sums as every finished child does, but the parent keeps it in its `ChildTable`, for control
// transitions only, until nothing is attached below it. Cancel, pause, resume and a failure's cancellation
// reach the work still running below it through it; being final, it is never changed itself.
//
// Invariants:
// - `NodeFlags.held` is set by the detach (the compare-and-exchange that clears `attached`), under the
//   node's lock, only when its settled table is not empty, and `holderAddress` is the parent's address from
//   the same critical section. Both are cleared together, under the node's lock, once its settled table is
//   empty (`endHoldIfEmpty`), and the node then leaves the holder's table. So a node is in its parent's table
//   exactly while it is attached to it or held by it.
// - Whatever empties a held node's table (a child finishing into it, failing, or released from its own
//   hold) calls `releaseFromHolderIfEmpty` after leaving it: a held node never stays in its parent's table
//   once nothing is attached below it, so finished nodes cost no memory for long. The check is under the
//   node's lock, so a child attached at the same time is either in the settled table (the node stays held)
//   or attached after the release (it starts a tree of its own; what it inherited is checked again under
//   this node's lock, see `inheritControlState`).
// - `pausedThrough` is cleared in the same critical section as `held`, and by a detach that does not hold:
//   a node out of its parent's reach never makes the nodes attached to it later paused, as no `resume()`
//   above it could end that pause.
// - Readers of the table that are about progress and shape (`children`, `description`, file summaries)
//   skip held nodes, whose progress was credited (`NodeFlags.listedAsFinished`, set under the parent's
//   lock when it finished); control transitions and failure go through them. A held node left its
//   parent's summaries at its finish, as any finished child does (`leaveSummaries`,
//   Summaries/ProgressNode+Summaries.swift), so the end of the hold changes no summary.
// - A holder going away orphans its held children as its attached ones (`orphan` clears `holderAddress`
//   under the child's lock before the holder's memory goes), so the address is valid whenever it is read
//   under the child's lock; the release retains the holder there with `swift_tryRetain`.

extension ProgressNode {
    /// Whether this node's parent holds it after it finished into it (see the top of this file).
    var isHeld: Bool { flags.load(ordering: .acquiring) & NodeFlags.held != 0 }

    /// Whether this node is held and its parent's readers of progress and shape skip it (see the top of this
    /// file).
    var isListedAsFinished: Bool { flags.load(ordering: .acquiring) & NodeFlags.listedAsFinished != 0 }

    /// If this node is held and nothing is attached below it any more, ends the hold and takes the node
    /// out of its holder's table; then the same for the holder, which may have held on to this node alone.
    /// Iterative; one node lock at a time.
    func releaseFromHolderIfEmpty() {
        var node = self
        while let holder = node.endHoldIfEmpty() {
            let holderEmptied = holder.state.withLock { state -> Bool in
                holder.settleFreshChildren(&state)
                // `node` is held here, so this is not its last reference. It left the holder's summaries at
                // its finish (`leaveSummaries`), not here.
                state.children.remove(node)
                return holder.flags.load(ordering: .relaxed) & NodeFlags.held != 0 && state.children.isEmpty
            }
            guard holderEmptied else { return }
            node = holder
        }
    }

    /// Ends the hold if this node is held with nothing attached below it, and returns the holder
    /// (retained), whose table still lists this node; `nil` otherwise, or when the holder is going away (its
    /// `deinit` takes the node out of its table itself).
    private func endHoldIfEmpty() -> ProgressNode? {
        state.withLock { state -> ProgressNode? in
            guard flags.load(ordering: .relaxed) & NodeFlags.held != 0 else { return nil }
            settleFreshChildren(&state)
            guard state.children.isEmpty else { return nil }
            flags.bitwiseAnd(~NodeFlags.held, ordering: .sequentiallyConsistent)
            if currentControlFlags.contains(.pausedThrough) {
                _ = updateControlFlags(removing: .pausedThrough, under: state)
            }
            let address = state.holderAddress
            state.holderAddress = 0
            return retainNode(at: address, weakLink: state.weakParent)?.takeRetained()
        }
    }
}
