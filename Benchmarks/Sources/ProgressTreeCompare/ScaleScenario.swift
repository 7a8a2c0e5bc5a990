// Scenario 17 (scale, issue 25): one parent mounting many publishers, each changing 100 times a second.
//
//   Benchmarks/compare.sh --scale [publishers] [processes] [seconds] [interval-ms]   (defaults 1000, 50, 10, 50)
//
// a. `publishers` publishers in one child process (this executable, `--scale-publishers`), each of its own
//    root, each on its own connection to a Unix-domain socket the child listens on; the parent mounts
//    every connection (`mountConnection(path:)`).
// b. `processes` child processes (`--scale-worker`), each publishing one root on `PROGRESSTREE_FD`,
//    mounted with `mountProcess`.
// c. A chain of three levels: the parent mounts one process (`--scale-mid`) that mounts 10 workers and
//    publishes its own tree upward; beside it, in the same run, the parent mounts 10 workers directly
//    (two levels), so both see the same machine.
//
// Every publisher sets its root's completed count to the monotonic clock's reading in nanoseconds (one
// clock for every process on Linux) 100 times a second, and publishes at the default interval (50 ms), or
// at `interval-ms` (handed to the child processes in `PROGRESSTREE_SCALE_INTERVAL_MS`).
// The parent observes every mirrored root (`observe(\.completedUnitCount, on:)`, one serial queue): each
// value it receives gives the latency from the publisher's change to the parent's observer.
//
// Reported, over `seconds` of steady state (after every mount received its first line, plus 1 s, or 12 s
// while the mounts pace their publishers, the time the interval they ask for takes to settle): the
// parent's CPU time (`getrusage(RUSAGE_SELF)`: this process, the publishers excluded) over the wall time;
// its resident memory growth (from before the first mount to the steady state) per mount; the latency's
// median, 99th percentile and maximum. Goals: CPU ≤ 10% of one core, memory ≤ 64 KB a mount, p99 ≤ 200 ms;
// in the chain, the third level adds at most one publisher interval to the two-level latency.

import Dispatch
import Foundation
import ProgressTree
import ProgressTreeStreaming
import Synchronization

/// A root far from finished: its completed count is a clock reading in nanoseconds.
private let probeTotal = Int64.max / 4

/// The CPU time of this process in the kernel, in seconds (`getrusage`'s `ru_stime`).
private func systemSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
}

/// The CPU time of this process's thread named `name` (the streams' reactor is "PT.streams"), in
/// seconds, from /proc (ticks of 10 ms).
private func threadSeconds(named name: String) -> Double {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based, counting pid and name).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
    return 0
}

/// The CPU time of this process's children that ended and were waited for, in seconds
/// (`getrusage(RUSAGE_CHILDREN)`).
private func childrenSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) * 1e-6
}

/// The resident memory of this process, in bytes (/proc/self/statm).
private func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// The variable that hands the publishers' interval to the child processes, in milliseconds.
private let intervalVariable = "PROGRESSTREE_SCALE_INTERVAL_MS"

/// The publishers' options: the default interval unless the parent set `intervalVariable`.
private func publisherOptions() -> ProgressPublisher.Options {
    var options = ProgressPublisher.Options()
    if let text = ProcessInfo.processInfo.environment[intervalVariable], let milliseconds = Int(text), milliseconds > 0
    {
        options.interval = .milliseconds(milliseconds)
    }
    return options
}

/// The mounts' options: `PROGRESSTREE_SCALE_PACING=0` keeps every publisher at its own interval (no
/// `interval` requests), to measure what pacing saves.
private func mountOptions() -> ProgressMount.Options {
    var options = ProgressMount.Options()
    if ProcessInfo.processInfo.environment["PROGRESSTREE_SCALE_PACING"] == "0" { options.pacesPublisher = false }
    return options
}

/// Sets every root to the clock 100 times a second for `seconds`, then finishes them.
private func changeRoots(_ roots: [ProgressNode], seconds: Double) {
    let end = monotonicNanoseconds() + Int64(seconds * 1e9)
    var next = monotonicNanoseconds()
    while next < end {
        for root in roots { root.completedUnitCount = monotonicNanoseconds() }
        next += 10_000_000
        let wait = next - monotonicNanoseconds()
        if wait > 0 { usleep(UInt32(wait / 1_000)) }
    }
    for root in roots { root.completedUnitCount = probeTotal }
}

