import ProgressTree
import ProgressTreeTerminal
import TestSupport

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

/// A child of `parent` labelled `label`, of `total` units standing for `pending` of the parent's.
@discardableResult
func makeChild(_ label: String, total: Int64, parent: ProgressNode, pending: Int64 = 1) -> ProgressNode {
    let child = ProgressNode(totalUnitCount: total, parent: parent, pendingUnitCount: pending)
    child.localizedDescription = label
    return child
}

/// A root labelled `label`, of `total` units, and a test renderer in `mode` writing to an 80 × 100 output
/// that is not a terminal, which drew one frame.
func makeDrawnRoot(
    _ label: String, total: Int64, mode: TerminalRenderer.Mode,
    configure: (inout TerminalRenderer.Options) -> Void = { _ in }
) -> (root: ProgressNode, renderer: TerminalRenderer, output: VirtualTerminal) {
    let root = makeRoot(label, total: total)
    let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
    let renderer = makeTestRenderer(root, mode: mode, output: output, configure: configure)
    renderer.drawFrame()
    return (root, renderer, output)
}

/// "IMG_0004.jpg" (10 units, 1 of `parent`'s) over a download labelled `download` (100 units, 10 of the
/// photo's) half done; then the photo fails with `reason`, which cancels the download.
func failPhotoWithHalfADownload(below parent: ProgressNode, download: String = "download", reason: String) {
    let photo = makeChild("IMG_0004.jpg", total: 10, parent: parent)
    makeChild(download, total: 100, parent: photo, pending: 10).completedUnitCount = 50
    photo.fail(Reason(description: reason))
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
