import ProgressTree
import XCTest

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The smoothed rate estimator, driven by explicit times (and, for nodes, a `ManualProgressClock`): every
/// expected value below follows from the formulas in `Docs/Descriptions.md`, with τ = 5 s / ln 10.
final class ThroughputEstimatorTests: XCTestCase {
    /// 10^(−t/5): the weight left to data `t` seconds old with the default 5 s response time.
    private func decay(_ seconds: Double) -> Double { pow(10, -seconds / 5) }

    /// Samples `rate` units per second once a second from `start` for `seconds` seconds, starting at `value`.
    private func run(
        _ estimator: inout ThroughputEstimator, rate: Double, from start: Double, seconds: Int, value: inout Double
    ) {
        for second in 1...seconds {
            value += rate
            estimator.record(value, at: .seconds(start + Double(second)))
        }
    }

    // MARK: Steady rate

    func test_steady_rate_is_reported_exactly_from_the_first_growth() {
        var estimator = ThroughputEstimator()
        estimator.record(0, at: .zero)
        XCTAssertNil(estimator.rate(at: .zero), "one sample: no rate yet")
        estimator.record(100, at: .seconds(1))
        XCTAssertEqual(estimator.rate(at: .seconds(1))!, 100, accuracy: 1e-9)
        var value = 100.0
        run(&estimator, rate: 100, from: 1, seconds: 29, value: &value)
        XCTAssertEqual(estimator.rate(at: .seconds(30))!, 100, accuracy: 1e-9)
    }

    func test_steady_rate_is_exact_however_irregular_the_reads() {
        var estimator = ThroughputEstimator()
        let times: [Double] = [0, 0.013, 0.1, 0.7, 0.71, 2.3, 2.31, 7.9, 8, 15.25, 15.5, 40]
        for time in times {
            estimator.record(250 * time, at: .seconds(time))
        }
        XCTAssertEqual(estimator.rate(at: .seconds(40))!, 250, accuracy: 1e-9)
    }

    // MARK: Bursts

    func test_work_reported_in_chunks_gives_the_exact_average_with_no_sawtooth() {
        // 2,000 units arrive every 2 seconds; a renderer reads ten times a second.
        var estimator = ThroughputEstimator()
        var rates: [Double] = []
        for tick in 0...600 {
            let time = Double(tick) / 10
            let value = Double(tick / 20) * 2000
            estimator.record(value, at: .seconds(time))
            if tick >= 20, let rate = estimator.rate(at: .seconds(time)) { rates.append(rate) }
        }
        XCTAssertEqual(rates.count, 581)
        XCTAssertEqual(rates.min()!, 1000, accuracy: 1e-9)
        XCTAssertEqual(rates.max()!, 1000, accuracy: 1e-9)
    }

