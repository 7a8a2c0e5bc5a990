import ProgressTree
import ProgressTreePlatform
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// What a renderer does when it is called in an unusual order or from an unusual place (issue 49, items 4
/// and 6): one run per renderer, and the calls allowed from the code it runs while it draws.
final class RendererLifetimeTests: XCTestCase {
    private let drawingRule =
        "called while this renderer draws, from code it runs then (the words given to show(_:_:), its "
        + "TerminalOutput or ProgressClock, or the deinit of what a finished node held); call it from elsewhere "
        + "(print(_:) and drawFrame() may be called there)"

    /// `stop()` on a renderer that neither started nor drew has nothing to end: it writes nothing, in any
    /// mode (before, it drew a final frame of a tree that was never shown).
    func test_stop_before_start_writes_nothing() {
        for mode in [TerminalRenderer.Mode.live, .plain, .accessible, .json] {
            let output = VirtualTerminal(columns: 60, rows: 10, isTerminal: mode == .live)
            let root = makeRoot("Work", total: 4)
            let renderer = makeTestRenderer(root, mode: mode, output: output)
            renderer.stop()
            renderer.stop()
            XCTAssertEqual(output.writes, [], "\(mode)")
        }
    }

    /// A renderer that drew a frame by hand (`drawFrame()`, without `start()`) ends with its final frame.
    func test_stop_after_a_frame_drawn_by_hand_draws_the_final_frame() {
        let output = VirtualTerminal(columns: 60, rows: 10, isTerminal: false)
        let root = makeRoot("Work", total: 4)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        root.completedUnitCount = 4
        renderer.stop()
        XCTAssertEqual(output.allLines, ["[  0%] Work: started, 0 of 4", "[100%] Work: done, 4 of 4"])
    }

    /// `start()` after `stop()` stops the program with a message that says why (before, it did nothing,
    /// silently).
    func test_start_after_stop_names_the_rule() throws {
        let child = try ScenarioProcess(
            "RendererLifetimeTests/test_scenario_run_in_a_child_process", scenario: "startAfterStop")
        XCTAssertNotEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(
            child.stoppedWithMessage(
                "TerminalRenderer.start(): called after stop(); a renderer shows one run of its tree, so make a "
                    + "new TerminalRenderer for another"),
            child.output)
    }

    /// Code the renderer runs while it draws (here the words of a summary) may print: the lines come with
    /// the next frame, in every mode that prints; and `drawFrame()` there does nothing. Before, both
    /// trapped with "Recursive call to lock Mutex".
    func test_print_and_draw_frame_from_code_the_renderer_runs_while_it_draws_work() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        let box = RendererBox()
        let renderer = makeTestRenderer(root, output: terminal)
        box.renderer = renderer
        renderer.show(PhotosSkippedForTests.self) { summary in
            box.renderer?.print("read \(summary)")
            box.renderer?.drawFrame()
            return nil
        }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["• Work             ░░░░░░░░░░░   0% 0 of 4"])
        root.completedUnitCount = 2
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines, ["read 0", "• Work             █████▌░░░░░  50% 2 of 4"])
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines, ["read 0", "read 0", "• Work             █████▌░░░░░  50% 2 of 4", "read 0"])

        let log = VirtualTerminal(columns: 60, rows: 10, isTerminal: false)
        let plainBox = RendererBox()
        let plain = makeTestRenderer(makeRoot("Work", total: 4), mode: .plain, output: log)
        plainBox.renderer = plain
        plain.show(PhotosSkippedForTests.self) { _ in
            plainBox.renderer?.print("inside")
            return nil
        }
        plain.drawFrame()
        plain.stop()
        XCTAssertEqual(
            log.allLines, ["[  0%] Work: started, 0 of 4", "inside", "inside"])
    }

    /// Any other call from there stops the program with a message naming the call and the rule (before:
    /// "Recursive call to lock Mutex", naming neither the renderer nor the rule).
    func test_stop_from_code_the_renderer_runs_while_it_draws_names_the_call_and_the_rule() throws {
        let child = try ScenarioProcess(
            "RendererLifetimeTests/test_scenario_run_in_a_child_process", scenario: "stopWhileDrawing")
        XCTAssertNotEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(child.stoppedWithMessage("TerminalRenderer.stop(): " + drawingRule), child.output)
        XCTAssertFalse(child.output.contains("Recursive call to lock"), child.output)
    }

    /// The scenarios that stop the program, run in a child process (skipped in an ordinary run).
    func test_scenario_run_in_a_child_process() throws {
        let scenario = try ScenarioProcess.scenarioOfThisProcess()
        let output = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        let renderer = makeTestRenderer(root, output: output)
        switch scenario {
        case "startAfterStop":
            renderer.start()
            renderer.stop()
            renderer.start()
        case "stopWhileDrawing":
            let box = RendererBox()
            box.renderer = renderer
            renderer.show(PhotosSkippedForTests.self) { _ in
                box.renderer?.stop()
                return nil
            }
            renderer.drawFrame()
        default:
            XCTFail("unknown scenario \(scenario)")
        }
        print("NO PRECONDITION")
    }
}

/// A renderer reached from the code it runs (set after it is made).
final class RendererBox: Sendable {
    private let value = Lock<TerminalRenderer?>(nil)

    var renderer: TerminalRenderer? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