/// `--scale-publishers N path seconds`: N roots, each published on its own connection to the Unix-domain
/// socket at `path`, changing 100 times a second for `seconds`.
func runScalePublishers(count: Int, path: String, seconds: Double) -> Never {
    let roots = (0..<count).map { _ in ProgressNode.discreteProgress(totalUnitCount: probeTotal) }
    let listening: Int32
    do {
        listening = try ProgressSocket.listen(path: path)
    } catch {
        print("publishers: \(error)")
        exit(3)
    }
    FileHandle.standardOutput.write(Data("listening\n".utf8))
    var publishers: [ProgressPublisher] = []
    for root in roots {
        guard let connection = try? ProgressSocket.accept(listening) else { exit(4) }
        let publisher = ProgressPublisher(
            root, fileDescriptor: connection, commandDescriptor: connection, options: publisherOptions())
        publisher.start()
        publishers.append(publisher)
    }
    changeRoots(roots, seconds: seconds)
    for publisher in publishers { publisher.finish() }
    exit(0)
}

/// `--scale-worker seconds`: one root published on `PROGRESSTREE_FD`, changing 100 times a second.
func runScaleWorker(seconds: Double) -> Never {
    let root = ProgressNode.discreteProgress(totalUnitCount: probeTotal)
    guard let publisher = ProgressPublisher.inherited(for: root, options: publisherOptions()) else { exit(3) }
    publisher.start()
    changeRoots([root], seconds: seconds)
    publisher.finish()
    exit(0)
}

/// `--scale-mid K seconds`: mounts K workers and publishes its own tree on `PROGRESSTREE_FD`.
func runScaleMid(workers: Int, seconds: Double) -> Never {
    let album = ProgressNode.discreteProgress(totalUnitCount: Int64(workers))
    guard let publisher = ProgressPublisher.inherited(for: album, options: publisherOptions()) else { exit(3) }
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    let mounts = (0..<workers).compactMap {
        try? album.mountProcess(
            path: executable, arguments: ["--scale-worker", "\(seconds)"], pendingUnitCount: 1, name: "worker \($0 + 1)"
        )
    }
    publisher.start()
    for mount in mounts { mount.waitUntilEnded() }
    publisher.finish()
    exit(0)
}

/// The value an observer received last.
private final class LastValue: Sendable {
    let value = Atomic<Int64>(0)
}

/// Latencies observed, in milliseconds, while `recording`.
///
/// Two measures of the same deliveries. The **age** of each value the observer receives: the time since
/// the publisher set it. And the **wait** of each change: a value received covers every change the
/// publisher made since the value received before it, and each of those changes waited from the moment it
/// was made until then. The publishers change every 10 ms, so the changes a value covers are taken 10 ms
/// apart, back from it. A change that comes just after a walk waits about one publisher interval: the
/// wait is the latency a person sees, the age only says how fresh the displayed value is.
private final class LatencyLog: Sendable {
    private let values = Mutex<[Double]>([])
    private let waits = Mutex<[Double]>([])
    let recording = Atomic<Bool>(false)

    /// `sent` is the value received, `previous` the value the same node had before it (0: none known).
    func record(_ sent: Int64, previous: Int64 = 0) {
        guard recording.load(ordering: .relaxed), sent > 0, sent < probeTotal else { return }
        let now = monotonicNanoseconds()
        let milliseconds = Double(now - sent) / 1e6
        values.withLock { $0.append(milliseconds) }
        guard previous > 0, previous < sent else { return }
        var covered: [Double] = []
        var change = sent
        while change > previous, covered.count < 1000 {
            covered.append(Double(now - change) / 1e6)
            change -= 10_000_000
        }
        waits.withLock { $0.append(contentsOf: covered) }
    }

    /// "median 52.0 ms, p99 98.1 ms, max 110.2 ms (12345 changes)" for the waits, and its p99.
    func waitSummary() -> (text: String, median: Double, p99: Double) {
        Self.summary(of: waits.withLock { $0 }, unit: "changes")
    }

    /// "median 21.0 ms, p99 48.2 ms, max 60.1 ms (12345 values)" and the p99.
    func summary() -> (text: String, median: Double, p99: Double) {
        Self.summary(of: values.withLock { $0 }, unit: "values")
    }

