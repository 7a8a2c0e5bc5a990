import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// `Options.hint`: a line under the live tree (the keys to press) that does not outlive the work.
final class HintLineTests: XCTestCase {
    func test_the_hint_is_under_the_tree_while_live_and_gone_after_stop() {
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        let root = makeRoot("Work", total: 4)
        root.completedUnitCount = 2
        let renderer = makeTestRenderer(root, output: terminal) { $0.hint = "Keys: p pause · c cancel\u{1B}[31m" }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Work             █████▌░░░░░  50% 2 of 4",
                "Keys: p pause · c cancel [31m",
            ])
        renderer.stop()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Work             █████▌░░░░░  50% 2 of 4"
            ])
        XCTAssertEqual(terminal.cursorRow, 1, "the cursor rests under the final frame")
    }

    func test_the_hint_takes_a_row_from_a_tree_taller_than_the_terminal() {
        let terminal = VirtualTerminal(columns: 60, rows: 4)
        let root = makeRoot("Work", total: 4)
        for index in 1...4 {
            ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1).localizedDescription = "step \(index)"
        }
        let renderer = makeTestRenderer(root, output: terminal) { $0.hint = "Keys: c cancel" }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines.count, 3)
        XCTAssertEqual(terminal.visibleLines.last, "Keys: c cancel")
        XCTAssertEqual(terminal.visibleLines[1], "  … +4 more")
    }
}
