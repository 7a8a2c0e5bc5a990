// web-readers-bench: what many readers of one served tree cost (issue 37's goals: 100 event-stream clients
// cost the server ≤ 5% of one core above a single client; a change reaches a client within 200 ms at p99;
// ≤ 64 KB a connection). Linux only (it reads the server's /proc entries).
//
//   swift build -c release --package-path Integrations/ProgressTreeWeb --product web-readers-bench
//   Integrations/ProgressTreeWeb/.build/release/web-readers-bench [--clients 100] [--seconds 10]
//
// It starts itself with `--serve` as the server: a tree of a ticker and 19 photos, the ticker's count set to
// k at exactly t0 + k × 10 ms (CLOCK_MONOTONIC), one photo advanced at each tick, served by
// `ProgressWebServer` at its default interval (50 ms). Then, in this process, one client reads /events for
// the window, then all the clients do, for another window of the same length. For each window it reports
// the server's CPU (utime + stime from /proc/PID/stat, % of one core), its resident memory (VmRSS), and the
// wait of each change at each client: from the tick that made it to the moment the client read a ticker
// line that includes it (a change just after a walk waits about one interval).

import Dispatch
import ProgressTree
import ProgressTreeStreaming
import ProgressTreeWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let period: UInt64 = 10_000_000  // ns between ticks

/// Writes `text` to standard error (unbuffered).
func printError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

// MARK: The server

func serve() async throws -> Never {
    let root = ProgressNode.discreteProgress(totalUnitCount: 20)
    root.localizedDescription = "Bench"
    let ticker = ProgressNode(totalUnitCount: 1 << 50, parent: root, pendingUnitCount: 1)
    ticker.localizedDescription = "ticker"
    let photos = (1...19).map { index in
        let photo = ProgressNode(totalUnitCount: 1 << 40, parent: root, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_\(index).jpg"
        return photo
    }
    let server = ProgressWebServer(root)
    try await server.start()
    let start = monotonicNanoseconds()
    _ = "\(server.url ?? "") \(start)\n".withCString { write(1, $0, strlen($0)) }
    var tick: UInt64 = 0
    while true {
        tick += 1
        let due = start + tick * period
        let now = monotonicNanoseconds()
        if due > now { try await Task.sleep(for: .nanoseconds(Int64(due - now))) }
        ticker.completedUnitCount = Int64(tick)
        photos[Int(tick % 19)].advance(by: 1000)
    }
}

// MARK: The clients

/// One reader of /events on a non-blocking socket.
final class Reader {
    let descriptor: Int32
    private var pending: [UInt8] = []
    private var lastTick: UInt64 = 0
    private(set) var bytes = 0
    private static let marker = Array(#""id":2,"parent":1,"#.utf8)
    private static let completed = Array(#""completed":"#.utf8)

    /// Where `needle` first is in `bytes[from..<to]` (memchr for its first byte, then memcmp).
    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        var offset = from
        let base = bytes.baseAddress!
        while to - offset >= needle.count {
            guard let hit = memchr(base + offset, Int32(needle[0]), to - offset - needle.count + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + at, needle, needle.count) == 0 { return at }
            offset = at + 1
        }
        return nil
    }

    init(port: UInt16) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(connected == 0, "connect: \(errno)")
        let request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
        _ = request.withCString { write(descriptor, $0, strlen($0)) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Reads what came; appends the wait of each tick it learnt of (ns) when `recording`.
    func read(into buffer: inout [UInt8], start: UInt64, recording: Bool, waits: inout [UInt64]) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            let now = monotonicNanoseconds()
            bytes += count
            pending.append(contentsOf: buffer[0..<count])
            // Whole lines only: the ticker's data lines say its count (found with memchr and memcmp: this process
            // reads every client's bytes on one thread, and must keep up for its times to be the server's).
            guard let lastNewline = pending.lastIndex(of: 0x0A) else { continue }
            let newest = pending.withUnsafeBytes { bytes -> UInt64 in
                var newest: UInt64 = 0
                var offset = 0
                let end = lastNewline + 1
                while offset < end, let found = Self.find(Self.marker, in: bytes, from: offset, to: end) {
                    let at = found + Self.marker.count
                    guard let field = Self.find(Self.completed, in: bytes, from: at, to: end) else { break }
                    var digit = field + Self.completed.count
                    var value: UInt64 = 0
                    while digit < end, bytes[digit] >= 0x30, bytes[digit] <= 0x39 {
                        value = value * 10 + UInt64(bytes[digit] - 0x30)
                        digit += 1
                    }
                    newest = max(newest, value)
                    offset = digit
                }
                return newest
            }
            if newest > lastTick {
                if recording, lastTick > 0 {
                    for tick in (lastTick + 1)...newest { waits.append(now &- (start + tick * period)) }
                }
                lastTick = newest
            }
            pending.removeSubrange(0...lastNewline)
        }
    }
}

struct Window {
    var cpuPercent = 0.0
    var residentKB = 0
    var waits: [UInt64] = []
    var bytes = 0
}

func cpuTicks(_ pid: pid_t) -> Int {
    guard let file = fopen("/proc/\(pid)/stat", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 4096)
    guard fgets(&line, 4096, file) != nil else { return 0 }
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // After the command's closing parenthesis: state is field 3; utime and stime are fields 14 and 15.
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
}

func residentKB(_ pid: pid_t) -> Int {
    guard let file = fopen("/proc/\(pid)/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, 512, file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") { return Int(text.split(separator: " ")[1]) ?? 0 }
    }
    return 0
}

