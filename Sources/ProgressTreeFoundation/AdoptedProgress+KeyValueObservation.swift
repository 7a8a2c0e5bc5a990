#if canImport(ObjectiveC)
import Foundation

// Apple platforms only (not compiled on Linux, where this package is built and tested): `Progress` is
// key-value observable there, so a mirror samples when it changes instead of on the sampler's timer.

extension AdoptedProgress {
    /// Schedules a sample on the sampler's queue whenever `progress` changes what the mirror follows.
    /// (No timer runs: a mirror whose node nobody else holds any more ends at its Progress's next change.)
    func observeChanges(of progress: Progress) {
        let sampler = ProgressSampler.shared
        let changed: @Sendable () -> Void = { [weak self] in
            if let self { sampler.schedule(self) }
        }
        let observations = KeyValueObservations([
            progress.observe(\.fractionCompleted) { _, _ in changed() },
            progress.observe(\.totalUnitCount) { _, _ in changed() },
            progress.observe(\.isCancelled) { _, _ in changed() },
            progress.observe(\.isPaused) { _, _ in changed() },
            progress.observe(\.userInfo) { _, _ in changed() },
        ])
        keep(stopObserving: { observations.invalidate() })
        sampler.schedule(self)  // what changed before the observations began
    }
}

/// Key-value observations to end together. `@unchecked Sendable`: the array is never changed after
/// `init`, and `NSKeyValueObservation.invalidate()` may be called from any thread.
private final class KeyValueObservations: @unchecked Sendable {
    private let observations: [NSKeyValueObservation]

    init(_ observations: [NSKeyValueObservation]) {
        self.observations = observations
    }

    func invalidate() {
        for observation in observations { observation.invalidate() }
    }
}
#endif
