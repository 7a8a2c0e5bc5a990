import ProgressTreePresentation
import XCTest

final class StepFlowTests: XCTestCase {
    private let t0 = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    private func display(
        _ progress: Double, _ visibility: Double, index: Int?, count: Int, moving: Bool
    ) -> StepFlow.Display {
        StepFlow.Display(
            progress: progress, visibility: visibility, stepIndex: index, stepCount: count, isTransitioning: moving)
    }

    // MARK: Easing

    func test_ease_in_out_is_the_cubic_smoothstep() {
        let ease = StepFlow.Easing.easeInOut
        XCTAssertEqual([0, 0.25, 0.5, 0.75, 1].map { ease($0) }, [0, 0.15625, 0.5, 0.84375, 1])
        XCTAssertEqual(ease(-1), 0)
        XCTAssertEqual(ease(2), 1)
        XCTAssertEqual(StepFlow.Easing.linear(0.3), 0.3)
    }

    // MARK: Push, pop, hide

    func test_an_empty_flow_is_hidden_at_zero() {
        let flow = StepFlow()
        XCTAssertEqual(flow.display(at: at(0)), display(0, 0, index: nil, count: 0, moving: false))
        XCTAssertEqual(flow.steps, [])
    }

    func test_the_first_push_animates_from_hidden_like_every_other_transition() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.5, at: at(0))
        XCTAssertEqual(flow.display(at: at(0)), display(0, 0, index: 0, count: 1, moving: true))
        // e(0.25) = 0.15625; e(0.5) = 0.5
        XCTAssertEqual(flow.display(at: at(75)), display(0.078125, 0.15625, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow.display(at: at(150)), display(0.25, 0.5, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow.display(at: at(300)), display(0.5, 1, index: 0, count: 1, moving: false))
        XCTAssertEqual(flow.display(at: at(10_000)), display(0.5, 1, index: 0, count: 1, moving: false))
    }

    func test_push_animates_the_value_from_the_previous_step() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.25, at: at(0))
        flow.push(progress: 0.75, at: at(1_000))
        XCTAssertEqual(flow.display(at: at(1_000)), display(0.25, 1, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.display(at: at(1_150)), display(0.5, 1, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.display(at: at(1_300)), display(0.75, 1, index: 1, count: 2, moving: false))
    }

    func test_pop_animates_back_to_the_step_below() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.25, at: at(0))
        flow.push(progress: 0.75, at: at(1_000))
        XCTAssertEqual(flow.pop(at: at(2_000)), StepFlow.Step(progress: 0.75))
        XCTAssertEqual(flow.display(at: at(2_150)), display(0.5, 1, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow.display(at: at(2_300)), display(0.25, 1, index: 0, count: 1, moving: false))
    }

    func test_a_step_without_progress_hides_the_indicator_where_it_is() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.75, at: at(0))
        flow.push(progress: nil, at: at(1_000))
        XCTAssertEqual(flow.display(at: at(1_150)), display(0.75, 0.5, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.display(at: at(1_300)), display(0.75, 0, index: 1, count: 2, moving: false))
        // Popping back shows it again at the same value.
        flow.pop(at: at(2_000))
        XCTAssertEqual(flow.display(at: at(2_150)), display(0.75, 0.5, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow.display(at: at(2_300)), display(0.75, 1, index: 0, count: 1, moving: false))
    }

    func test_showing_again_slides_from_the_hidden_value_while_fading_in() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.25, at: at(0))
        flow.push(progress: nil, at: at(1_000))
        flow.push(progress: 0.75, at: at(2_000))
        XCTAssertEqual(flow.display(at: at(2_150)), display(0.5, 0.5, index: 2, count: 3, moving: true))
        XCTAssertEqual(flow.display(at: at(2_300)), display(0.75, 1, index: 2, count: 3, moving: false))
    }

    func test_popping_the_root_empties_the_flow_and_hides_the_indicator() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.5, at: at(0))
        flow.pop(at: at(1_000))
        XCTAssertEqual(flow.display(at: at(1_150)), display(0.5, 0.5, index: nil, count: 0, moving: true))
        XCTAssertEqual(flow.display(at: at(1_300)), display(0.5, 0, index: nil, count: 0, moving: false))
        XCTAssertNil(flow.pop(at: at(2_000)), "popping an empty flow does nothing")
        XCTAssertEqual(flow.display(at: at(2_000)), display(0.5, 0, index: nil, count: 0, moving: false))
    }

    func test_pop_to_root_animates_to_the_root() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.2, at: at(0))
        flow.push(progress: 0.4, at: at(0))
        flow.push(progress: 0.6, at: at(0))
        XCTAssertEqual(flow.popToRoot(at: at(1_000)), [StepFlow.Step(progress: 0.4), StepFlow.Step(progress: 0.6)])
        XCTAssertEqual(flow.steps, [StepFlow.Step(progress: 0.2)])
        XCTAssertEqual(flow.display(at: at(1_150)), display(0.5 * 0.6 + 0.5 * 0.2, 1, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow.display(at: at(1_300)), display(0.2, 1, index: 0, count: 1, moving: false))
        XCTAssertEqual(flow.popToRoot(at: at(2_000)), [], "nothing above the root")
    }

    func test_an_operation_during_an_animation_starts_from_what_is_on_screen() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.5, at: at(0))
        flow.push(progress: 1, at: at(150))  // on screen: 0.25 at visibility 0.5
        XCTAssertEqual(flow.display(at: at(150)), display(0.25, 0.5, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.display(at: at(300)), display(0.625, 0.75, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.display(at: at(450)), display(1, 1, index: 1, count: 2, moving: false))
    }

    func test_linear_easing_and_zero_duration() {
        var linear = StepFlow(duration: .milliseconds(400), easing: .linear)
        linear.push(progress: 1, at: at(0))
        XCTAssertEqual(linear.display(at: at(100)), display(0.25, 0.25, index: 0, count: 1, moving: true))
        var immediate = StepFlow(duration: .zero)
        immediate.push(progress: 0.3, at: at(0))
        XCTAssertEqual(immediate.display(at: at(0)), display(0.3, 1, index: 0, count: 1, moving: false))
    }

    func test_progress_is_clamped_and_nan_means_none() {
        XCTAssertEqual(StepFlow.Step(progress: 1.5).progress, 1)
        XCTAssertEqual(StepFlow.Step(progress: -1).progress, 0)
        XCTAssertNil(StepFlow.Step(progress: .nan).progress)
    }

    func test_sampling_is_pure_and_times_before_the_animation_show_its_start() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.5, at: at(1_000))
        let copy = flow
        XCTAssertEqual(flow.display(at: at(1_100)), flow.display(at: at(1_100)))
        XCTAssertEqual(flow.display(at: at(500)), display(0, 0, index: 0, count: 1, moving: true))
        XCTAssertEqual(flow, copy, "sampling does not change the flow")
        XCTAssertEqual(flow.settledDisplay, display(0.5, 1, index: 0, count: 1, moving: false))
    }

    // MARK: Interactive transitions

    /// A settled flow [0.1, 0.7] whose values do not interpolate exactly in binary floating point.
    private func settledTwoStepFlow() -> StepFlow {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: 0.1, at: at(0))
        flow.push(progress: 0.7, at: at(0))
        return flow
    }

    func test_an_interactive_pop_follows_the_fraction_linearly_without_changing_the_stack() {
        var flow = settledTwoStepFlow()
        XCTAssertTrue(flow.beginInteractiveTransition(.pop, at: at(1_000)))
        XCTAssertTrue(flow.isInteractive)
        XCTAssertEqual(flow.display(at: at(1_000)), display(0.7, 1, index: 1, count: 2, moving: true))
        flow.updateInteractiveTransition(0.5)
        XCTAssertEqual(flow.display(at: at(5_000)).progress, 0.5 * 0.7 + 0.5 * 0.1)
        flow.updateInteractiveTransition(1)
        XCTAssertEqual(flow.display(at: at(5_000)), display(0.1, 1, index: 1, count: 2, moving: true))
        flow.updateInteractiveTransition(-3)
        XCTAssertEqual(flow.display(at: at(5_000)), display(0.7, 1, index: 1, count: 2, moving: true))
        XCTAssertEqual(flow.steps.count, 2)
    }

    func test_a_cancelled_interactive_pop_returns_exactly_to_the_state_before_it_began() {
        var flow = settledTwoStepFlow()
        let before = flow.display(at: at(1_000))
        let stepsBefore = flow.steps
        flow.beginInteractiveTransition(.pop, at: at(1_000))
        flow.updateInteractiveTransition(0.3)
        let dragged = flow.display(at: at(1_500))
        XCTAssertEqual(dragged.progress, (1 - 0.3) * 0.7 + 0.3 * 0.1)
        XCTAssertNotEqual(dragged.progress, before.progress)

        flow.cancelInteractiveTransition(at: at(2_000))  // animates back over 0.3 × 300 ms = 90 ms
        XCTAssertFalse(flow.isInteractive)
        XCTAssertEqual(flow.display(at: at(2_000)).progress, dragged.progress, "no jump when cancelling")
        XCTAssertTrue(flow.display(at: at(2_089)).isTransitioning)
        XCTAssertEqual(flow.display(at: at(2_090)), before, "value and visibility restored exactly")
        XCTAssertEqual(flow.steps, stepsBefore)
    }

    /// An interactive transition begun while an animation runs starts from what is on screen then, but a
    /// cancellation settles where that animation was heading (the state of the unchanged stack), not on the
    /// frame that was on screen when the transition began.
    func test_cancelling_an_interactive_transition_begun_mid_animation_settles_where_that_animation_was_heading() {
        var flow = StepFlow(duration: .milliseconds(300), easing: .linear)
        flow.push(progress: 0.2, at: at(0))
        flow.push(progress: 0.8, at: at(1_000))  // animating 0.2 → 0.8 until 1_300
        XCTAssertEqual(flow.display(at: at(1_150)).progress, 0.5)
        flow.beginInteractiveTransition(.pop, at: at(1_150))
        XCTAssertEqual(flow.display(at: at(1_150)).progress, 0.5, "the transition starts from the screen")
        flow.updateInteractiveTransition(0.5)
        XCTAssertEqual(flow.display(at: at(1_200)).progress, 0.35)
        flow.cancelInteractiveTransition(at: at(1_200))  // animates back over 0.5 × 300 ms
        XCTAssertEqual(flow.display(at: at(1_200)).progress, 0.35, "no jump when cancelling")
        XCTAssertEqual(flow.display(at: at(1_350)), display(0.8, 1, index: 1, count: 2, moving: false))
    }

    func test_a_cancelled_interactive_pop_that_was_hiding_restores_the_visibility_exactly() {
        var flow = StepFlow(duration: .milliseconds(300))
        flow.push(progress: nil, at: at(0))
        flow.push(progress: 0.3, at: at(0))
        let before = flow.display(at: at(1_000))
        XCTAssertEqual(before, display(0.3, 1, index: 1, count: 2, moving: false))
        flow.beginInteractiveTransition(.pop, at: at(1_000))
        flow.updateInteractiveTransition(0.7)
        XCTAssertEqual(flow.display(at: at(1_000)).visibility, (1 - 0.7) * 1 + 0.7 * 0)
        XCTAssertEqual(flow.display(at: at(1_000)).progress, 0.3)
        flow.cancelInteractiveTransition(at: at(1_100), animated: false)
        XCTAssertEqual(flow.display(at: at(1_100)), before)
    }

    func test_a_completed_interactive_pop_animates_the_rest_of_the_way_and_pops() {
        var flow = settledTwoStepFlow()
        flow.beginInteractiveTransition(.pop, at: at(1_000))
        flow.updateInteractiveTransition(0.5)
        flow.finishInteractiveTransition(at: at(2_000))  // the remaining half: 150 ms
        XCTAssertFalse(flow.isInteractive)
        XCTAssertEqual(flow.steps, [StepFlow.Step(progress: 0.1)])
        XCTAssertEqual(flow.display(at: at(2_000)).progress, 0.5 * 0.7 + 0.5 * 0.1)
        XCTAssertEqual(flow.display(at: at(2_000)).stepCount, 1)
        XCTAssertTrue(flow.display(at: at(2_149)).isTransitioning)
        XCTAssertEqual(flow.display(at: at(2_150)), display(0.1, 1, index: 0, count: 1, moving: false))
    }

    func test_a_completed_interactive_transition_without_animation_lands_at_once() {
        var flow = settledTwoStepFlow()
        flow.beginInteractiveTransition(.popToRoot, at: at(1_000))
        flow.updateInteractiveTransition(0.2)
        flow.finishInteractiveTransition(at: at(1_100), animated: false)
        XCTAssertEqual(flow.display(at: at(1_100)), display(0.1, 1, index: 0, count: 1, moving: false))
    }

    func test_an_interactive_push_can_be_cancelled() {
        var flow = StepFlow(duration: .milliseconds(300))
        XCTAssertTrue(flow.beginInteractiveTransition(.push(StepFlow.Step(progress: 0.9)), at: at(0)))
        flow.updateInteractiveTransition(0.5)
        XCTAssertEqual(flow.display(at: at(0)), display(0.45, 0.5, index: nil, count: 0, moving: true))
        flow.cancelInteractiveTransition(at: at(10))
        XCTAssertEqual(flow.display(at: at(160)), display(0, 0, index: nil, count: 0, moving: false))
        XCTAssertEqual(flow.steps, [])
    }

    func test_an_interactive_transition_that_would_change_nothing_does_not_begin() {
        var flow = StepFlow()
        XCTAssertFalse(flow.beginInteractiveTransition(.pop, at: at(0)))
        flow.push(progress: 0.5, at: at(0))
        XCTAssertFalse(flow.beginInteractiveTransition(.popToRoot, at: at(0)))
        XCTAssertFalse(flow.isInteractive)
    }

    func test_an_operation_during_an_interactive_transition_cancels_it_first() {
        var flow = settledTwoStepFlow()
        flow.beginInteractiveTransition(.pop, at: at(1_000))
        flow.updateInteractiveTransition(0.5)
        flow.push(progress: 1, at: at(1_000))
        XCTAssertFalse(flow.isInteractive)
        XCTAssertEqual(flow.steps.map(\.progress), [0.1, 0.7, 1])
        XCTAssertEqual(flow.display(at: at(1_000)), display(0.7, 1, index: 2, count: 3, moving: true))
        XCTAssertEqual(flow.display(at: at(1_300)), display(1, 1, index: 2, count: 3, moving: false))
    }

    func test_finishing_or_cancelling_without_an_interactive_transition_does_nothing() {
        var flow = settledTwoStepFlow()
        let before = flow
        flow.updateInteractiveTransition(0.5)
        flow.finishInteractiveTransition(at: at(1_000))
        flow.cancelInteractiveTransition(at: at(1_000))
        XCTAssertEqual(flow, before)
    }

    // MARK: Durations beyond Int64 nanoseconds

    /// A duration longer than `Int64.max` nanoseconds (292 years) is accepted by `init`; the remaining part
    /// of an interactive transition is then scaled as a `Duration`, exactly, without converting to `Int64`.
    func test_interactive_transitions_scale_durations_longer_than_Int64_nanoseconds() {
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
        XCTAssertEqual(
            end, StepFlow.Display(progress: 0.5, visibility: 1, stepIndex: 0, stepCount: 1, isTransitioning: false))

        XCTAssertTrue(flow.beginInteractiveTransition(.pop, at: start + long))
        flow.updateInteractiveTransition(0.25)
        flow.finishInteractiveTransition(at: start + long)  // the remaining three quarters
        XCTAssertEqual(flow.display(at: start + long + long * 3 / 8).visibility, 0.375)
        XCTAssertEqual(
            flow.display(at: start + long * 2),
            StepFlow.Display(progress: 0.5, visibility: 0, stepIndex: nil, stepCount: 0, isTransitioning: false))
    }
}

