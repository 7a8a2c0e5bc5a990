// Scenario 19 (shares): `--shares [cycles] [rounds]` times a child's life cycle through a `ProgressShare`
// against scenario 6's plain child (best of the rounds, run interleaved), and the resident memory of
// 1,000,000 outstanding shares against as many children at 0 of 0 (the design not taken), each in a fresh
// process (`--memory-shares shares|children N`). See Docs/Performance.md, "Shares".

import Foundation
import ProgressTree
import Scenarios

func runShareScenario(cycles: Int, rounds: Int) {
    let kinds: [(name: String, run: (Int) -> Double)] = [
        ("plain child: create attached, finish (scenario 6)", PN.childCycles),
        ("share, started by a function, finished", PN.shareCycles),
        ("share, dropped unstarted by a function", PN.droppedShareCycles),
        ("not taken: child at 0 of 0, total set, finished", PN.placeholderChildCycles),
    ]
    for kind in kinds { consume(kind.run(cycles)) }  // warm-up
    var best = Array(repeating: Double.infinity, count: kinds.count)
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        for (index, kind) in kinds.enumerated() {
            let start = clock.now
            consume(kind.run(cycles))
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            best[index] = min(best[index], seconds)
        }
    }
    print("19 shares, \(cycles) cycles, best of \(rounds) interleaved rounds:")
    for (index, kind) in kinds.enumerated() {
        print("  " + padded(kind.name) + String(format: "%6.1f ns/cycle", best[index] / Double(cycles) * 1e9))
    }
    let count = 1_000_000
    for (kind, name) in [("shares", "outstanding shares"), ("children", "not taken: children at 0 of 0")] {
        guard let memory = memoryInChild(kind, count, mode: "--memory-shares") else { continue }
        print(
            "  " + padded(name)
                + String(
                    format: "%6.1f B each (RSS growth for %d, fresh process; peak +%.1f MB)",
                    Double(memory.growth) / Double(count), count, Double(memory.peak) / 1_048_576))
    }
}

private func padded(_ name: String) -> String {
    name + String(repeating: " ", count: max(1, 52 - name.count))
}

/// `--memory-shares shares|children N`: prints the RSS growth and the peak RSS growth, in bytes, for `N`
/// outstanding shares of one root (kept in a buffer), or `N` children at 0 of 0 of one root, after a
/// warm-up of 1,000 that is released again.
func runShareMemoryChild(kind: String, count: Int) {
    func make(_ n: Int) -> (root: ProgressNode, shares: UnsafeMutablePointer<ProgressShare>?) {
        guard kind == "shares" else { return (PN.placeholderChildren(n), nil) }
        let buffer = UnsafeMutablePointer<ProgressShare>.allocate(capacity: n)
        return (PN.outstandingShares(n, in: buffer), buffer)
    }
    func release(_ made: (root: ProgressNode, shares: UnsafeMutablePointer<ProgressShare>?), _ n: Int) {
        guard let shares = made.shares else { return }
        shares.deinitialize(count: n)  // each dropped share credits its unit
        shares.deallocate()
        precondition(made.root.isFinished, "dropped shares: root finished")
    }
    release(make(1_000), 1_000)
    guard let before = residentBytes(), let peakBefore = peakResidentBytes() else {
        print("0 0")
        return
    }
    let made = make(count)
    let after = residentBytes()!
    let peakAfter = peakResidentBytes()!
    release(made, count)
    print(after - before, max(0, peakAfter - peakBefore))
}
