import Dispatch
import ProgressTree
import ProgressTreePresentation
import Synchronization
import XCTest
import ProgressTreePlatform

/// One call of the pacer's handler: when (milliseconds after the scheduler's origin) and what.
private struct PacedDelivery: Equatable, CustomStringConvertible {
    var ms: Int
    var progress: Double?
    var label: String?

    init(_ ms: Int, _ progress: Double?, _ label: String?) {
        self.ms = ms
        self.progress = progress
        self.label = label
    }

    var description: String { "@\(ms) (\(progress.map { "\($0)" } ?? "nil"), \(label ?? "nil"))" }
}

private func wholeMilliseconds(_ duration: Duration) -> Int {
    let (quotient, remainder) = duration.totalAttoseconds.quotientAndRemainder(dividingBy: 1_000_000_000_000_000)
    precondition(remainder == 0, "not a whole number of milliseconds: \(duration)")
    return Int(quotient)
}

/// A pacer on a manual scheduler, with a record of every delivery.
private final class PacerHarness: Sendable {
    private final class Recorder: Sendable {
        let deliveries = Lock<[PacedDelivery]>([])
    }

    let scheduler = ManualPresentationScheduler()
    private let recorder = Recorder()
    let pacer: LabelPacer

    init(minimumDisplayTime: Duration = .milliseconds(250), maximumLag: Duration? = nil, maximumPendingLabels: Int = 16)
    {
        let scheduler = scheduler
        let recorder = recorder
        pacer = LabelPacer(
            minimumDisplayTime: minimumDisplayTime, maximumLag: maximumLag,
            maximumPendingLabels: maximumPendingLabels, scheduler: scheduler
        ) { display in
            recorder.deliveries.withLock {
                $0.append(PacedDelivery(wholeMilliseconds(scheduler.elapsed), display.progress, display.label))
            }
        }
    }

    /// Advances to `ms`, sends the message, and lets the pacer take its turn (as a queue would at once).
    func send(at ms: Int, _ progress: Double?, _ label: String?) {
        scheduler.advance(toMilliseconds: ms)
        pacer.send(progress: progress, label: label)
        scheduler.advance(by: .zero)
    }

    func reset(at ms: Int) {
        scheduler.advance(toMilliseconds: ms)
        pacer.reset()
        scheduler.advance(by: .zero)
    }

    var recorded: [PacedDelivery] { recorder.deliveries.withLock { $0 } }

    /// The labels in the order they appeared, with the time each appeared.
    var labelChanges: [(ms: Int, label: String?)] {
        var changes: [(ms: Int, label: String?)] = []
        var current: String?? = .none
        for delivery in recorded where current != .some(delivery.label) {
            changes.append((delivery.ms, delivery.label))
            current = .some(delivery.label)
        }
        return changes
    }
}

final class LabelPacerTests: XCTestCase {
    // MARK: Single message, minimum display time

