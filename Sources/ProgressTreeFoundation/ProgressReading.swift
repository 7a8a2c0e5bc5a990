import Foundation

/// The values of a `Foundation.Progress` that a mirror follows on every sample, read one after the other.
///
/// On Linux the reads race with the Progress's owner (swift-corelibs-foundation's `Progress` has no lock):
/// each value is an inline scalar, so a read returns the value before or after a write, never a torn one,
/// and the next sample sees the rest (see `ProgressSampler`).
struct ProgressReading: Equatable, Sendable {
    var completed: Int64
    var total: Int64
    /// Foundation's `fractionCompleted`: its own counts plus its unfinished children's partial work.
    var fraction: Double
    var isCancelled: Bool
    var isPaused: Bool

    init(_ progress: Progress) {
        completed = progress.completedUnitCount
        total = progress.totalUnitCount
        fraction = progress.fractionCompleted
        isCancelled = progress.isCancelled
        isPaused = progress.isPaused
    }

    init(completed: Int64, total: Int64, fraction: Double, isCancelled: Bool = false, isPaused: Bool = false) {
        self.completed = completed
        self.total = total
        self.fraction = fraction
        self.isCancelled = isCancelled
        self.isPaused = isPaused
    }

    /// Finished by its counts, as both Foundation and `ProgressNode` define it.
    var isFinished: Bool { Self.isFinished(completed: completed, total: total) }

    static func isFinished(completed: Int64, total: Int64) -> Bool {
        (completed >= total && total > 0) || (completed > 0 && total == 0)
    }

    /// Writes new counts over `current` ones (a node's, or a Progress's storage) in the order that never
    /// passes through a finished state the new counts do not have: finishing is permanent for a node's
    /// parent, and a Foundation parent credits a child each time it is seen finished. One of the two
    /// orders always does: both pass through a finished state only if the current counts are finished,
    /// and then nothing is written any more. Unchanged counts are not written.
    static func writeCounts(
        completed: Int64, total: Int64, over current: (completed: Int64, total: Int64),
        setCompleted: (Int64) -> Void, setTotal: (Int64) -> Void
    ) {
        let totalFirst =
            isFinished(completed: completed, total: total) || !isFinished(completed: current.completed, total: total)
        if totalFirst && current.total != total { setTotal(total) }
        if current.completed != completed { setCompleted(completed) }
        if !totalFirst && current.total != total { setTotal(total) }
    }

    /// The work of the Progress's unfinished children, in its own units: what its fraction holds beyond
    /// its own counts. 0 when it has none, is indeterminate or finished; never more than the units left.
    var childrenShare: Double {
        guard total > 0, completed >= 0, completed < total, fraction.isFinite else { return 0 }
        let share = min(fraction, 1) * Double(total) - Double(completed)
        return share > 0 ? min(share, Double(total - completed)) : 0
    }
}
