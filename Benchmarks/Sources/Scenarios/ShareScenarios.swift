// Scenario 19: a child's life cycle through a `ProgressShare` (make the share, hand it to a function that
// starts it and finishes its node, or drops it), beside scenario 6's plain child; and the design not taken,
// a child at 0 of 0 made with the share and given its total by `start`. Same rules as `Scenarios.swift`:
// public API only, every result checked, a value returned to keep the optimizer honest.

import ProgressTree

extension PN {
    /// 19a. `n` times: a share of one unit of the root, handed to a function that starts it for one unit
    /// and finishes its node.
    @inline(never)
    public static func shareCycles(_ n: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n { finishOneUnit(progress: root.share(pendingUnitCount: 1)) }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "share cycles: root finished")
        return fraction
    }

    /// 19b. `n` times: a share of one unit of the root, handed to a function that drops it unstarted.
    @inline(never)
    public static func droppedShareCycles(_ n: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n { skip(progress: root.share(pendingUnitCount: 1)) }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "dropped shares: root finished")
        return fraction
    }

    /// 19c. The design not taken: `n` times, a child at 0 of 0 made where the share would be, its total set
    /// where `start` would be, then finished.
    @inline(never)
    public static func placeholderChildCycles(_ n: Int) -> Double {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n {
            let child = ProgressNode(totalUnitCount: 0, parent: root, pendingUnitCount: 1)
            child.totalUnitCount = 1
            child.advance(by: 1)
        }
        let fraction = root.fractionCompleted
        expect(root.isFinished && fraction == 1, "placeholder children: root finished")
        return fraction
    }

    /// 19d. `n` outstanding shares of one unit of a root, kept in `buffer`, then dropped; returns the root's
    /// fraction with them outstanding. `buffer` holds `n` shares.
    public static func outstandingShares(_ n: Int, in buffer: UnsafeMutablePointer<ProgressShare>) -> ProgressNode {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for index in 0..<n { (buffer + index).initialize(to: root.share(pendingUnitCount: 1)) }
        expect(root.fractionCompleted == 0, "outstanding shares: nothing done yet")
        return root
    }

    /// 19d, the design not taken: `n` children at 0 of 0 attached to one root, as many placeholders.
    public static func placeholderChildren(_ n: Int) -> ProgressNode {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(n))
        for _ in 0..<n { _ = ProgressNode(totalUnitCount: 0, parent: root, pendingUnitCount: 1) }
        expect(root.fractionCompleted == 0, "placeholder children: nothing done yet")
        return root
    }
}

/// A function that takes a share: it starts it for one unit and finishes its node.
@inline(never)
func finishOneUnit(progress: consuming ProgressShare) {
    progress.start(totalUnitCount: 1).advance(by: 1)
}

/// A function that takes a share and drops it.
@inline(never)
func skip(progress: consuming ProgressShare) {}