/// Reads every reader for `seconds` (after `warmUp` seconds not recorded); the server's CPU over the window.
func measure(_ readers: [Reader], server: pid_t, start: UInt64, warmUp: Double, seconds: Double) -> Window {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var window = Window()
    var polls = readers.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    let begin = monotonicNanoseconds()
    let recordFrom = begin + UInt64(warmUp * 1e9)
    let end = recordFrom + UInt64(seconds * 1e9)
    var cpuBefore: Int?
    var bytesBefore = 0
    while true {
        let now = monotonicNanoseconds()
        if now >= end { break }
        if cpuBefore == nil, now >= recordFrom {
            cpuBefore = cpuTicks(server)
            bytesBefore = readers.reduce(0) { $0 + $1.bytes }
        }
        _ = poll(&polls, nfds_t(polls.count), 20)
        for (index, entry) in polls.enumerated() where entry.revents != 0 {
            readers[index].read(into: &buffer, start: start, recording: cpuBefore != nil, waits: &window.waits)
            polls[index].revents = 0
        }
    }
    let ticks = cpuTicks(server) - (cpuBefore ?? 0)
    window.cpuPercent = Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds * 100
    window.residentKB = residentKB(server)
    window.bytes = readers.reduce(0) { $0 + $1.bytes } - bytesBefore
    return window
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
}

func describe(_ name: String, _ window: Window, clients: Int, seconds: Double) {
    let waits = window.waits.sorted()
    print(
        "\(name): server CPU \(format2(window.cpuPercent))% of one core, RSS \(window.residentKB) KB, "
            + "\(waits.count) waits: p50 \(format2(percentile(waits, 0.5))) ms, p99 \(format2(percentile(waits, 0.99))) ms, "
            + "max \(format2(percentile(waits, 1))) ms; \(window.bytes / max(clients, 1) / Int(seconds)) B/s a client")
}

func format2(_ value: Double) -> String {
    guard value.isFinite else { return "-" }
    let hundredths = Int((value * 100).rounded())
    return "\(hundredths / 100).\(String(repeating: "0", count: hundredths % 100 < 10 ? 1 : 0))\(hundredths % 100)"
}

// MARK: Main

var arguments = CommandLine.arguments.dropFirst()
var clients = 100
var seconds = 10.0
while let argument = arguments.popFirst() {
    switch argument {
    case "--serve": try await serve()
    case "--clients": clients = arguments.popFirst().flatMap { Int($0) } ?? clients
    case "--seconds": seconds = arguments.popFirst().flatMap { Double($0) } ?? seconds
    default:
        printError("usage: web-readers-bench [--clients N] [--seconds S]\n")
        exit(2)
    }
}

// The server: this program with --serve, its standard output piped back for its first line.
var pipeEnds: [Int32] = [0, 0]
precondition(pipe(&pipeEnds) == 0)
let serverPID = fork()
if serverPID == 0 {
    dup2(pipeEnds[1], 1)
    close(pipeEnds[0])
    let path = CommandLine.arguments[0]
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("--serve"), nil]
    execv(path, argv)
    _exit(127)
}
close(pipeEnds[1])
var firstLine: [UInt8] = []
var byte: UInt8 = 0
while read(pipeEnds[0], &byte, 1) == 1, byte != 0x0A { firstLine.append(byte) }
let parts = String(decoding: firstLine, as: UTF8.self).split(separator: " ")
guard parts.count == 2, let start = UInt64(parts[1]),
    let port = parts[0].split(separator: ":").last.flatMap({ UInt16($0.dropLast()) })
else {
    printError("web-readers-bench: the server said \(String(decoding: firstLine, as: UTF8.self))\n")
    kill(serverPID, SIGTERM)
    exit(1)
}
print("server pid \(serverPID) at \(parts[0]); \(clients) clients, windows of \(seconds) s")
var readers = [Reader(port: port)]
let single = measure(readers, server: serverPID, start: start, warmUp: 2, seconds: seconds)
describe("1 client", single, clients: 1, seconds: seconds)
for _ in 1..<clients { readers.append(Reader(port: port)) }
let many = measure(readers, server: serverPID, start: start, warmUp: 2, seconds: seconds)
describe("\(clients) clients", many, clients: clients, seconds: seconds)
print(
    "above a single client: \(format2(many.cpuPercent - single.cpuPercent))% of one core (goal ≤ 5); "
        + "memory \(format2(Double(many.residentKB - single.residentKB) / Double(clients - 1))) KB a connection "
        + "(goal ≤ 64); p99 wait \(format2(percentile(many.waits.sorted(), 0.99))) ms (goal ≤ 200)")
kill(serverPID, SIGTERM)
var status: Int32 = 0
waitpid(serverPID, &status, 0)
