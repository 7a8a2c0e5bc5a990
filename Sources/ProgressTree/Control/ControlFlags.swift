/// The cancellation, pausing and failure bits of a node, kept in an atomic so that hot loops can check
/// them without a lock. Changed only by `updateControlFlags(inserting:removing:under:)`, which asks for the
/// node's state its lock lends, so that a transition and the snapshot of the children it flows to are one
/// step.
///
/// `cancelled` and `failed` are final and exclusive: once one is set, the other is never set.
struct ControlFlags: OptionSet, Sendable {
    let rawValue: UInt8
    static let cancelled = ControlFlags(rawValue: 1 << 0)
    static let paused = ControlFlags(rawValue: 1 << 1)
    /// Set by `fail(_:)`, with the paused bit cleared in the same store (a failed node is never paused).
    static let failed = ControlFlags(rawValue: 1 << 2)
    /// A final node (finished, cancelled or failed, or held by its parent after finishing into it) that the
    /// last `pause()` or `resume()` reaching it passed through was paused by it: the node itself is not
    /// paused (`isPaused` is `false`), but it stands for a paused ancestor to the nodes below it. A child
    /// attached to it becomes paused, and a pause goes on below it as below a paused node. A node that
    /// finishes while paused keeps it in place of `paused` while it can still be reached (see
    /// `leavePauseIfFinishedWhilePaused`). Cleared by a `resume()` reaching it, and when the node leaves its
    /// parent's reach (`ProgressNode+HeldChildren.swift`), so that nothing keeps nodes paused out of reach of
    /// every `resume()`.
    static let pausedThrough = ControlFlags(rawValue: 1 << 3)
    /// A final node that a cancellation passed through without cancelling it (it had finished): the nodes
    /// attached to it later are cancelled as they attach, as below a cancelled node. Permanent, as
    /// cancellation is.
    static let cancelledThrough = ControlFlags(rawValue: 1 << 4)
    /// Set with `cancelled` or `cancelledThrough` when the cancellation that set them was a failure's (the
    /// failure of an ancestor, or a node it cancelled): the children attached later are cancelled by that
    /// failure too (`DescendantOutcomes.cancelledByFailureCount`). Permanent; the first cancellation to
    /// reach a node decides it.
    static let cancelledByFailure = ControlFlags(rawValue: 1 << 5)

    /// Whether the node stands for a paused node to the nodes below it: paused itself (and not cancelled
    /// since, which keeps the bit for good), or passed through by a pause.
    var pausesBelow: Bool {
        contains(.pausedThrough) || (contains(.paused) && isDisjoint(with: [.cancelled, .failed]))
    }

    /// Whether a child attached below this node is cancelled as it attaches.
    var cancelsBelow: Bool { !isDisjoint(with: [.cancelled, .failed, .cancelledThrough]) }

    /// Whether that cancellation is a failure's: the node failed, or a failure cancelled it (or passed
    /// through it).
    var cancelsBelowByFailure: Bool { !isDisjoint(with: [.failed, .cancelledByFailure]) }
}

// Memory ordering of `controlFlags`.
//
// Every store is made with the node's lock held (`updateControlFlags` asks for its state), so a reader that
// holds that lock sees the latest flags whatever the ordering. A reader without it (`isCancelled` in a hot loop, `checkpoint()`, a transition
// checking the node that listed a child, under the child's lock) needs only the flags themselves: any
// decision it takes on them is taken again under the lock before anything is changed, or, for a
// transition, ordered by the child's lock that both transitions take. Those readers load with `.acquiring`,
// which also makes visible what the transition wrote under the lock before the store.
//
// One pair is load-bearing for sequential consistency: `pause()` stores `paused` and then reads the
// counts, while an update that finishes a node stores its count and then reads `paused` (a root takes no
// lock for that, see `leavePauseIfFinishedWhilePaused`). Each side writes one location and reads the
// other, so only a single total order of the four operations guarantees that at least one side sees the
// other's write (either the pause sees the node finished and takes the flag back, or the update sees the
// flag and resumes the node). Hence the store below, the load of `isPaused`
// (`controlFlagsOrderedWithCounts`) and the counts' stores and loads stay `.sequentiallyConsistent`.

extension ProgressNode {
    /// The flags, for a reader that needs nothing but the flags (see the note on orderings above).
    var currentControlFlags: ControlFlags {
        ControlFlags(rawValue: controlFlags.load(ordering: .acquiring))
    }

    /// The flags, in the total order of sequentially consistent operations: for the reader that must see
    /// a `pause()` racing with its own store of the counts (see the note on orderings above).
    var controlFlagsOrderedWithCounts: ControlFlags {
        ControlFlags(rawValue: controlFlags.load(ordering: .sequentiallyConsistent))
    }

    /// Sets `inserted` and clears `removed`; returns the flags as they were. `state` is the node's, which its
    /// lock lends: every store is made under it. Sequentially consistent: `pause()` reads the counts after
    /// this store (see the note above).
    func updateControlFlags(
        inserting inserted: ControlFlags = [], removing removed: ControlFlags = [], under state: borrowing NodeState
    ) -> ControlFlags {
        let old = currentControlFlags
        controlFlags.store(old.union(inserted).subtracting(removed).rawValue, ordering: .sequentiallyConsistent)
        return old
    }
}
