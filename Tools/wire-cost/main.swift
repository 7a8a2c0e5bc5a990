// wire-cost: what a line of the wire format costs each side, in one process, without sockets or threads.
//
//   swift build -c release --product wire-cost && .build/release/wire-cost [lines]
//
// The publisher side: a root like scenario 17's (a count changed between walks), published to a sink that
// keeps the bytes, one walk per change: CPU per walk and its line written; then walks of the unchanged
// tree. The reading side: those lines handed, one line a read (as a mount of many publishers reads them),
// to the path a mount applies its reads with (split, parse, apply to the mirror), and the parse alone.
// CPU is this thread's (CLOCK_THREAD_CPUTIME_ID).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProgressTree
import ProgressTreeStreaming
import Synchronization

func threadNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func report(_ what: String, nanoseconds: Int64, count: Int) {
    let each = Double(nanoseconds) / Double(count)
    print(what + String(repeating: " ", count: max(1, 48 - what.count)) + String(Int(each.rounded())) + " ns")
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let total = Int64.max / 4

// Publisher: one walk per change of the root's count.
let root = ProgressNode.discreteProgress(totalUnitCount: total)
let written = Mutex<[[UInt8]]>([])
var options = ProgressPublisher.Options()
options.publishesOnTimer = false
let publisher = ProgressPublisher(root, options: options) { bytes in
    written.withLock { $0.append(bytes) }
    return true
}
publisher.start()
written.withLock { $0.reserveCapacity(count + 2) }
let base = Int64(1_700_000_000_000_000_000 % total)
var start = threadNanoseconds()
for index in 0..<count {
    root.completedUnitCount = base + Int64(index) * 10_000_017
    publisher.publishChanges()
}
report("publisher: walk + line, root changed", nanoseconds: threadNanoseconds() - start, count: count)
start = threadNanoseconds()
for _ in 0..<count { publisher.publishChanges() }
report("publisher: walk, nothing changed", nanoseconds: threadNanoseconds() - start, count: count)
let lines = written.withLock { $0 }
print("lines: \(lines.count), \(lines.dropFirst().first?.count ?? 0) bytes each (with the newline)")
if let sample = lines.dropFirst().first { print(String(decoding: sample, as: UTF8.self), terminator: "") }

// Reader: the parse alone.
start = threadNanoseconds()
var parsed = 0
for line in lines {
    line.withUnsafeBytes { raw in
        let line = UnsafeRawBufferPointer(rebasing: raw[0..<raw.count - 1])
        if (try? ProgressWireRecord(bytes: line)) != nil { parsed += 1 }
    }
}
report("reader: parse", nanoseconds: threadNanoseconds() - start, count: lines.count)

// Reader: what a mount does with each read (split, parse, apply to its mirror).
let parent = ProgressNode(totalUnitCount: 1)
let mount = ProgressMount.unread(below: parent, name: "publisher 1")
start = threadNanoseconds()
for line in lines {
    _ = line.withUnsafeBytes { raw in mount.applyMeasuredRead(raw) }
}
report("reader: split + parse + apply (a mount's read)", nanoseconds: threadNanoseconds() - start, count: lines.count)
guard parsed == lines.count, mount.node.completedUnitCount == root.completedUnitCount else {
    print("mismatch: parsed \(parsed) of \(lines.count), mirrored \(mount.node.completedUnitCount)")
    exit(1)
}