    func test_a_single_message_is_shown_at_once_and_stays() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.5, "Connecting")
        harness.scheduler.advance(toMilliseconds: 10_000)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.5, "Connecting")])
        XCTAssertEqual(harness.pacer.lastDelivered, LabelPacer.Display(progress: 0.5, label: "Connecting"))
        XCTAssertEqual(harness.pacer.pendingLabelCount, 0)
        XCTAssertEqual(harness.scheduler.scheduledActionCount, 0, "an idle pacer leaves no timer behind")
    }

    func test_nothing_is_delivered_before_the_scheduler_runs() {
        let harness = PacerHarness()
        harness.pacer.send(progress: 0.5, label: "A")
        XCTAssertEqual(harness.recorded, [])
        XCTAssertNil(harness.pacer.lastDelivered)
        harness.scheduler.advance(by: .zero)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.5, "A")])
    }

    func test_a_label_stays_for_the_minimum_display_time_before_the_next_replaces_it() {
        let harness = PacerHarness()
        harness.send(at: 0, nil, "A")
        harness.send(at: 100, nil, "B")
        harness.scheduler.advance(toMilliseconds: 249)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, nil, "A")], "A must stay 250 ms")
        harness.scheduler.advance(toMilliseconds: 250)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, nil, "A"), PacedDelivery(250, nil, "B")])
    }

    func test_the_minimum_display_time_is_configurable() {
        let harness = PacerHarness(minimumDisplayTime: .milliseconds(1_000))
        harness.send(at: 0, nil, "A")
        harness.send(at: 100, nil, "B")
        harness.scheduler.advance(toMilliseconds: 999)
        XCTAssertEqual(harness.recorded.last, PacedDelivery(0, nil, "A"))
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(harness.recorded.last, PacedDelivery(1_000, nil, "B"))
        XCTAssertEqual(harness.pacer.minimumDisplayTime, .milliseconds(1_000))
        XCTAssertEqual(harness.pacer.maximumLag, .milliseconds(1_000), "the default lag is the minimum display time")
    }

    func test_a_label_arriving_when_the_screen_is_free_is_shown_at_once() {
        let harness = PacerHarness()
        harness.send(at: 0, nil, "A")
        harness.send(at: 400, nil, "B")
        harness.send(at: 650, nil, "C")
        XCTAssertEqual(
            harness.recorded, [PacedDelivery(0, nil, "A"), PacedDelivery(400, nil, "B"), PacedDelivery(650, nil, "C")])
    }

    // MARK: Progress

    func test_progress_only_messages_are_shown_at_once_without_waiting_for_the_label() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.1, "A")
        harness.send(at: 50, 0.2, nil)
        harness.send(at: 60, 0.3, "B")
        harness.send(at: 70, 0.4, nil)
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, 0.1, "A"), PacedDelivery(50, 0.2, "A"), PacedDelivery(60, 0.3, "A"),
                PacedDelivery(70, 0.4, "A"),
                PacedDelivery(250, 0.4, "B"),
            ])
    }

    func test_messages_between_two_turns_coalesce_into_one_delivery_of_the_latest_progress() {
        let harness = PacerHarness()
        for step in 1...1_000 { harness.pacer.send(progress: Double(step) / 1_000, label: nil) }
        XCTAssertEqual(harness.scheduler.scheduledActionCount, 1, "one turn for a thousand messages")
        harness.scheduler.advance(by: .zero)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 1.0, nil)])
    }

    func test_progress_is_clamped_and_nan_leaves_it_unchanged() {
        let harness = PacerHarness()
        harness.send(at: 0, 1.5, nil)
        harness.send(at: 1, .nan, "A")
        harness.send(at: 2, -3, nil)
        XCTAssertEqual(
            harness.recorded, [PacedDelivery(0, 1, nil), PacedDelivery(1, 1, "A"), PacedDelivery(2, 0, "A")])
    }

    /// NaN is "no progress", so NaN with no label is an empty message, and an empty message resets: the
    /// progress is cleared at once (not left unchanged) and the label goes after its minimum time.
    func test_nan_progress_with_no_label_is_an_empty_message_and_resets() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.4, "A")
        harness.send(at: 100, .nan, nil)
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(
            harness.recorded, [PacedDelivery(0, 0.4, "A"), PacedDelivery(100, nil, "A"), PacedDelivery(250, nil, nil)])
    }

    func test_an_unchanged_display_is_not_delivered_again() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.5, "A")
        harness.send(at: 10, 0.5, nil)
        harness.send(at: 20, 0.5, "A")
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.5, "A")])
    }

    func test_a_repeated_label_is_not_a_new_label() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.1, "Copying")
        harness.send(at: 100, 0.2, "Copying")
        harness.send(at: 200, 0.3, "Copying")
        XCTAssertEqual(harness.pacer.pendingLabelCount, 0)
        harness.send(at: 260, 0.4, "Done")
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, 0.1, "Copying"), PacedDelivery(100, 0.2, "Copying"),
                PacedDelivery(200, 0.3, "Copying"),
                PacedDelivery(260, 0.4, "Done"),
            ],
            "repeating the label did not restart its minimum time")
    }

    // MARK: Reset

    func test_reset_clears_the_progress_at_once_and_the_label_after_its_minimum_time() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.4, "A")
        harness.reset(at: 100)
        XCTAssertEqual(harness.recorded.last, PacedDelivery(100, nil, "A"))
        harness.scheduler.advance(toMilliseconds: 249)
        XCTAssertEqual(harness.recorded.last, PacedDelivery(100, nil, "A"))
        harness.scheduler.advance(toMilliseconds: 250)
        XCTAssertEqual(
            harness.recorded, [PacedDelivery(0, 0.4, "A"), PacedDelivery(100, nil, "A"), PacedDelivery(250, nil, nil)])
    }

    func test_reset_after_the_minimum_time_clears_everything_at_once() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.4, "A")
        harness.reset(at: 300)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.4, "A"), PacedDelivery(300, nil, nil)])
    }

    func test_an_empty_message_resets() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.4, "A")
        harness.send(at: 300, nil, nil)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.4, "A"), PacedDelivery(300, nil, nil)])
    }

    func test_reset_discards_waiting_labels() {
        let harness = PacerHarness(maximumLag: .seconds(10))
        harness.send(at: 0, 0.1, "A")
        harness.send(at: 10, 0.2, "B")
        harness.send(at: 20, 0.3, "C")
        XCTAssertEqual(harness.pacer.pendingLabelCount, 2)
        harness.reset(at: 30)
        XCTAssertEqual(harness.pacer.pendingLabelCount, 1, "only the blank that replaces A")
        harness.scheduler.advance(toMilliseconds: 5_000)
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, 0.1, "A"), PacedDelivery(10, 0.2, "A"), PacedDelivery(20, 0.3, "A"),
                PacedDelivery(30, nil, "A"),
                PacedDelivery(250, nil, nil),
            ])
    }

    func test_work_starting_again_after_a_reset_shows_its_progress_at_once_and_its_label_when_the_screen_is_free() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.9, "Old")
        harness.reset(at: 100)
        harness.send(at: 150, 0.1, "New")
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, 0.9, "Old"), PacedDelivery(100, nil, "Old"), PacedDelivery(150, 0.1, "Old"),
                PacedDelivery(250, 0.1, "New"),
            ])
    }

    func test_reset_of_an_empty_display_delivers_nothing() {
        let harness = PacerHarness()
        harness.reset(at: 0)
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(harness.recorded, [])
    }

    // MARK: Bursts and the drop policy

    /// The worked timeline of Docs/Presentation.md.
    func test_worked_timeline_of_the_guide() {
        let harness = PacerHarness()
        harness.send(at: 0, nil, "A")
        harness.send(at: 100, nil, "B")
        harness.send(at: 200, nil, "C")
        harness.send(at: 600, nil, "D")
        harness.scheduler.advance(toMilliseconds: 2_000)
        XCTAssertEqual(
            harness.recorded, [PacedDelivery(0, nil, "A"), PacedDelivery(250, nil, "C"), PacedDelivery(600, nil, "D")])
        XCTAssertEqual(naiveFIFOShowTimes(arrivals: [0, 100, 200, 600], minimumDisplayTime: 250), [0, 250, 500, 750])
    }

    func test_bursts_keep_a_bounded_lag_where_the_naive_fifo_falls_further_behind_with_each_burst() {
        // Six bursts, one a second, of five labels 10 ms apart: 1250 ms of reading time a second.
        let harness = PacerHarness()
        var arrivals: [Int] = []
        var labels: [String] = []
        for burst in 0..<6 {
            for index in 0..<5 {
                let ms = burst * 1_000 + index * 10
                let progress = Double(burst * 5 + index + 1) / 30
                harness.send(at: ms, progress, "burst \(burst) label \(index)")
                XCTAssertEqual(harness.pacer.lastDelivered?.progress, progress, "the latest progress is shown at once")
                XCTAssertLessThanOrEqual(harness.pacer.pendingLabelCount, 1)
                arrivals.append(ms)
                labels.append("burst \(burst) label \(index)")
            }
        }
        harness.scheduler.advance(toMilliseconds: 10_000)

        // The last label of each burst: when the naive FIFO and the pacer put it on screen.
        let fifo = naiveFIFOShowTimes(arrivals: arrivals, minimumDisplayTime: 250)
        let lastOfBurst = (0..<6).map { (burst: Int) -> Int in burst * 5 + 4 }
        let fifoLags = lastOfBurst.map { (index: Int) -> Int in fifo[index] - arrivals[index] }
        XCTAssertEqual(
            fifoLags, [960, 1_210, 1_460, 1_710, 1_960, 2_210], "the FIFO falls 250 ms further behind per burst")

        let changes = harness.labelChanges
        let pacedLags = lastOfBurst.map { (index: Int) -> Int? in
            changes.first { $0.label == labels[index] }.map { $0.ms - arrivals[index] }
        }
        XCTAssertEqual(pacedLags, [210, 210, 210, 210, 210, 210], "the pacer's lag does not grow")
        XCTAssertEqual(
            changes.map(\.ms), [0, 250, 1_000, 1_250, 2_000, 2_250, 3_000, 3_250, 4_000, 4_250, 5_000, 5_250])
        XCTAssertEqual(harness.recorded.last, PacedDelivery(5_250, 1, "burst 5 label 4"))
        assertInvariants(harness, maximumLagMilliseconds: 250, arrivals: Array(zip(arrivals, labels)))
    }

    func test_a_larger_maximum_lag_shows_more_of_a_stream_and_stays_within_it() {
        let harness = PacerHarness(maximumLag: .milliseconds(500))
        var sent: [(Int, String)] = []
        for index in 0...10 {
            harness.send(at: index * 50, nil, "L\(index)")
            sent.append((index * 50, "L\(index)"))
        }
        harness.scheduler.advance(toMilliseconds: 5_000)
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, nil, "L0"), PacedDelivery(250, nil, "L1"), PacedDelivery(500, nil, "L5"),
                PacedDelivery(750, nil, "L10"),
            ])
        assertInvariants(harness, maximumLagMilliseconds: 500, arrivals: sent)
    }

    /// The drop rule's boundary is inclusive: a waiting label goes when the label after it has waited
    /// exactly `maximumLag − minimumDisplayTime`. B and C arrive together at 0 with A on screen; at 250 C has
    /// waited exactly 500 − 250 ms, so B is dropped and C shown at once (showing B first would have kept C
    /// waiting the whole `maximumLag`).
    func test_the_drop_rule_boundary_is_inclusive() {
        let harness = PacerHarness(maximumLag: .milliseconds(500))
        harness.send(at: 0, nil, "A")
        harness.send(at: 0, nil, "B")
        harness.send(at: 0, nil, "C")
        XCTAssertEqual(harness.pacer.pendingLabelCount, 2)
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(harness.labelChanges.map(\.ms), [0, 250])
        XCTAssertEqual(harness.labelChanges.map(\.label), ["A", "C"])
    }

    func test_an_unbounded_maximum_lag_is_the_naive_fifo() {
        let harness = PacerHarness(maximumLag: .seconds(1_000))
        let arrivals = [0, 100, 200, 600]
        for (ms, label) in zip(arrivals, ["A", "B", "C", "D"]) { harness.send(at: ms, nil, label) }
        harness.scheduler.advance(toMilliseconds: 2_000)
        XCTAssertEqual(harness.labelChanges.map(\.ms), naiveFIFOShowTimes(arrivals: arrivals, minimumDisplayTime: 250))
    }

    func test_the_backlog_never_holds_more_than_maximumPendingLabels_and_drops_the_oldest() {
        let harness = PacerHarness(maximumLag: .seconds(1_000), maximumPendingLabels: 3)
        harness.send(at: 0, nil, "L0")
        for index in 1...9 {
            harness.send(at: index, nil, "L\(index)")
            XCTAssertLessThanOrEqual(harness.pacer.pendingLabelCount, 3)
        }
        XCTAssertEqual(harness.pacer.pendingLabelCount, 3)
        harness.scheduler.advance(toMilliseconds: 5_000)
        XCTAssertEqual(
            harness.recorded,
            [
                PacedDelivery(0, nil, "L0"), PacedDelivery(250, nil, "L7"), PacedDelivery(500, nil, "L8"),
                PacedDelivery(750, nil, "L9"),
            ])
    }

    func test_a_continuous_fast_stream_keeps_the_newest_label_on_screen_within_the_minimum_time() {
        let harness = PacerHarness()
        var sent: [(Int, String)] = []
        for index in 0..<200 {  // a label every 7 ms for 1.4 s
            harness.send(at: index * 7, Double(index) / 199, "L\(index)")
            sent.append((index * 7, "L\(index)"))
            XCTAssertEqual(harness.pacer.lastDelivered?.progress, Double(index) / 199)
        }
        harness.scheduler.advance(toMilliseconds: 5_000)
        XCTAssertEqual(harness.labelChanges.map(\.ms), [0, 250, 500, 750, 1_000, 1_250, 1_500])
        XCTAssertEqual(harness.labelChanges.map(\.label), ["L0", "L35", "L71", "L107", "L142", "L178", "L199"])
        assertInvariants(harness, maximumLagMilliseconds: 250, arrivals: sent)
    }

    // MARK: Lifetime and re-entrancy

    /// `lastDelivered` names only a display the handler received: a turn that chose a display but was
    /// overtaken by `invalidate()` (here called while the turn schedules its timer) leaves it unchanged.
    func test_lastDelivered_names_only_a_display_the_handler_received() {
        let scheduler = HookedScheduler()
        let received = Lock<[LabelPacer.Display]>([])
        let pacer = LabelPacer(scheduler: scheduler) { display in received.withLock { $0.append(display) } }
        pacer.send(progress: 0.1, label: "A")
        scheduler.base.advance(by: .zero)
        scheduler.beforeTimer.withLock { $0 = { pacer.invalidate() } }
        scheduler.base.advance(toMilliseconds: 100)
        pacer.send(progress: 0.2, label: "B")  // the turn chooses (0.2, "A") and sets a timer for B
        scheduler.base.advance(by: .zero)
        XCTAssertEqual(received.withLock { $0 }, [LabelPacer.Display(progress: 0.1, label: "A")])
        XCTAssertEqual(pacer.lastDelivered, LabelPacer.Display(progress: 0.1, label: "A"))
    }

    func test_invalidate_stops_deliveries_and_ignores_later_messages() {
        let harness = PacerHarness()
        harness.send(at: 0, 0.1, "A")
        harness.send(at: 10, 0.2, "B")
        harness.pacer.invalidate()
        harness.send(at: 20, 0.3, "C")
        harness.scheduler.advance(toMilliseconds: 1_000)
        XCTAssertEqual(harness.recorded, [PacedDelivery(0, 0.1, "A"), PacedDelivery(10, 0.2, "A")])
    }

    func test_the_handler_may_send_messages() {
        let scheduler = ManualPresentationScheduler()
        let shown = Lock<[LabelPacer.Display]>([])
        let pacerBox = Lock<LabelPacer?>(nil)
        let pacer = LabelPacer(scheduler: scheduler) { display in
            shown.withLock { $0.append(display) }
            if display.label == "A" { pacerBox.withLock { $0 }?.send(progress: 1, label: nil) }
        }
        pacerBox.withLock { $0 = pacer }
        pacer.send(progress: 0, label: "A")
        scheduler.advance(by: .zero)
        XCTAssertEqual(shown.withLock { $0 }, [.init(progress: 0, label: "A"), .init(progress: 1, label: "A")])
        pacerBox.withLock { $0 = nil }
    }

    func test_parameters_are_brought_into_range() {
        let pacer = LabelPacer(
            minimumDisplayTime: .milliseconds(300), maximumLag: .milliseconds(100), maximumPendingLabels: 0,
            scheduler: ManualPresentationScheduler()
        ) { _ in }
        XCTAssertEqual(pacer.maximumLag, .milliseconds(300))
        XCTAssertEqual(pacer.maximumPendingLabels, 1)
    }

    // MARK: Helpers

    /// When the naive FIFO puts each label on screen: in order, each for `minimumDisplayTime`.
    private func naiveFIFOShowTimes(arrivals: [Int], minimumDisplayTime: Int) -> [Int] {
        var shown: [Int] = []
        for arrival in arrivals { shown.append(max(arrival, (shown.last ?? Int.min / 2) + minimumDisplayTime)) }
        return shown
    }

    /// Checks the pacer's guarantees on a recorded run: every label but the last stayed at least 250 ms; the
    /// screen moved on within `maximumLag` of the first newer label's arrival; labels appeared in order; the
    /// last label sent is on screen at the end.
    private func assertInvariants(
        _ harness: PacerHarness, maximumLagMilliseconds: Int, arrivals: [(ms: Int, label: String)],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let changes = harness.labelChanges
        let arrivalIndex = Dictionary(uniqueKeysWithValues: arrivals.enumerated().map { ($0.element.label, $0.offset) })
        var previousIndex = -1
        for (position, change) in changes.enumerated() {
            guard let label = change.label, let index = arrivalIndex[label] else {
                return XCTFail("unexpected label \(String(describing: change.label))", file: file, line: line)
            }
            XCTAssertGreaterThan(index, previousIndex, "labels appear in order", file: file, line: line)
            XCTAssertLessThanOrEqual(change.ms - arrivals[index].ms, maximumLagMilliseconds, file: file, line: line)
            if position + 1 < changes.count {
                XCTAssertGreaterThanOrEqual(
                    changes[position + 1].ms - change.ms, 250, "minimum display time", file: file, line: line)
                // From the first label newer than this one, the screen moved on within the maximum lag.
                XCTAssertLessThanOrEqual(
                    changes[position + 1].ms - arrivals[index + 1].ms, maximumLagMilliseconds, "bounded lag",
                    file: file, line: line)
            }
            previousIndex = index
        }
        XCTAssertEqual(
            changes.last?.label, arrivals.last?.label, "the newest label is never dropped", file: file, line: line)
    }
}