    func test_a_single_burst_raises_the_estimate_by_at_most_its_size_over_tau() {
        let tau = 5 / log(10.0)
        func estimateAfterBurst(lasting interval: Double) -> Double {
            var estimator = ThroughputEstimator()
            var value = 0.0
            estimator.record(0, at: .zero)
            run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)
            estimator.record(value + 10_000, at: .seconds(60 + interval))
            return estimator.rate(at: .seconds(60 + interval))!
        }
        let millisecond = estimateAfterBurst(lasting: 0.001)
        let microsecond = estimateAfterBurst(lasting: 0.000_001)
        // Bounded by 100 + N/τ ≈ 4,705, whereas the burst's own rate (Δu/Δt) is 10⁷ or 10¹⁰ units/s.
        XCTAssertLessThanOrEqual(millisecond, 100 + 10_000 / tau + 1e-6)
        XCTAssertGreaterThan(millisecond, 100 + 0.999 * 10_000 / tau)
        XCTAssertEqual(
            microsecond, millisecond, accuracy: millisecond * 0.001, "independent of how short the burst was")
        // …and it fades with the same time constant: 5 s later 90 % of the excess is gone.
        var estimator = ThroughputEstimator()
        var value = 0.0
        estimator.record(0, at: .zero)
        run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)
        value += 10_000
        estimator.record(value, at: .seconds(60.001))
        run(&estimator, rate: 100, from: 60.001, seconds: 5, value: &value)
        XCTAssertEqual(estimator.rate(at: .seconds(65.001))!, 100 + 10_000 / tau * decay(5), accuracy: 0.5)
    }

    // MARK: Stalls

    func test_a_stall_holds_for_the_usual_gap_then_decays() {
        var estimator = ThroughputEstimator()
        var value = 0.0
        estimator.record(0, at: .zero)
        run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)  // growth every second
        // Nothing moves after t = 60; reads keep coming.
        for time in stride(from: 60.0, through: 80, by: 0.5) { estimator.record(value, at: .seconds(time)) }
        XCTAssertEqual(estimator.rate(at: .seconds(60.5))!, 100, accuracy: 1e-9, "within the usual 1 s gap")
        XCTAssertEqual(estimator.rate(at: .seconds(61))!, 100, accuracy: 1e-9)
        XCTAssertEqual(estimator.rate(at: .seconds(66))!, 10, accuracy: 1e-6, "5 s beyond the gap: a tenth")
        XCTAssertEqual(estimator.rate(at: .seconds(71))!, 1, accuracy: 1e-6, "10 s beyond: a hundredth")
        XCTAssertEqual(estimator.timeRemaining(for: 1000, at: .seconds(66))!, 100, accuracy: 1e-4)
        // When work resumes, its units are spread over the whole stall: 1,050 units in 21 s is 50 per second.
        estimator.record(value + 1050, at: .seconds(81))
        XCTAssertEqual(estimator.rate(at: .seconds(81))!, 100 * decay(21) + 50 * (1 - decay(21)), accuracy: 1e-6)
    }

    func test_reading_often_or_rarely_during_a_stall_gives_the_same_estimate() {
        var often = ThroughputEstimator()
        var rarely = ThroughputEstimator()
        var value = 0.0
        often.record(0, at: .zero)
        run(&often, rate: 100, from: 0, seconds: 60, value: &value)
        rarely = often
        for time in stride(from: 60.0, through: 70, by: 0.1) { often.record(value, at: .seconds(time)) }
        XCTAssertEqual(often.rate(at: .seconds(70)), rarely.rate(at: .seconds(70)))
    }

    // MARK: Pause

    func test_paused_time_is_excluded() {
        var estimator = ThroughputEstimator()
        var value = 0.0
        estimator.record(0, at: .zero)
        run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)
        estimator.pause(at: .seconds(60))
        XCTAssertTrue(estimator.isPaused)
        for time in stride(from: 60.0, through: 1060, by: 100) { estimator.record(value, at: .seconds(time)) }
        XCTAssertEqual(estimator.rate(at: .seconds(1060))!, 100, accuracy: 1e-9, "no decay while paused")
        estimator.resume(at: .seconds(1060))
        XCTAssertFalse(estimator.isPaused)
        run(&estimator, rate: 100, from: 1060, seconds: 10, value: &value)
        XCTAssertEqual(
            estimator.rate(at: .seconds(1070))!, 100, accuracy: 1e-9, "the pause is not part of any interval")

        // The same thousand seconds without the pause is a stall.
        var unpaused = ThroughputEstimator()
        value = 0
        unpaused.record(0, at: .zero)
        run(&unpaused, rate: 100, from: 0, seconds: 60, value: &value)
        run(&unpaused, rate: 100, from: 1060, seconds: 1, value: &value)
        XCTAssertEqual(unpaused.rate(at: .seconds(1061))!, 100.0 / 1000, accuracy: 1e-3)
    }

    // MARK: Rate change

    func test_a_tenfold_speed_up_is_followed_to_90_percent_in_5_seconds() {
        var estimator = ThroughputEstimator()
        var value = 0.0
        estimator.record(0, at: .zero)
        run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)
        var secondsToNinetyPercent: Int?
        for second in 1...20 {
            value += 1000
            estimator.record(value, at: .seconds(60 + second))
            let rate = estimator.rate(at: .seconds(60 + second))!
            XCTAssertEqual(rate, 1000 - 900 * decay(Double(second)), accuracy: 1e-6, "after \(second) s")
            if secondsToNinetyPercent == nil, rate >= 900 { secondsToNinetyPercent = second }
        }
        XCTAssertEqual(secondsToNinetyPercent, 5)
    }

    func test_a_shorter_response_time_follows_faster() {
        var estimator = ThroughputEstimator(responseTime: .seconds(1))
        var value = 0.0
        estimator.record(0, at: .zero)
        run(&estimator, rate: 100, from: 0, seconds: 60, value: &value)
        value += 1000
        estimator.record(value, at: .seconds(61))
        XCTAssertEqual(estimator.rate(at: .seconds(61))!, 910, accuracy: 1e-6)
        XCTAssertEqual(ThroughputEstimator(responseTime: .seconds(-3)).responseTime, .seconds(5), "invalid: default")
    }

    // MARK: Odd input

    func test_a_decrease_resets_and_bad_values_are_ignored() {
        var estimator = ThroughputEstimator()
        estimator.record(0, at: .zero)
        estimator.record(100, at: .seconds(1))
        estimator.record(10, at: .seconds(2))  // restarted
        XCTAssertNil(estimator.rate(at: .seconds(2)))
        estimator.record(.nan, at: .seconds(3))
        estimator.record(.infinity, at: .seconds(3))
        estimator.record(40, at: .seconds(3))
        XCTAssertEqual(estimator.rate(at: .seconds(3))!, 30, accuracy: 1e-9)
        estimator.record(70, at: .seconds(1))  // a clock that went back: no time passed, so no sample
        XCTAssertEqual(estimator.rate(at: .seconds(3))!, 30, accuracy: 1e-9)
        XCTAssertNil(estimator.timeRemaining(for: -1, at: .seconds(3)))
        XCTAssertNil(estimator.timeRemaining(for: .infinity, at: .seconds(3)))
        estimator.reset()
        XCTAssertNil(estimator.rate(at: .seconds(3)))
    }

    // MARK: On nodes

    func test_a_node_samples_only_when_read_never_when_it_advances() {
        let clock = ManualProgressClock()
        let node = ProgressNode.discreteProgress(totalUnitCount: 10_000)
        node.kind = .file
        node.estimationClock = clock
        for _ in 0..<1000 {
            node.advance(by: 1)
            clock.advance(by: .milliseconds(10))
        }
        XCTAssertNil(node.throughput, "advancing took no sample: this read is the first")
        clock.advance(by: .seconds(2))
        node.advance(by: 500)
        XCTAssertEqual(node.throughput, 250, "the rate since the first read")
        XCTAssertEqual(node.estimatedTimeRemaining!, (10_000.0 - 1500) / 250, accuracy: 1e-9)
    }

    func test_time_remaining_of_a_subtree() {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        root.estimationClock = clock
        let fast = ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 5)  // 0.5 root units/s
        let slow = ProgressNode(totalUnitCount: 200, parent: root, pendingUnitCount: 5)  // 0.25 root units/s
        XCTAssertNil(root.estimatedTimeRemaining, "the first read is the first sample")
        for second in 1...4 {
            clock.advance(by: .seconds(1))
            fast.advance(by: 10)
            slow.advance(by: 10)
            XCTAssertEqual(root.estimatedTimeRemaining!, (10 - 0.75 * Double(second)) / 0.75, accuracy: 1e-9)
        }
        // Unread for 6 s; fast finishes at t = 10 and is released: the root's work (7.5 units) is continuous.
        for _ in 5...10 {
            clock.advance(by: .seconds(1))
            fast.advance(by: 10)
            slow.advance(by: 10)
        }
        XCTAssertTrue(fast.isFinished)
        XCTAssertEqual(root.description.split(separator: "\n").count, 2, "fast was released: root and slow remain")
        XCTAssertEqual(root.estimatedTimeRemaining!, 2.5 / 0.75, accuracy: 1e-9)
        // Only slow works now: the rate moves from 0.75 toward 0.25 with the 5 s response time.
        for _ in 11...15 {
            clock.advance(by: .seconds(1))
            slow.advance(by: 10)
        }
        let history = 1 - decay(10)  // ten seconds at 0.75, then five at 0.25
        let rate = (0.75 * history * decay(5) + 0.25 * (1 - decay(5))) / (history * decay(5) + (1 - decay(5)))
        XCTAssertEqual(root.estimatedTimeRemaining!, 1.25 / rate, accuracy: 1e-9)
        XCTAssertEqual(rate, 0.29955, accuracy: 1e-5)
    }

    func test_pausing_a_node_excludes_the_paused_time() {
        let clock = ManualProgressClock()
        let node = ProgressNode.discreteProgress(totalUnitCount: 1000)
        node.estimationClock = clock
        _ = node.estimatedTimeRemaining
        for _ in 1...10 {
            clock.advance(by: .seconds(1))
            node.advance(by: 10)
            _ = node.estimatedTimeRemaining
        }
        XCTAssertEqual(node.estimatedTimeRemaining!, 90, accuracy: 1e-9)
        node.pause()
        _ = node.estimatedTimeRemaining  // a renderer's read notices the pause
        clock.advance(by: .seconds(600))
        XCTAssertEqual(node.estimatedTimeRemaining!, 90, accuracy: 1e-9, "frozen, not decaying, while paused")
        node.resume()
        _ = node.estimatedTimeRemaining
        clock.advance(by: .seconds(1))
        node.advance(by: 10)
        XCTAssertEqual(node.estimatedTimeRemaining!, 89, accuracy: 1e-9)
    }

    func test_a_finished_node_has_no_time_remaining_and_no_throughput() {
        let clock = ManualProgressClock()
        let node = ProgressNode.discreteProgress(totalUnitCount: 100)
        node.kind = .file
        node.estimationClock = clock
        _ = node.throughput
        clock.advance(by: .seconds(1))
        node.completedUnitCount = 100
        XCTAssertEqual(node.estimatedTimeRemaining, 0)
        XCTAssertNil(node.throughput)
        let indeterminate = ProgressNode.discreteProgress(totalUnitCount: -1)
        XCTAssertNil(indeterminate.estimatedTimeRemaining)
    }
}
