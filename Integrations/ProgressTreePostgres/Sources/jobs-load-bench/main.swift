// jobs-load-bench: the worker side of the load benchmark (Benchmarks/load.sh): publishes --jobs jobs of
// --nodes nodes each (a root and its children) into PostgreSQL, and sets every child's completed count to
// the wall clock in milliseconds every --tick-ms (the readers compute each change's latency from it), for
// --seconds. Then it ends the jobs and prints one line of JSON: statements, rows written, heartbeats, and
// the changes made, so that the benchmark compares rows written with the nodes that changed.
//
//   jobs-load-bench --postgres URL [--jobs 100] [--nodes 50] [--tick-ms 50] [--seconds 20] [--prefix load]

import Foundation
import ProgressTree
import ProgressTreePostgres

func option(_ name: String, _ fallback: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}

func wallMilliseconds() -> Int64 {
    Int64(Date().timeIntervalSince1970 * 1000)
}

guard let url = CommandLine.arguments.firstIndex(of: "--postgres").map({ CommandLine.arguments[$0 + 1] }),
    let jobs = Int(option("--jobs", "100")), let nodes = Int(option("--nodes", "50")), nodes >= 2,
    let tick = Int(option("--tick-ms", "50")), let seconds = Int(option("--seconds", "20"))
else {
    FileHandle.standardError.write(
        Data("usage: jobs-load-bench --postgres URL [--jobs N] [--nodes N] [--tick-ms N] [--seconds N]\n".utf8))
    exit(2)
}
let prefix = option("--prefix", "load")

var options = ProgressJobStore.Options()
options.maximumConnections = 16
let store = try ProgressJobStore(url: url, options: options)
let running = Task { try await store.run() }

/// Large enough that a count of milliseconds since 1970 never finishes a child.
let total: Int64 = 1 << 50
var publications: [ProgressJobPublication] = []
var children: [ProgressNode] = []
var roots: [ProgressNode] = []
for index in 0..<jobs {
    let root = ProgressNode(totalUnitCount: Int64(nodes - 1))
    root.localizedDescription = "load job \(index)"
    for child in 0..<(nodes - 1) {
        let node = ProgressNode(totalUnitCount: total, parent: root, pendingUnitCount: 1)
        node.localizedDescription = "node \(child)"
        children.append(node)
    }
    roots.append(root)
    publications.append(try await store.publish(root, jobID: "\(prefix)-\(index)"))
}
FileHandle.standardOutput.write(Data("published \(jobs) jobs of \(nodes) nodes\n".utf8))

let start = ContinuousClock.now
var changes = 0
let before = store.diagnostics
while ContinuousClock.now - start < .seconds(seconds) {
    let now = wallMilliseconds()
    for child in children { child.completedUnitCount = now }
    changes += children.count
    try await Task.sleep(for: .milliseconds(tick))
}
let after = store.diagnostics
let elapsed = (ContinuousClock.now - start)
let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
for root in roots { root.cancel() }
for publication in publications { await publication.finish() }
let line = """
    {"seconds":\(elapsedSeconds),"jobs":\(jobs),"nodes":\(nodes),"tickMilliseconds":\(tick),\
    "statements":\(after.statements - before.statements),"rowsWritten":\(after.rowsWritten - before.rowsWritten),\
    "heartbeats":\(after.heartbeats - before.heartbeats),"nodeChanges":\(changes)}
    """
FileHandle.standardOutput.write(Data((line + "\n").utf8))
running.cancel()
_ = await running.result
