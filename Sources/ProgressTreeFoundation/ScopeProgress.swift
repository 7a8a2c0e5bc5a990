import Foundation
import ProgressTree
import Synchronization

/// The `Foundation.Progress` made current on a thread for a node's scope there, so that a
/// `Progress(totalUnitCount:)` created on that thread attaches to it, as to a current NSProgress: it
/// claims the scope's pending count (the first node or Progress created in the scope does) and is
/// adopted by the scope's node with that count, instead of becoming this Progress's child.
///
/// Made current by the companion this module provides to the model for `becomeCurrent`, `performAsCurrent`
/// and the synchronous `withCurrent` (`FoundationScopeCompanion`, on unless
/// `ProgressNode.adoptsImplicitFoundationChildren` is set to `false`), and by
/// `FollowingProgress.becomeCurrent(withPendingUnitCount:)`.
///
/// `@unchecked Sendable` restates Foundation's conformance; what this subclass adds is `Sendable`
/// itself: a `let` scope and a `Mutex`.
final class ScopeProgress: Progress, @unchecked Sendable {
    let scope: ImplicitScope
    /// The mirror of the Progress that claimed the scope through `addChild`, if one did.
    private let claimedMirror = Mutex<AdoptedProgress?>(nil)

    init(scope: ImplicitScope) {
        self.scope = scope
        super.init(parent: nil, userInfo: nil)
        // Foundation credits the pending count to a current Progress no child attached to, which
        // finishes it: `end()` tells that case from a child attached without `addChild`.
        totalUnitCount = scope.pendingUnitCount
    }

    /// Makes a new `ScopeProgress` current on this thread for `scope`; returns it (`end()` ends it).
    @available(*, noasync)
    static func becomeCurrent(for scope: ImplicitScope) -> ScopeProgress {
        let progress = ScopeProgress(scope: scope)
        progress.becomeCurrent(withPendingUnitCount: scope.pendingUnitCount)
        return progress
    }

    /// The model's companion of synchronous scopes (`ThreadScopeCompanion`): a `ScopeProgress` current
    /// for each, ended with it.
    static let companion: ThreadScopeCompanion = { scope in
        let progress = becomeCurrent(for: scope)
        return { progress.end() }
    }

    /// Foundation attaches an implicit child here (swift-corelibs-foundation does, for the first
    /// `Progress(totalUnitCount:)` or `Progress(parent: Progress.current())` created on the thread):
    /// the child claims the scope and is adopted by its node; if a node or Progress claimed it first, the
    /// child stays a root, as a second implicit child does in Foundation.
    override func addChild(_ child: Progress, withPendingUnitCount unitCount: Int64) {
        guard scope.claim() else { return }
        let mirror = scope.node.adoptMirrored(child, withPendingUnitCount: scope.pendingUnitCount).mirror
        claimedMirror.withLock { $0 = mirror }
    }

    /// Ends the scope on its thread: resigns this Progress, then samples the adopted child once more, so
    /// that work it did on this thread shows in the node when the scope returns (a child that finished is
    /// credited by then, as in Foundation).
    ///
    /// Where Foundation attached a child without `addChild` (not swift-corelibs-foundation; not verified
    /// on Apple platforms), this Progress is left unfinished by it and is adopted itself, if the scope is
    /// still unclaimed.
    @available(*, noasync)
    func end() {
        resignCurrent()
        if let mirror = claimedMirror.withLock({ $0 }) {
            ProgressSampler.shared.sampleNow(mirror)
        } else if !isFinished && totalUnitCount > 0 && scope.claim() {
            scope.node.addChild(self as Progress, withPendingUnitCount: scope.pendingUnitCount)
        }
    }
}

/// The companion ProgressTree's scopes have by default when this module is in the program (found by name,
/// see `ThreadScopeCompanionProvider`): a Foundation `Progress` current for each synchronous scope.
final class FoundationScopeCompanion: ThreadScopeCompanionProvider {
    static var defaultCompanion: ThreadScopeCompanion { ScopeProgress.companion }
}