    private static func summary(of values: [Double], unit: String) -> (text: String, median: Double, p99: Double) {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return ("no values", .nan, .nan) }
        let at = { (p: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        let text = String(
            format: "median %.1f ms, p99 %.1f ms, max %.1f ms (%d %@)", at(0.5), at(0.99), sorted.last!,
            sorted.count, unit)
        return (text, at(0.5), at(0.99))
    }
}

/// Waits until `condition` holds (polling), at most `seconds`; whether it did.
private func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > end { return false }
        usleep(10_000)
    }
    return true
}

/// The results of one part.
private struct Measurement {
    /// The parent's CPU over the wall time, in percent of one core: with a renderer's reads only, and with
    /// an observer on every mirrored root as well.
    var cpu: Double
    var cpuObserved: Double
    /// Resident memory growth per mount, in bytes.
    var perMount: Double
    var latency: LatencyLog
    /// The lines the mounts applied a second, and the parent's CPU time per line (first window).
    var linesPerSecond: Double
    /// The lines a second in the second window (with the observers; pacing may have moved).
    var observedLinesPerSecond: Double
    var cpuPerLine: Double
    /// The part of that CPU time spent in the kernel (reads, waits), and by the thread that reads the streams.
    var systemShare: Double
    var reactorShare: Double
}

/// One measurement of `nodes` (each a mirrored root whose count is a clock reading, below `album`), in
/// two windows of `seconds` of steady state: the first with only `album` read 15 times a second (what a
/// `TerminalRenderer` does), for the CPU and memory of mounting; the second with an observer on every
/// node as well, for the latencies.
private func measure(
    _ title: String, album: ProgressNode, nodes: @escaping () -> [ProgressNode], lines: () -> Int, expected: Int,
    baseline: Int, seconds: Double
) -> Measurement {
    let log = LatencyLog()
    guard waitFor(seconds: 60, { nodes().count == expected && nodes().allSatisfy { $0.completedUnitCount > 0 } }) else {
        print("\(title): the mounts did not all start (\(nodes().count) of \(expected))")
        exit(1)
    }
    let reader = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "renderer"))
    reader.schedule(deadline: .now(), repeating: 1.0 / 15)
    reader.setEventHandler { _ = album.fractionCompleted }
    reader.resume()
    defer { reader.cancel() }
    var linesPerSecond = 0.0
    var cpuPerLine = 0.0
    var systemShare = 0.0
    var reactorShare = 0.0
    func window(settling: Double = 1, _ body: () -> Void = {}) -> Double {
        usleep(UInt32(settling * 1e6))
        body()
        let linesBefore = lines()
        let systemBefore = systemSeconds()
        let reactorBefore = threadSeconds(named: "PT.streams")
        let cpuBefore = cpuSeconds()
        let wallBefore = monotonicNanoseconds()
        usleep(UInt32(seconds * 1e6))
        let cpu = cpuSeconds() - cpuBefore
        let wall = Double(monotonicNanoseconds() - wallBefore) / 1e9
        let received = Double(lines() - linesBefore)
        linesPerSecond = received / wall
        cpuPerLine = cpu / max(received, 1)
        systemShare = (systemSeconds() - systemBefore) / max(cpu, 1e-9)
        reactorShare = (threadSeconds(named: "PT.streams") - reactorBefore) / max(cpu, 1e-9)
        return cpu / wall * 100
    }
    // With pacing, the mounts' interval settles within a few measuring windows of the reader (2 s each, and
    // the one after a change unused).
    let cpu = window(settling: mountOptions().pacesPublisher ? 12 : 1)
    let (rate, perLine, system, reactor) = (linesPerSecond, cpuPerLine, systemShare, reactorShare)
    let resident = residentBytes()
    let queue = DispatchQueue(label: "observers")
    var observations: [ProgressObservation] = []
    let cpuObserved = window {
        observations = nodes().map { node in
            let previous = LastValue()
            return node.observe(\.completedUnitCount, on: queue) { _, change in
                log.record(change.newValue, previous: previous.value.exchange(change.newValue, ordering: .relaxed))
            }
        }
        log.recording.store(true, ordering: .relaxed)
    }
    log.recording.store(false, ordering: .relaxed)
    for observation in observations { observation.invalidate() }
    return Measurement(
        cpu: cpu, cpuObserved: cpuObserved, perMount: Double(resident - baseline) / Double(expected), latency: log,
        linesPerSecond: rate, observedLinesPerSecond: linesPerSecond, cpuPerLine: perLine, systemShare: system,
        reactorShare: reactor)
}

