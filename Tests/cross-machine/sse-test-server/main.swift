import Foundation
import ProgressTree
import ProgressTreePlatform
import TestSupport

// A served tree for the cross-machine test (Tests/cross-machine/http-mount.sh): the contract of
// Docs/WireFormat.md, "Over HTTP", with scripted lines. Its root has `--steps` units; at each walk
// (`--interval` ms apart) the child of the last walk finishes (its unit credited to the root) and a new
// child appears half done. A connection gets the current lines, `synced`, then each walk's lines; the
// root's final line ends the stream and the program exits 2 seconds later.
//
//   sse-test-server --host 10.200.1.2 --port 8080 [--steps 40] [--interval 250]

var arguments = [String: String]()
var pending = CommandLine.arguments.dropFirst().makeIterator()
while let name = pending.next(), let value = pending.next() { arguments[name] = value }
let host = arguments["--host"] ?? "127.0.0.1"
let port = UInt16(arguments["--port"] ?? "8080") ?? 8080
let steps = Int(arguments["--steps"] ?? "40") ?? 40
let interval = Double(arguments["--interval"] ?? "250") ?? 250

/// The current line of each node the stream names and that is still in the tree, by id, and the walk.
struct Tree: Sendable {
    var walk = 1
    var lines: [Int: String] = [:]
}

func line(_ id: Int, parent: Int?, completed: Int64, total: Int64, state: ProgressWireRecord.State) -> String {
    var record = ProgressWireRecord(
        id: id, parentID: parent, pendingUnitCount: parent == nil ? 0 : 1, totalUnitCount: total,
        completedUnitCount: completed)
    record.state = state
    record.localizedDescription = parent == nil ? "Rendering \(steps) frames" : "frame \(id - 1)"
    return record.line
}

let tree = Lock(Tree())
let server = try TestEventServer(host: host, port: port, token: nil) {
    tree.withLock { tree in
        "retry: 500\n\n" + tree.lines.keys.sorted().map { EventText.event(tree.lines[$0]!, id: tree.walk) }.joined()
            + EventText.synced(tree.walk)
    }
}
FileHandle.standardError.write(Data("serving \(server.url())\n".utf8))
tree.withLock { $0.lines[1] = line(1, parent: nil, completed: 0, total: Int64(steps), state: .running) }
for step in 0...steps {
    Thread.sleep(forTimeInterval: interval / 1000)
    let text = tree.withLock { tree -> String in
        tree.walk += 1
        var written: [String] = []
        if step > 0 {
            let finished = line(step + 1, parent: 1, completed: 2, total: 2, state: .finished)
            tree.lines[step + 1] = nil
            written.append(finished)
        }
        let root = line(
            1, parent: nil, completed: Int64(step), total: Int64(steps), state: step == steps ? .finished : .running)
        tree.lines[1] = root
        if step < steps {
            let child = line(step + 2, parent: 1, completed: 1, total: 2, state: .running)
            tree.lines[step + 2] = child
            written += [root, child]
        } else {
            written.append(root)
        }
        return written.map { EventText.event($0, id: tree.walk) }.joined()
    }
    server.send(text)
}
Thread.sleep(forTimeInterval: 2)
server.stop()
