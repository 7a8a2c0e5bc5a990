import Foundation
import ProgressTree
import Synchronization

extension ProgressNode {
    /// A `Foundation.Progress` that follows this node, for APIs that take one and for types that conform
    /// to `Foundation.ProgressReporting`: the same object for as long as someone holds it.
    ///
    /// - Its counts, `fractionCompleted` (children's partial work included), `isFinished`,
    ///   `isIndeterminate`, cancelled and paused states, `localizedDescription`,
    ///   `localizedAdditionalDescription`, `kind` and `userInfo` are the node's (`isCancellable` and
    ///   `isPausable` are copied when it is made). A failed node reads as cancelled: Foundation has no
    ///   failure.
    /// - `cancel()`, `pause()` and `resume()` on it reach the node, and from there the nodes below;
    ///   setting its counts, `kind` or a `userInfo` key the node knows sets the node's.
    /// - `addChild(_:withPendingUnitCount:)` on it adopts a Foundation child into the node (see
    ///   `addChild(_:withPendingUnitCount:)` here), and a `Progress(totalUnitCount:)` created while it is
    ///   current (`becomeCurrent(withPendingUnitCount:)`) is adopted likewise.
    /// - A Foundation parent it is added to sees the node's progress.
    ///
    /// Cost: a node nobody asked this of pays nothing. Once asked, while the Progress lives, the node is
    /// observed: Foundation's storage is brought up to date on a queue of the Progress's own, once per
    /// burst of updates (the node's update path signals the observation, as any). When the last reference
    /// to the Progress goes, so does the observation. On Linux, swift-corelibs-foundation's `Progress` has
    /// no lock: reading it on other threads races with those updates as with any Progress's owner's.
    ///
    /// Thread safety: any thread.
    public var foundationProgress: Progress {
        FollowingProgress.following(self)
    }
}

extension FollowingProgress {
    /// A class, not a struct: with a struct, the first lookup in the empty registry crashed in
    /// `swift_weakLoadStrong` (Swift 6.3.1, Linux, debug build; a small program doing the same did not,
    /// and the cause was not found).
    private final class Entry {
        weak var progress: FollowingProgress?
        let identity: ObjectIdentifier

        init(progress: FollowingProgress) {
            self.progress = progress
            identity = ObjectIdentifier(progress)
        }
    }

    /// The live `FollowingProgress` of each node asked for one.
    private static let registry = Mutex<[ObjectIdentifier: Entry]>([:])

    /// `node`'s `FollowingProgress`: the live one, or a new one.
    static func following(_ node: ProgressNode) -> FollowingProgress {
        let key = ObjectIdentifier(node)
        // Strong references leave the lock before they are released: a release may run a deinit, which
        // takes the lock.
        if let existing = registry.withLock({ $0[key]?.progress }) { return existing }
        let made = FollowingProgress(following: node)
        let winner = registry.withLock { registry -> FollowingProgress in
            if let existing = registry[key]?.progress { return existing }
            registry[key] = Entry(progress: made)
            return made
        }
        return winner
    }

    /// Called by a `FollowingProgress` going away: its entry goes too, unless a newer one took its place.
    static func forget(_ progress: FollowingProgress) {
        let key = ObjectIdentifier(progress.node)
        let identity = ObjectIdentifier(progress)
        registry.withLock { registry in
            if registry[key]?.identity == identity { registry[key] = nil }
        }
    }
}