/// Prints a part's measurement; whether it met the goals.
private func report(_ measurement: Measurement) -> Bool {
    let latency = measurement.latency.summary()
    print(
        String(
            format: "       parent CPU %.2f%% of one core (goal ≤ 10%%); %.2f%% with an observer on every mount",
            measurement.cpu, measurement.cpuObserved))
    print(
        String(
            format:
                "       %.0f lines a second, %.1f µs of CPU a line (%.0f%% of it in the kernel, %.0f%% on the streams' thread); memory %.1f KB a mount (goal ≤ 64 KB)",
            measurement.linesPerSecond, measurement.cpuPerLine * 1e6, measurement.systemShare * 100,
            measurement.reactorShare * 100,
            measurement.perMount / 1024))
    let wait = measurement.latency.waitSummary()
    print(
        String(
            format:
                "       change → parent's observer (%.0f lines a second), the wait of each change: %@ (goal p99 ≤ 200 ms)",
            measurement.observedLinesPerSecond, wait.text))
    print("       the age of each value the observer received: \(latency.text)")
    return measurement.cpu <= 10 && measurement.perMount <= 64 * 1024 && wait.p99 <= 200
}

/// Makes `count` mounts below `album` (`mount(index)`), measures and reports them, and waits for them to
/// end; whether the goals were met and every mounted root finished.
private func measureMounts(
    _ title: String, album: ProgressNode, count: Int, seconds: Double, _ mount: (Int) throws -> ProgressMount
) throws -> Bool {
    let baseline = residentBytes()
    let mounts = try (0..<count).map(mount)
    print("    \(title):")
    let ok = report(
        measure(
            title, album: album, nodes: { mounts.map(\.node) },
            lines: { mounts.reduce(0) { $0 + $1.diagnostics.acceptedLines } },
            expected: count, baseline: baseline, seconds: seconds))
    for mount in mounts { mount.waitUntilEnded(timeout: .seconds(60)) }
    let finished = mounts.filter { $0.node.isFinished }.count
    print("       \(finished) of \(count) mounted roots finished")
    return ok && finished == count
}

