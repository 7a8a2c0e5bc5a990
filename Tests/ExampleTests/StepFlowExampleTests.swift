import Foundation
import XCTest

/// step-flow draws its own line: what a person sees of it.
final class StepFlowExampleTests: XCTestCase {
    /// In 40 columns the bar narrows; the step, its percentage and its name stay whole.
    func test_in_40_columns_the_bar_shrinks_and_the_percentage_and_step_name_stay() throws {
        let child = try ExampleProcess("step-flow", ["--speed", "4"], terminal: true, columns: 40)
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let output = child.outputText
        // Frames depend on timing; each shape is fixed: a 9-cell bar, then the percentage and the name whole.
        let frames = output.matches(of: #/\rStep [1-5] of 5  \[[^\]]{9}\] +[0-9]+%  (account|profile|address|payment) /#)
        XCTAssertGreaterThan(frames.count, 4, output.debugDescription)
        for frame in output.components(separatedBy: "\r") {
            let visible = frame.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r\n", with: "").replacing("\n", with: "")
            guard !visible.hasPrefix("  ▸") else { continue }  // events scroll: they may wrap
            XCTAssertLessThanOrEqual(visible.count, 39, visible.debugDescription)
            XCTAssertFalse(visible.contains("…"), "nothing is cut: \(visible)")
        }
    }

    /// With --keys, before the first step: "Not started" (not "Step - of 5") and the keys under it; the
    /// keys line is cleared when the program ends.
    func test_before_the_first_step_the_line_says_not_started_and_the_keys_hint_goes_at_exit() throws {
        let child = try ExampleProcess("step-flow", ["--keys"], terminal: true, columns: 100)
        XCTAssertTrue(child.waitForOutput(containing: "Keys: n next"), child.outputText.debugDescription)
        XCTAssertTrue(child.outputText.contains("Not started"), child.outputText.debugDescription)
        XCTAssertFalse(child.outputText.contains("Step -"))
        child.type("q")
        XCTAssertEqual(child.waitForExit()?.status, 0)
        XCTAssertTrue(child.outputText.hasSuffix("\r\n\u{1B}[K\u{1B}[?25h"), child.outputText.suffix(40).debugDescription)
    }

    /// The plain script speaks of the bar being shown, not of an internal "visibility".
    func test_the_plain_script_says_how_much_of_the_bar_is_shown_in_words() throws {
        let child = try ExampleProcess("step-flow", ["--progress", "plain"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let output = child.outputText
        XCTAssertFalse(output.contains("visibility"), output)
        XCTAssertTrue(output.contains("▸ back exactly where it was: 80%, bar shown"), output)
        XCTAssertTrue(output.contains("Step 1 of 5  [▓▓░░░░░░░░░░░░░░░░░░]  10%  account   exactly 10.0%, bar 50% shown"), output)
    }
}
