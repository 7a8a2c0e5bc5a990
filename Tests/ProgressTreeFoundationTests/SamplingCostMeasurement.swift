#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
@testable import ProgressTreeFoundation
import XCTest

/// Docs/Performance.md, "Adopted Foundation.Progress objects": what sampling costs while nothing changes,
/// and how long a change takes to reach an observer of the root. A measurement, not a check: it runs only
/// when asked, in a release build:
///
///     PROGRESSTREE_MEASURE_SAMPLING=1 swift test -c release --filter SamplingCostMeasurement
#if canImport(Glibc)
private let RUSAGE_SELF_WHO = RUSAGE_SELF.rawValue
#else
private let RUSAGE_SELF_WHO = RUSAGE_SELF
#endif

final class SamplingCostMeasurement: XCTestCase {
    private static var isRequested: Bool { ProcessInfo.processInfo.environment["PROGRESSTREE_MEASURE_SAMPLING"] == "1" }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF_WHO, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    func test_measure_1000_idle_adopted_progress_objects_for_10_seconds() throws {
        try XCTSkipUnless(Self.isRequested, "set PROGRESSTREE_MEASURE_SAMPLING=1 to measure")
        let root = ProgressNode(totalUnitCount: 1_000)
        var objects: [Progress] = []
        for _ in 0..<1_000 {
            let progress = Progress.discreteProgress(totalUnitCount: 100)
            progress.completedUnitCount = 40
            root.addChild(progress, withPendingUnitCount: 1)
            objects.append(progress)
        }
        XCTAssertEqual(ProgressSampler.shared.status.mirrors, 1_000)
        Thread.sleep(forTimeInterval: 1)  // settle
        let wall = ContinuousClock.now
        let cpu = Self.cpuSeconds()
        Thread.sleep(forTimeInterval: 10)
        let used = Self.cpuSeconds() - cpu
        let elapsed = wall.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print(
            String(
                format: "1,000 idle adopted Progress objects: %.4f s of CPU in %.2f s = %.3f%% of one core", used,
                seconds, used / seconds * 100))
        let ticks = 300
        let tickCPU = Self.cpuSeconds()
        for _ in 0..<ticks { ProgressSampler.shared.sampleNow() }
        let perSample = (Self.cpuSeconds() - tickCPU) / Double(ticks * 1_000) * 1e9
        print(String(format: "one sample of an idle Progress: %.0f ns (%d ticks of 1,000, by hand)", perSample, ticks))
        for progress in objects { progress.cancel() }
        ProgressSampler.shared.sampleNow()
    }

    func test_measure_how_long_a_change_takes_to_reach_an_observer_of_the_root() throws {
        try XCTSkipUnless(Self.isRequested, "set PROGRESSTREE_MEASURE_SAMPLING=1 to measure")
        let root = ProgressNode(totalUnitCount: 1)
        let progress = Progress.discreteProgress(totalUnitCount: 1_000)
        root.addChild(progress, withPendingUnitCount: 1)
        let seen = Mutex2()
        let observation = root.observe(\.fractionCompleted, on: DispatchQueue(label: "observer")) { _, change in
            seen.set(change.newValue)
        }
        var latencies: [Double] = []
        for probe in 1...200 {
            Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.04))  // not in step with the timer
            let start = ContinuousClock.now
            let value = Double(probe) / 1_000
            ProgressSampler.shared.queue.sync { progress.completedUnitCount = Int64(probe) }
            while seen.get() != value { usleep(100) }
            let elapsed = start.duration(to: .now)
            latencies.append(Double(elapsed.components.attoseconds) * 1e-15 + Double(elapsed.components.seconds) * 1e3)
        }
        observation.invalidate()
        latencies.sort()
        print(
            String(
                format: "a change → the root's observer, %d probes: median %.1f ms, p99 %.1f ms, max %.1f ms",
                latencies.count, latencies[latencies.count / 2], latencies[latencies.count * 99 / 100], latencies.last!)
        )
        progress.cancel()
        ProgressSampler.shared.sampleNow()
    }
}

/// A `Double` shared by the observer's queue and the test.
private final class Mutex2: @unchecked Sendable {  // every access holds `lock`
    private let lock = NSLock()
    private var value = -1.0
    func set(_ newValue: Double) { lock.lock(); value = newValue; lock.unlock() }
    func get() -> Double { lock.lock(); defer { lock.unlock() }; return value }
}
