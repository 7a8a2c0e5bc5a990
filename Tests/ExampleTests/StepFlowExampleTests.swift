import Foundation
import TestSupport
import XCTest

/// step-flow draws its own line: what a person sees of it.
final class StepFlowExampleTests: XCTestCase {
    /// In 40 columns the bar narrows; the step, its percentage and its name stay whole.
    func test_in_40_columns_the_bar_shrinks_and_the_percentage_and_step_name_stay() throws {
        let child = try ExampleProcess("step-flow", ["--speed", "4"], terminal: true, columns: 40)
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let output = child.outputText
        // Frames depend on timing; each shape is fixed: a 9-cell bar, then the percentage and the name whole.
        let frames = output.matches(
            of: #/\rStep [1-5] of 5  \[[^\]]{9}\] +[0-9]+%  (account|profile|address|payment) /#)
        XCTAssertGreaterThan(frames.count, 4, output.debugDescription)
        for frame in output.components(separatedBy: "\r") {
            let visible = frame.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r\n", with: "").replacing(
                "\n", with: "")
            guard !visible.hasPrefix("  ▸") else { continue }  // events scroll: they may wrap
            XCTAssertLessThanOrEqual(visible.count, 39, visible.debugDescription)
            XCTAssertFalse(visible.contains("…"), "nothing is cut: \(visible)")
        }
    }

    /// With --keys, before the first step the screen shows "Not started" (not "Step - of 5") with the keys
    /// under it; after each key, the events, the step's line under them and the keys, also when a long event
    /// wraps; at the end the keys line is gone and the step's line stays. The screen is what the bytes leave
    /// on a terminal of the same size.
    func test_with_keys_the_screen_shows_the_step_line_under_the_events_and_the_keys_under_it() throws {
        for (columns, rows) in [(100, 30), (40, 15)] {
            let child = try ExampleProcess("step-flow", ["--keys"], terminal: true, columns: columns, rows: rows)
            let screen = { () -> [String] in
                let terminal = VirtualTerminal(columns: columns, rows: rows)
                terminal.write(child.outputText)
                return terminal.visibleLines
            }
            let size = "\(columns)×\(rows)"
            let keys = "Keys: n next · b back"
            var shown = child.wait(timeout: 15) {
                let lines = screen()
                return lines.count == 2 && lines[0] == "Not started" && lines[1].hasPrefix(keys)
            }
            XCTAssertTrue(shown, "\(size): \(screen())")

            child.type("n")
            shown = child.wait(timeout: 15) {
                let lines = screen()
                return lines.count == 3 && lines[0] == "  ▸ next → account" && lines[1].hasPrefix("Step 1 of 5  [")
                    && lines[2].hasPrefix(keys)
            }
            XCTAssertTrue(shown, "\(size): \(screen())")

            // A swipe back abandoned half way: three events, two of them longer than 40 columns, wrapped at
            // spaces under their arrow.
            child.type("n")
            XCTAssertTrue(child.waitForOutput(containing: "next → profile"))
            child.type("s")
            shown = child.wait(timeout: 15) {
                let lines = screen()
                guard lines.count >= 7 else { return false }
                let lastEvent = lines[lines.count - 3]  // or, wrapped at a space in 40 columns, its end
                return (lastEvent.hasPrefix("  ▸ back exactly where it was: 40%") || lastEvent == "    bar shown")
                    && lines[lines.count - 2].hasPrefix("Step 2 of 5  [") && lines[lines.count - 1].hasPrefix(keys)
            }
            XCTAssertTrue(shown, "\(size): \(screen())")
            XCTAssertEqual(screen().filter { $0.contains("b back") }.count, 1, "\(size): \(screen())")

            child.type("q")
            XCTAssertEqual(child.waitForExit()?.status, 0)
            XCTAssertTrue(child.wait(timeout: 15) { child.outputText.hasSuffix("\u{1B}[?25h") })
            let lines = screen()
            XCTAssertEqual(lines.first, "  ▸ next → account", "\(size): \(lines)")
            XCTAssertEqual(lines.dropLast().last, "  ▸ quit", "\(size): \(lines)")
            XCTAssertTrue(lines.last?.hasPrefix("Step 2 of 5  [") == true, "\(size): \(lines)")
            XCTAssertLessThan(VirtualTerminal.displayWidth(lines.last ?? ""), columns, "\(size): \(lines)")
            XCTAssertFalse(lines.contains { $0.contains("b back") }, "\(size): the keys line stayed: \(lines)")
        }
    }

    /// The plain script speaks of the bar being shown, not of an internal "visibility".
    func test_the_plain_script_says_how_much_of_the_bar_is_shown_in_words() throws {
        let child = try ExampleProcess("step-flow", ["--progress", "plain"])
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let output = child.outputText
        XCTAssertFalse(output.contains("visibility"), output)
        XCTAssertTrue(output.contains("▸ back exactly where it was: 80%, bar shown"), output)
        XCTAssertTrue(
            output.contains("Step 1 of 5  [▓▓░░░░░░░░░░░░░░░░░░]  10%  account   exactly 10.0%, bar 50% shown"), output)
    }
}
