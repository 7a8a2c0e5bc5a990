#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import ProgressTreePlatform
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Ctrl-Z, `fg` and the signals that end a program, on a live renderer in a child process whose output the
/// test reads into a virtual terminal, with the shell's own lines written where a shell writes them (issue
/// 49, items 1 and 8).
final class JobControlTests: XCTestCase {
    /// The shell's lines while the program is stopped, then `fg`.
    private let shellLines = "[1]+  Stopped                 import\n$ fg\nimport\n"

    /// Ctrl-Z arrives while a frame is on its way to the terminal (composed, not yet written): the frame
    /// is written whole, the live area it makes is erased, the process stops; after `fg` the tree is drawn
    /// below what the shell printed. Nothing printed is lost, the shell's lines stay, and one tree is on
    /// screen. (Before, the handler erased the area it last heard of and the frame then moved up over the
    /// shell's lines, leaving a stale tree above the new one.)
    func test_ctrl_z_in_the_middle_of_a_frame_loses_no_line_and_leaves_no_stale_tree() throws {
        #if !os(Linux)
        throw XCTSkip("reads the process state from /proc")
        #else
        let child = try ScenarioProcess(
            "JobControlTests/test_scenario_run_in_a_child_process", scenario: "stopMidFrame")
        XCTAssertTrue(child.wait { child.isStopped }, "Ctrl-Z stops the process: \(child.output)")
        child.waitForQuiet()
        let terminal = VirtualTerminal(columns: 60, rows: 12)
        terminal.write(child.output)
        let beforeStop = child.byteCount
        terminal.write(shellLines)  // what the shell prints at the prompt while the process is stopped
        child.send(SIGCONT)
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.status, 0, child.output)
        let after = String(decoding: Data(child.output.utf8).dropFirst(beforeStop), as: UTF8.self)
        terminal.write(after)
        let lines = terminal.allLines
        for index in 1...6 {
            XCTAssertEqual(lines.filter { $0 == "log \(index)" }.count, 1, "log \(index) once: \(lines)")
        }
        XCTAssertEqual(lines.filter { $0.hasPrefix("[1]+  Stopped") }.count, 1, "\(lines)")
        XCTAssertEqual(lines.filter { $0 == "$ fg" }.count, 1, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains("Import") }.count, 1, "one tree, at the end: \(lines)")
        XCTAssertEqual(lines.last, "✓ Import           ███████████ 100% 6 of 6")
        XCTAssertLessThan(
            try XCTUnwrap(lines.firstIndex(of: "$ fg")), try XCTUnwrap(lines.firstIndex(of: "log 5")),
            "what came after fg is below it")
        #endif
    }

    /// `SIGTERM` on a program that leaves it its default action: the hint under the tree (whose keys no
    /// longer work) is erased, the tree stays, the cursor comes back, and the status is 143.
    func test_sigterm_erases_the_hint_and_keeps_the_tree() throws {
        let child = try ScenarioProcess(
            "JobControlTests/test_scenario_run_in_a_child_process", scenario: "termWithHint")
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.reason, .uncaughtSignal)
        XCTAssertEqual(exit?.status, SIGTERM)
        let terminal = VirtualTerminal(columns: 60, rows: 12)
        terminal.write(child.output)
        XCTAssertEqual(terminal.visibleLines, ["• Import           █████▌░░░░░  50% 1 of 2"])
        XCTAssertTrue(terminal.cursorVisible)
    }

    /// The scenarios, run in a child process (skipped in an ordinary run).
    func test_scenario_run_in_a_child_process() throws {
        let scenario = try ScenarioProcess.scenarioOfThisProcess()
        let root = makeRoot("Import", total: scenario == "stopMidFrame" ? 6 : 2)
        var options = TerminalRenderer.Options()
        options.drawsOnTimer = false
        options.initialDelay = .zero
        options.showsTaskbarProgress = false
        switch scenario {
        case "stopMidFrame":
            // The fourth write is the frame that draws "log 3" and a third photo: Ctrl-Z just before it.
            let output = HookedOutput(descriptor: 2) { write in if write == 4 { raise(SIGTSTP) } }
            let renderer = TerminalRenderer(
                root, mode: .live, options: options, output: output, clock: ManualProgressClock(),
                environment: ["NO_COLOR": "1", "TERM": "xterm"])
            renderer.start()
            renderer.drawFrame()
            for index in 1...6 {
                let photo = makeChild("photo \(index)", total: 1, parent: root)
                renderer.print("log \(index)")  // drawn at once: no timer
                photo.completedUnitCount = 1
            }
            renderer.stop()
        case "termWithHint":
            options.hint = "Keys: c cancel"
            let output = HookedOutput(descriptor: 2)
            let renderer = TerminalRenderer(
                root, mode: .live, options: options, output: output, clock: ManualProgressClock(),
                environment: ["NO_COLOR": "1", "TERM": "xterm"])
            renderer.start()
            renderer.drawFrame()
            root.completedUnitCount = 1
            renderer.drawFrame()
            raise(SIGTERM)
            XCTFail("SIGTERM did not end the process")
        default:
            XCTFail("unknown scenario \(scenario)")
        }
    }
}