extension StepFlowTests {
    func test_guide_step_flow() {
        let start = ContinuousClock.now
        var drawn: [StepFlow.Display] = []
        func draw(_ display: StepFlow.Display) { drawn.append(display) }

        // BEGIN snippet: presentation-step-flow
        var flow = StepFlow(duration: .milliseconds(300))  // easing: .easeInOut
        flow.push(progress: 0.25, at: start)  // "Address": fades in, sliding to 25%
        flow.push(progress: 0.5, at: start + .milliseconds(1_000))  // "Payment": slides to 50%

        // A swipe back that the user abandons halfway:
        flow.beginInteractiveTransition(.pop, at: start + .milliseconds(2_000))
        flow.updateInteractiveTransition(0.5)  // follows the finger: 37.5%
        flow.cancelInteractiveTransition(at: start + .milliseconds(2_100))  // animates back for 150 ms

        // On every frame (display link, TimelineView, timer):
        let display = flow.display(at: start + .milliseconds(2_250))
        draw(display)  // progress 0.5, visibility 1, stepIndex 1: exactly as before the swipe
        // END snippet: presentation-step-flow

        XCTAssertEqual(
            drawn, [StepFlow.Display(progress: 0.5, visibility: 1, stepIndex: 1, stepCount: 2, isTransitioning: false)])
        XCTAssertEqual(flow.display(at: start + .milliseconds(2_100)).progress, 0.375)
    }
}