/// The pacer on real Dispatch queues and threads (run under ThreadSanitizer by `.ci/run`).
final class LabelPacerConcurrencyTests: XCTestCase {
    /// `invalidate()` from another thread while the handler runs returns only after that call has finished,
    /// and no call starts after it returns; from inside the handler it returns at once (no self-deadlock).
    func test_invalidate_waits_for_a_running_handler_and_no_call_starts_after_it() {
        let ui = DispatchQueue(label: "ui")
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let pacer = LabelPacer(minimumDisplayTime: .zero, queue: ui) { _ in
            if calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                started.signal()
                release.wait()
                finished.store(true, ordering: .sequentiallyConsistent)
            }
        }
        pacer.send(progress: 0.5, label: "first")
        started.wait()
        let returned = expectation(description: "invalidate returned")
        let finishedAtReturn = Atomic<Bool>(false)
        let callsAtReturn = Atomic<Int>(0)
        DispatchQueue.global().async {
            pacer.invalidate()
            finishedAtReturn.store(finished.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            callsAtReturn.store(calls.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            returned.fulfill()
        }
        pacer.send(progress: 0.6, label: "second")  // delivered before the invalidation, or never
        release.signal()
        wait(for: [returned], timeout: 10)
        ui.sync {}  // every turn scheduled so far has run
        XCTAssertTrue(finishedAtReturn.load(ordering: .sequentiallyConsistent), "returned during the call")
        XCTAssertEqual(
            calls.load(ordering: .sequentiallyConsistent), callsAtReturn.load(ordering: .sequentiallyConsistent))

        let box = Lock<LabelPacer?>(nil)
        let inside = expectation(description: "invalidate from inside the handler returned")
        let selfStopping = LabelPacer(minimumDisplayTime: .zero, queue: DispatchQueue(label: "ui.2")) { _ in
            box.withLock { $0 }?.invalidate()
            inside.fulfill()
        }
        box.withLock { $0 = selfStopping }
        selfStopping.send(progress: 1, label: "last")
        wait(for: [inside], timeout: 10)
        box.withLock { $0 = nil }
    }
    func test_messages_from_many_threads_are_delivered_one_at_a_time_on_the_queue_and_end_with_the_last() {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "ui", attributes: .concurrent)  // handler calls are still serial
        queue.setSpecific(key: key, value: "ui")
        let running = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let offQueue = Atomic<Int>(0)
        let final = LabelPacer.Display(progress: 1, label: "done")
        let finalDelivered = expectation(description: "final display")
        let pacer = LabelPacer(minimumDisplayTime: .milliseconds(1), queue: queue) { display in
            if running.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                overlaps.add(1, ordering: .relaxed)
            }
            if DispatchQueue.getSpecific(key: key) != "ui" { offQueue.add(1, ordering: .relaxed) }
            if display == final { finalDelivered.fulfill() }
            running.subtract(1, ordering: .sequentiallyConsistent)
        }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<2_000 {
                pacer.send(
                    progress: Double(index) / 2_000, label: index % 10 == 0 ? "thread \(thread) item \(index)" : nil)
            }
        }
        pacer.send(progress: 1, label: "done")
        wait(for: [finalDelivered], timeout: 10)
        XCTAssertEqual(overlaps.load(ordering: .relaxed), 0)
        XCTAssertEqual(offQueue.load(ordering: .relaxed), 0)
        XCTAssertLessThanOrEqual(pacer.pendingLabelCount, 1)
        XCTAssertEqual(pacer.lastDelivered, final)
    }

    func test_dispatch_scheduler_runs_actions_in_deadline_order_on_its_queue_and_never_early() {
        let key = DispatchSpecificKey<String>()
        let target = DispatchQueue(label: "target", attributes: .concurrent)
        target.setSpecific(key: key, value: "target")
        let scheduler = DispatchPresentationScheduler(queue: target)
        let order = Lock<[String]>([])
        let early = Atomic<Int>(0)
        let allRan = expectation(description: "all ran")
        allRan.expectedFulfillmentCount = 3
        let start = scheduler.now
        for (name, delay) in [("30 ms", 30), ("10 ms", 10), ("now", 0)] {
            scheduler.schedule(after: .milliseconds(delay)) {
                if scheduler.now - start < .milliseconds(delay) { early.add(1, ordering: .relaxed) }
                order.withLock {
                    $0.append(name + (DispatchQueue.getSpecific(key: key) == "target" ? "" : " off queue"))
                }
                allRan.fulfill()
            }
        }
        wait(for: [allRan], timeout: 10)
        XCTAssertEqual(order.withLock { $0 }, ["now", "10 ms", "30 ms"])
        XCTAssertEqual(early.load(ordering: .relaxed), 0)
    }

    func test_guide_label_pacer() {
        let uiQueue = DispatchQueue(label: "ui")  // stands for DispatchQueue.main
        let statusLine = StatusLine(
            waitingFor: "Imported 3 photos", expectation: expectation(description: "last label"))
        let photos = ["beach.jpg", "dune.jpg", "sea.jpg"]
        func importPhoto(_ photo: String) {}

        // BEGIN snippet: presentation-label-pacer
        let pacer = LabelPacer(minimumDisplayTime: .milliseconds(250), queue: uiQueue) { display in
            statusLine.show(progress: display.progress, label: display.label)  // on uiQueue
        }
        for (index, photo) in photos.enumerated() {  // on any thread
            pacer.send(progress: Double(index) / Double(photos.count), label: "Importing \(photo)")
            importPhoto(photo)
        }
        pacer.send(progress: 1, label: "Imported \(photos.count) photos")
        // END snippet: presentation-label-pacer

        wait(for: [statusLine.expectation], timeout: 10)
        XCTAssertEqual(statusLine.lines.last, "100% Imported 3 photos")
        // Which of the first labels appear depends on thread timing (the pacer drops superseded ones); the
        // labels shown are always a subsequence of those sent, and the progress never goes back.
        let sentLabels = ["Importing beach.jpg", "Importing dune.jpg", "Importing sea.jpg", "Imported 3 photos"]
        var remaining = sentLabels[...]
        var lastPercent = 0
        for line in statusLine.lines {
            let (percent, label) = line.split(separator: " ", maxSplits: 1).map(String.init).splitPercent()
            XCTAssertGreaterThanOrEqual(percent, lastPercent, "\(statusLine.lines)")
            lastPercent = percent
            guard let index = remaining.firstIndex(of: label) else { return XCTFail("\(statusLine.lines)") }
            remaining = remaining[index...]
        }
    }
}

