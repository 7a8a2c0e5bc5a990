// Scenario 14 (mounting): a child process doing 1,000,000 updates a second, mounted in this process.
//
//   Benchmarks/compare.sh --mount [seconds]
//
// The child (this executable, `--mount-child`) publishes a root with two children over the descriptor the
// parent hands on (`PROGRESSTREE_FD`, default throttle): `work`, advanced by 1 a million times a second
// (paced by the clock, 1,000 updates a millisecond), and `probe`, set every ~37 ms to the monotonic clock's
// reading in nanoseconds (one clock for every process on Linux). The parent mounts it (`mountProcess`) and
// observes the mirrored probe: each value it receives gives the latency from the child's update to the
// parent's observer. The parent's CPU time (`getrusage(RUSAGE_SELF)`: this process only, not the child)
// over the wall time is the cost of mounting. Goals: under 5% of one core; every change observed within
// 100 ms.

import Dispatch
import Foundation
import ProgressTree
import ProgressTreeStreaming
import Synchronization

func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) * 1e-6
}

/// The child: `--mount-child seconds`.
func runMountChild(seconds: Double) -> Never {
    let root = ProgressNode.discreteProgress(totalUnitCount: 2)
    root.localizedDescription = "child"
    let large = Int64.max / 4
    let work = ProgressNode(totalUnitCount: large, parent: root, pendingUnitCount: 1)
    let probe = ProgressNode(totalUnitCount: large, parent: root, pendingUnitCount: 1)
    guard let publisher = ProgressPublisher.inherited(for: root) else {
        FileHandle.standardError.write(Data("--mount-child: no PROGRESSTREE_FD\n".utf8))
        exit(3)
    }
    publisher.start()
    let start = monotonicNanoseconds()
    let end = start + Int64(seconds * 1e9)
    var updates: Int64 = 0
    var nextProbe = start
    while true {
        let now = monotonicNanoseconds()
        if now >= end { break }
        // 1,000,000 updates a second: catch up with the clock, 1 unit per update.
        let due = (now - start) / 1_000
        while updates < due {
            work.advance(by: 1)
            updates += 1
        }
        if now >= nextProbe {
            probe.completedUnitCount = monotonicNanoseconds()
            nextProbe = now + 37_000_000
        }
    }
    work.completedUnitCount = large
    probe.completedUnitCount = large
    publisher.finish()
    print("child: \(updates) updates in \(String(format: "%.2f", Double(monotonicNanoseconds() - start) / 1e9)) s")
    exit(0)
}

/// The parent: mounts the child and reports the cost and the latencies.
func runMountScenario(seconds: Double) {
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
    let cpuBefore = cpuSeconds()
    let wallBefore = monotonicNanoseconds()
    let mount: ProgressMount
    do {
        mount = try parent.mountProcess(
            path: executable, arguments: ["--mount-child", "\(seconds)"], pendingUnitCount: 1, name: "child")
    } catch {
        print("mount: cannot start the child: \(error)")
        exit(1)
    }
    // The mirrored probe is the root's second child.
    var probe: ProgressNode?
    while probe == nil && !mount.hasEnded {
        let children = mount.node.children
        if children.count == 2 { probe = children[1] } else { usleep(1_000) }
    }
    let latencies = Mutex<[Double]>([])
    let queue = DispatchQueue(label: "observer")
    let observation = probe?.observe(\.completedUnitCount, on: queue) { _, change in
        let sent = change.newValue
        guard sent > 0, sent < Int64.max / 8 else { return }
        let milliseconds = Double(monotonicNanoseconds() - sent) / 1e6
        latencies.withLock { $0.append(milliseconds) }
    }
    mount.waitUntilEnded()
    observation?.invalidate()
    let wall = Double(monotonicNanoseconds() - wallBefore) / 1e9
    let cpu = cpuSeconds() - cpuBefore
    let values = latencies.withLock { $0 }.sorted()
    let percentile = { (p: Double) -> Double in
        values.isEmpty ? .nan : values[min(values.count - 1, Int(Double(values.count) * p))]
    }
    let share = cpu / wall * 100
    print(
        "14  mount: child at 1M updates/s for \(seconds) s, default throttle (\(ProgressPublisher.Options().interval))")
    print(String(format: "    parent CPU: %.3f s of %.2f s wall = %.2f%% of one core (goal < 5%%)", cpu, wall, share))
    print(
        String(
            format:
                "    change → parent's observer: %d samples, median %.1f ms, p99 %.1f ms, max %.1f ms (goal ≤ 100 ms)",
            values.count, percentile(0.5), percentile(0.99), values.last ?? .nan))
    print("    mirrored root: \(mount.node.isFinished ? "finished" : "NOT finished"), \(mount.exitDescription ?? "?")")
    let ok = share < 5 && (values.last ?? .infinity) <= 100 && mount.node.isFinished && !values.isEmpty
    print(ok ? "    OK" : "    GOAL MISSED")
}
