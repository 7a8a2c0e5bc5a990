#if canImport(ObjectiveC)
import Foundation
import ProgressTree

// Apple platforms only (not compiled on Linux, where this package is built and tested): what Foundation's
// Objective-C `Progress` lets a subclass do beyond swift-corelibs-foundation's. Its `fractionCompleted` is
// the node's, its descriptions are settable (read-only overrides on Linux, in FollowingProgress.swift),
// and its own states are key-value observable.

extension FollowingProgress {
    override var fractionCompleted: Double { node.fractionCompleted }

    override var localizedDescription: String! {
        get { node.localizedDescription }
        set { if ready { node.localizedDescription = newValue } else { super.localizedDescription = newValue } }
    }

    override var localizedAdditionalDescription: String! {
        get { node.localizedAdditionalDescription }
        set {
            if ready {
                node.localizedAdditionalDescription = newValue
            } else {
                super.localizedAdditionalDescription = newValue
            }
        }
    }

    /// A Foundation parent may cancel or pause its children without calling their `cancel()` or `pause()`
    /// (not verified): the states are observed too, from `init`.
    func observeOwnStates() {
        let node = self.node
        ownObservations.withLock {
            $0 = [
                observe(\.isCancelled) { progress, _ in if progress.isCancelled { node.cancel() } },
                observe(\.isPaused) { progress, _ in if progress.isPaused { node.pause() } else { node.resume() } },
            ]
        }
    }
}
#endif
