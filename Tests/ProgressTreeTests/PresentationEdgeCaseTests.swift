import ProgressTree
import XCTest

/// Edge cases of the presentation helpers and of the estimates shown to a person, found in review. Each
/// test states the expected values exactly; none sleeps.
final class PresentationEdgeCaseTests: XCTestCase {
    // MARK: Estimates of a cancelled node

    /// A cancelled node never finishes: an estimated "— 1 minute remaining" (growing as the rate decays)
    /// and a rate in bytes per second are wrong on it. Values set by the user are still shown.
    func test_a_cancelled_node_shows_no_estimated_rate_or_time_remaining() {
        let clock = ManualProgressClock()
        let copy = ProgressNode.discreteProgress(totalUnitCount: 10_000_000)
        copy.kind = .file
        copy.fileOperationKind = .copying
        copy.estimationClock = clock
        _ = copy.localizedAdditionalDescription  // the first sample
        for _ in 1...5 {
            clock.advance(by: .seconds(1))
            copy.advance(by: 100_000)
        }
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB (100 KB/s) — 2 minutes remaining")

        copy.cancel()
        XCTAssertNil(copy.throughput)
        XCTAssertNil(copy.estimatedTimeRemaining)
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB")
        clock.advance(by: .seconds(30))
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB")

        copy.throughput = 2_000
        copy.estimatedTimeRemaining = 60
        XCTAssertEqual(copy.localizedAdditionalDescription, "500 KB of 10 MB (2 KB/s) — 1 minute remaining")
    }

    /// The children of a cancelled root are cancelled too: a file line below it shows no estimates either.
    func test_a_file_below_a_cancelled_root_shows_no_estimates() {
        let clock = ManualProgressClock()
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root.estimationClock = clock
        let file = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1)
        file.kind = .file
        _ = file.localizedAdditionalDescription
        clock.advance(by: .seconds(1))
        file.advance(by: 100_000)
        XCTAssertEqual(file.localizedAdditionalDescription, "100 KB of 1 MB (100 KB/s) — 9 seconds remaining")
        root.cancel()
        XCTAssertEqual(file.localizedAdditionalDescription, "100 KB of 1 MB")
        XCTAssertEqual(root.localizedAdditionalDescription, "0 of 1")
    }

    // MARK: Step flows

    /// A duration longer than `Int64.max` nanoseconds (292 years) is accepted by `init` but used to trap
    /// ("Double value cannot be converted to Int64") when an interactive transition was cancelled or finished.
    func test_a_very_long_step_flow_duration_does_not_trap_in_interactive_transitions() {
        let start = ContinuousClock.now
        let long = Duration.seconds(20_000_000_000)  // 634 years
        var flow = StepFlow(duration: long, easing: .linear)
        flow.push(progress: 0.5, at: start - long)  // settled at 0.5 by `start`
        XCTAssertTrue(flow.beginInteractiveTransition(.pop, at: start))
        flow.updateInteractiveTransition(0.5)
        flow.cancelInteractiveTransition(at: start)  // animates back over half the duration
        let halfway = flow.display(at: start + long / 4)
        XCTAssertEqual(halfway.progress, 0.5)
        XCTAssertEqual(halfway.visibility, 0.75)
        XCTAssertTrue(halfway.isTransitioning)
        let end = flow.display(at: start + long / 2)
        XCTAssertEqual(end, StepFlow.Display(progress: 0.5, visibility: 1, stepIndex: 0, stepCount: 1, isTransitioning: false))

        XCTAssertTrue(flow.beginInteractiveTransition(.pop, at: start + long))
        flow.updateInteractiveTransition(0.25)
        flow.finishInteractiveTransition(at: start + long)  // the remaining three quarters
        XCTAssertEqual(flow.display(at: start + long + long * 3 / 8).visibility, 0.375)
        XCTAssertEqual(
            flow.display(at: start + long * 2),
            StepFlow.Display(progress: 0.5, visibility: 0, stepIndex: nil, stepCount: 0, isTransitioning: false))
    }
}
