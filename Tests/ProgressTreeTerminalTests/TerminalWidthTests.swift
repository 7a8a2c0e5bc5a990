import ProgressTree
@testable import ProgressTreeTerminal
import Synchronization
import TestSupport
import XCTest
import ProgressTreePlatform

/// Every live line is cut to the terminal's width less one column (Docs/Terminal.md), whatever the
/// characters, and the width follows the terminal from frame to frame, also when frames are drawn by hand.
final class TerminalWidthTests: XCTestCase {
    /// The visible text of the lines of one raw frame (escape codes and carriage returns removed).
    private func frameLines(_ frame: String) -> [String] {
        frame.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            String($0.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r", with: ""))
        }
    }

    /// "Every line is cut to columns − 1 display columns", also with a spinner frame two columns wide
    /// (emoji, a common choice).
    func test_a_wide_spinner_frame_still_fits_the_line() {
        let root = makeRoot("Fetching rows", total: -1)
        var layout = TerminalLayout()
        layout.spinner = ["🌑", "🌒", "🌓", "🌔"]
        let terminal = VirtualTerminal(columns: 60, rows: 10)
        makeTestRenderer(root, output: terminal, layout: layout).drawFrame()
        let lines = frameLines(terminal.writes.last!)
        XCTAssertEqual(lines.map { DisplayWidth.of($0) }, [59])
    }

    /// With `drawsOnTimer = false` (frames drawn by hand, no SIGWINCH source) the width still follows the
    /// terminal: after it narrows, the next frame fits the new width.
    func test_width_follows_the_terminal_when_drawing_frames_yourself() {
        let root = makeRoot("Work", total: 4)
        let output = ResizableOutput(columns: 80, rows: 10)
        let renderer = makeTestRenderer(root, output: output)
        renderer.drawFrame()
        output.resize(columns: 40, rows: 10)
        root.completedUnitCount = 1
        renderer.drawFrame()
        let lines = frameLines(output.writes.last!)
        XCTAssertEqual(lines.map { DisplayWidth.of($0) }, [39])
    }

    /// After the terminal narrows, a terminal that rewraps has turned each old line into several rows: the
    /// next frame moves up over all of them (two rows per 99-column line on a 60-column terminal) and
    /// clears to the end of the screen once, so no fragment of the old frame stays.
    func test_a_narrower_terminal_moves_up_over_the_rewrapped_lines_and_clears_below() {
        let root = makeRoot("Work", total: 4)
        let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        child.localizedDescription = "step"
        let output = ResizableOutput(columns: 100, rows: 10)
        let renderer = makeTestRenderer(root, output: output)
        renderer.drawFrame()
        output.resize(columns: 60, rows: 10)
        renderer.drawFrame()
        XCTAssertTrue(output.writes.last!.contains("\r\u{1B}[4A\u{1B}[J"))
        XCTAssertEqual(frameLines(output.writes.last!).map { DisplayWidth.of($0) }, [59, 59])
    }
}

/// An output whose size changes when the test says so (a window resized), recording the raw writes.
private final class ResizableOutput: TerminalOutput {
    private let state: Lock<(size: TerminalSize, writes: [String])>

    init(columns: Int, rows: Int) {
        state = Lock((TerminalSize(columns: columns, rows: rows), []))
    }

    func resize(columns: Int, rows: Int) {
        state.withLock { $0.size = TerminalSize(columns: columns, rows: rows) }
    }

    var writes: [String] { state.withLock { $0.writes } }
    func write(_ text: String) { state.withLock { $0.writes.append(text) } }
    var isTerminal: Bool { true }
    func size() -> TerminalSize? { state.withLock { $0.size } }
    var fileDescriptor: Int32? { nil }
}
