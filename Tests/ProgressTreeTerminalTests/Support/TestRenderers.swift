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