/// The parent: parts a, b and c, every publisher at `intervalMilliseconds` (nil: the default).
func runScaleScenario(publishers: Int, processes: Int, seconds: Double, intervalMilliseconds: Int? = nil) {
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    let lifetime = 2 * seconds + 30  // the measure's windows, the settling before them, the chain
    var ok = true
    if let intervalMilliseconds { setenv(intervalVariable, "\(intervalMilliseconds)", 1) }
    let interval = publisherOptions().interval
    let intervalMs = Double(interval.components.seconds) * 1e3 + Double(interval.components.attoseconds) * 1e-15
    print("17  scale: one parent mounting many publishers, each changing 100 times a second (interval \(interval))")

    // a. Publishers in one child process, over a Unix-domain socket each.
    do {
        let album = ProgressNode.discreteProgress(totalUnitCount: Int64(publishers))
        let path = try ProgressSocket.privateSocketPath(named: "scale-\(getpid()).sock")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["--scale-publishers", "\(publishers)", path, "\(lifetime)"]
        let output = Pipe()
        child.standardOutput = output
        let childrenBefore = childrenSeconds()
        let started = monotonicNanoseconds()
        try child.run()
        _ = output.fileHandleForReading.availableData  // "listening"
        ok =
            try measureMounts(
                "a. \(publishers) publishers (one process, a Unix-domain socket each)", album: album, count: publishers,
                seconds: seconds
            ) { index in
                try album.mountConnection(
                    path: path, pendingUnitCount: 1, name: "publisher \(index + 1)", options: mountOptions())
            }
            && ok
        child.waitUntilExit()
        // What the other side costs, on the same machine: the publishers' process over its whole life.
        let life = Double(monotonicNanoseconds() - started) / 1e9
        print(
            String(
                format: "       the publishers' process: %.0f%% of one core over its %.0f s (not counted above)",
                (childrenSeconds() - childrenBefore) / life * 100, life))
    } catch {
        print("    a. failed: \(error)")
        ok = false
    }

    // b. Processes, each mounted with mountProcess.
    do {
        let album = ProgressNode.discreteProgress(totalUnitCount: Int64(processes))
        ok =
            try measureMounts(
                "b. \(processes) processes (mountProcess)", album: album, count: processes, seconds: seconds
            ) {
                index in
                try album.mountProcess(
                    path: executable, arguments: ["--scale-worker", "\(lifetime)"], pendingUnitCount: 1,
                    name: "worker \(index + 1)")
            } && ok
    } catch {
        print("    b. failed: \(error)")
        ok = false
    }

    // c. Three levels beside two.
    do {
        let workers = 10
        let album = ProgressNode.discreteProgress(totalUnitCount: 2)
        let chain = try album.mountProcess(
            path: executable, arguments: ["--scale-mid", "\(workers)", "\(lifetime)"], pendingUnitCount: 1, name: "mid")
        let directAlbum = ProgressNode(totalUnitCount: Int64(workers), parent: album, pendingUnitCount: 1)
        let direct = try (0..<workers).map {
            try directAlbum.mountProcess(
                path: executable, arguments: ["--scale-worker", "\(lifetime)"], pendingUnitCount: 1,
                name: "worker \($0 + 1)")
        }
        // Both measured at once: the workers of the chain are the mid-level's mirrored roots, one level down.
        let threeLevels = LatencyLog()
        let twoLevels = LatencyLog()
        guard
            waitFor(
                seconds: 60,
                {
                    chain.node.children.count == workers && chain.node.children.allSatisfy { $0.completedUnitCount > 0 }
                        && direct.allSatisfy { $0.node.completedUnitCount > 0 }
                })
        else {
            print("    c. the chain did not start")
            exit(1)
        }
        let queue = DispatchQueue(label: "observers")
        let observations =
            chain.node.children.map { node in
                node.observe(\.completedUnitCount, on: queue) { _, change in threeLevels.record(change.newValue) }
            }
            + direct.map { mount in
                mount.node.observe(\.completedUnitCount, on: queue) { _, change in twoLevels.record(change.newValue) }
            }
        usleep(1_000_000)
        threeLevels.recording.store(true, ordering: .relaxed)
        twoLevels.recording.store(true, ordering: .relaxed)
        usleep(UInt32(seconds * 1e6))
        threeLevels.recording.store(false, ordering: .relaxed)
        twoLevels.recording.store(false, ordering: .relaxed)
        for observation in observations { observation.invalidate() }
        let two = twoLevels.summary()
        let three = threeLevels.summary()
        print(
            "    c. a chain of three levels (\(workers) workers → a process that mounts them and publishes → this one), beside \(workers) workers mounted directly:"
        )
        print("       two levels:   \(two.text)")
        print("       three levels: \(three.text)")
        print(
            String(
                format:
                    "       the third level adds %.1f ms at the median, %.1f ms at p99 (goal ≤ one interval, %.0f ms)",
                three.median - two.median, three.p99 - two.p99, intervalMs))
        ok = ok && three.median - two.median <= intervalMs && three.p99 - two.p99 <= intervalMs
        chain.waitUntilEnded(timeout: .seconds(60))
        for mount in direct { mount.waitUntilEnded(timeout: .seconds(60)) }
    } catch {
        print("    c. failed: \(error)")
        ok = false
    }
    print(ok ? "    OK" : "    GOAL MISSED")
}

/// `--scale-parse`: the time to read one line of a publisher's (`ProgressWireRecord(line:)`), for profiling
/// what a mount does with each line.
func runScaleParse(count: Int) {
    let lines = (0..<100).map { index in
        Array(
            ProgressWireRecord(
                id: 1, parentID: nil, totalUnitCount: probeTotal, completedUnitCount: Int64(index) * 12_345_678_901
            )
            .line.utf8)
    }
    let start = monotonicNanoseconds()
    var sum: Int64 = 0
    for index in 0..<count {
        guard let record = try? ProgressWireRecord(line: lines[index % lines.count]) else { exit(1) }
        sum &+= record.completedUnitCount
    }
    let elapsed = Double(monotonicNanoseconds() - start) / Double(count)
    print(String(format: "reading a line of %d bytes: %.0f ns (checksum %d)", lines[0].count, elapsed, sum & 0xFF))
}
