import ProgressTree
import ProgressTreeTerminal

/// A renderer that draws only when the test calls `drawFrame()`: no timer and no initial delay. Colour is
/// off unless `environment` says otherwise.
func makeTestRenderer(
    _ root: ProgressNode, mode: TerminalRenderer.Mode = .live, output: any TerminalOutput,
    clock: ManualProgressClock = ManualProgressClock(), layout: TerminalLayout = .default,
    environment: [String: String] = ["NO_COLOR": "1"],
    configure: (inout TerminalRenderer.Options) -> Void = { _ in }
) -> TerminalRenderer {
    var options = TerminalRenderer.Options()
    options.drawsOnTimer = false
    options.initialDelay = .zero
    configure(&options)
    return TerminalRenderer(
        root, mode: mode, layout: layout, options: options, output: output, clock: clock, environment: environment)
}

/// "Sync" (2 units) over "a.txt" and "b.txt", each 10 units standing for 1 of the root's.
func makeSyncTree() -> (root: ProgressNode, first: ProgressNode, second: ProgressNode) {
    let root = ProgressNode.discreteProgress(totalUnitCount: 2)
    root.localizedDescription = "Sync"
    let first = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
    first.localizedDescription = "a.txt"
    let second = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
    second.localizedDescription = "b.txt"
    return (root, first, second)
}

/// A root labelled `label`, of `total` units.
func makeRoot(_ label: String, total: Int64) -> ProgressNode {
    let root = ProgressNode.discreteProgress(totalUnitCount: total)
    root.localizedDescription = label
    return root
}

/// "Batch" (one unit a job) over `count` jobs of `unitsEach` units each, labelled by `name`
/// ("job 1", "job 2"…).
func makeBatch(
    jobs count: Int, unitsEach: Int64, name: (Int) -> String = { "job \($0)" }
) -> (root: ProgressNode, jobs: [ProgressNode]) {
    let root = makeRoot("Batch", total: Int64(count))
    let jobs = (1...count).map { index in
        let job = ProgressNode(totalUnitCount: unitsEach, parent: root, pendingUnitCount: 1)
        job.localizedDescription = name(index)
        return job
    }
    return (root, jobs)
}