extension [String] {
    /// `["33%", "Importing dune.jpg"]` → `(33, "Importing dune.jpg")`.
    fileprivate func splitPercent() -> (Int, String) {
        (Int(self[0].dropLast()) ?? -1, count > 1 ? self[1] : "")
    }
}

/// A fake status line for the guide's snippet.
private final class StatusLine: Sendable {
    let expectation: XCTestExpectation
    private let finalLabel: String
    private let shown = Lock<[String]>([])

    init(waitingFor finalLabel: String, expectation: XCTestExpectation) {
        self.finalLabel = finalLabel
        self.expectation = expectation
    }

    var lines: [String] { shown.withLock { $0 } }

    func show(progress: Double?, label: String?) {
        shown.withLock { $0.append("\(Int((progress ?? 0) * 100))% \(label ?? "")") }
        if label == finalLabel { expectation.fulfill() }
    }
}

/// A manual scheduler that runs `beforeTimer` when a timer (a delay above zero) is scheduled: a
/// deterministic point between a turn's decision and its delivery.
private final class HookedScheduler: PresentationScheduler {
    let base = ManualPresentationScheduler()
    let beforeTimer = Lock<(@Sendable () -> Void)?>(nil)

    var now: ContinuousClock.Instant { base.now }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        if delay > .zero, let hook = beforeTimer.withLock({ $0 }) { hook() }
        base.schedule(after: delay, action)
    }
}
