import Foundation
import ProgressTree
import ProgressTreeStreaming

// Mounts a tree served over HTTP by its URL (`mountConnection(url:)`) and prints the mirrored root's
// state as it changes: exits 0 once the mirror finished, 1 with the reason when it failed (the
// cross-machine test, Tests/cross-machine/http-mount.sh).
//
//   http-mount-probe http://10.200.1.1:8080/events [reconnection limit in seconds, 10 by default]

let url = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:8080/events"
var options = ProgressMount.Options()
if let seconds = CommandLine.arguments.dropFirst(2).first.flatMap(Double.init) {
    options.reconnectionLimit = .milliseconds(Int(seconds * 1000))
}
let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
let mount: ProgressMount
do {
    mount = try parent.mountConnection(url: url, pendingUnitCount: 1, name: "probe", options: options)
} catch {
    FileHandle.standardOutput.write(Data("failed: \(error)\n".utf8))
    exit(1)
}

func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

var last = ""
while !mount.hasEnded {
    let node = mount.node
    let state = node.isFinished ? "finished" : node.isCancelled ? "cancelled" : "running"
    let now =
        "\(state) \(node.completedUnitCount)/\(node.totalUnitCount) reconnections: \(mount.diagnostics.reconnections)"
    if now != last { say(now) }
    last = now
    usleep(50_000)
}
let node = mount.node
let diagnostics = mount.diagnostics
say(
    "end: \(node.isFinished ? "finished" : "not finished") \(node.completedUnitCount)/\(node.totalUnitCount)"
        + " reconnections: \(diagnostics.reconnections) finishedWhileAway: \(diagnostics.finishedWhileAway)"
        + " ignoredLines: \(diagnostics.ignoredLines)")
if let failure = node.failure {
    say("failed: \(failure)")
    exit(1)
}
exit(node.isFinished ? 0 : 1)
