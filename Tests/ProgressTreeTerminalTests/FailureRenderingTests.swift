import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

struct Reason: Error, CustomStringConvertible {
    let description: String
}

/// How the terminal shows failure (Docs/Terminal.md): its own mark and colour, the reason, the count of failures
/// below a node, the summary line of the final frame, plain and json modes, and `OSC 9;4`.
final class FailureRenderingTests: XCTestCase {
    // MARK: Live

    /// The failed line's reason does not fit its label column: the line takes its bar, percentage and
    /// counts for it; the other lines keep their columns.
    func test_a_failed_node_has_its_own_mark_and_its_reason_cleaned_of_control_characters() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, second) = makeSyncTree()
        first.completedUnitCount = 4
        second.completedUnitCount = 2
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        first.fail(Reason(description: "the disk\nis full"))
        second.cancel()
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Sync · 1 failed  █████▋░░░░░░░░░░░░░  30% 0 of 2",
                "  ! a.txt — failed: the disk is full",
                "  ✗ b.txt          ███▊░░░░░░░░░░░░░░░  20% 2 of 10",
            ])
    }

    /// A long name is cut before the failure: the name keeps as much as the reason after " — failed: ".
    func test_a_long_name_is_cut_before_the_failure() {
        let terminal = VirtualTerminal(columns: 40, rows: 10)
        let root = makeRoot("Copy", total: 2)
        let file = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        file.localizedDescription = "a-rather-long-file-name-of-a-photo.jpg"
        file.completedUnitCount = 3
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        file.fail(Reason(description: "permission denied"))
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Copy · 1 failed    █▉░░░░░░░░░░░  15%",
                "  ! a-rather-lo… — failed: permission …",
            ])
    }

    func test_failed_and_cancelled_nodes_have_distinct_colours() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, output: terminal, environment: [:])
        renderer.drawFrame()
        first.fail(Reason(description: "the disk is full"))
        second.cancel()
        renderer.drawFrame()
        let frame = terminal.writes.last!
        XCTAssertTrue(frame.contains("\u{1B}[31m!\u{1B}[0m"), "the failed mark is red")
        XCTAssertTrue(frame.contains("\u{1B}[2m✗\u{1B}[0m"), "the cancelled mark is dim")
        XCTAssertNotEqual(TerminalLayout.ColorScheme().failed, TerminalLayout.ColorScheme().cancelled)
        XCTAssertNotEqual(TerminalLayout.ColorScheme().failed, TerminalLayout.ColorScheme().finished)
    }

    /// A failed line takes its whole width for its reason (its bar and percentage give way), and the
    /// reason is cut to that width.
    func test_a_long_reason_is_cut_to_the_width() {
        let terminal = VirtualTerminal(columns: 40, rows: 10)
        let root = makeRoot("Upload", total: 10)
        root.completedUnitCount = 5
        root.fail(Reason(description: String(repeating: "the server said no ", count: 10)))
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        let line = terminal.visibleLines[0]
        XCTAssertEqual(line, "! Upload — failed: the server said no …")
        XCTAssertEqual(
            DisplayWidth.of(
                terminal.writes.last!.split(separator: "\n")[0].replacing(/\u{1B}\[[0-9;?]*[A-Za-z]|\r/, with: "")), 39)
    }

    func test_the_final_frame_of_a_run_with_failures_says_so_in_a_summary_line() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        first.fail(Reason(description: "the disk is full"))
        second.cancel()
        renderer.drawFrame()
        XCTAssertFalse(terminal.visibleLines.contains { $0.hasPrefix("! 1 failed") }, "only the final frame")
        renderer.stop()
        XCTAssertEqual(terminal.visibleLines.last, "! 1 failed, 1 cancelled: the disk is full")
    }

    func test_the_final_frame_of_a_run_without_failures_has_no_summary_line() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        first.completedUnitCount = 10
        second.cancel()
        renderer.stop()
        XCTAssertEqual(terminal.visibleLines.count, 3)
        XCTAssertFalse(terminal.visibleLines.joined().contains("failed"))
    }

    /// A root that failed itself, with nothing failed below it, says why on its own line; a summary would
    /// say it again, so there is none, unless the line had to cut the reason.
    func test_a_failed_root_says_why_once_on_its_line_or_in_the_summary_when_its_line_cuts_it() {
        func finalFrame(columns: Int) -> [String] {
            let terminal = VirtualTerminal(columns: columns, rows: 10)
            let root = makeRoot("Loading", total: -1)
            let renderer = makeTestRenderer(root, output: terminal)
            renderer.drawFrame()
            root.fail(Reason(description: "the archive is not answering"))
            renderer.stop()
            return terminal.visibleLines
        }
        XCTAssertEqual(finalFrame(columns: 60), ["! Loading — failed: the archive is not answering"])
        XCTAssertEqual(
            finalFrame(columns: 40),
            [
                "! Loading — failed: the archive is not…",
                "! Failed: the archive is not answering",
            ])
    }

    // MARK: Plain and json

    func test_plain_mode_prints_failed_with_the_reason_and_a_summary_at_the_end() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, first, _) = makeSyncTree()
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        first.completedUnitCount = 3
        first.fail(Reason(description: "the disk\u{1B}[2J is full"))
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[  0%] Sync › a.txt: started, 0 of 10",
                "[  0%] Sync › b.txt: started, 0 of 10",
                "[ 30%] Sync › a.txt: failed: the disk [2J is full, 3 of 10",
                "1 failed: the disk [2J is full",
            ])
        XCTAssertFalse(output.writes.joined().contains("\u{1B}"), "plain mode writes no escape codes")
    }

    /// In a log the root's outcome comes last: a root that fails in the frame its children end gets its
    /// failed line after theirs, as a finished root gets its done line.
    func test_plain_mode_prints_a_failed_roots_line_after_its_childrens_final_lines() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        first.fail(Reason(description: "not found"))
        second.completedUnitCount = 10
        root.fail(Reason(description: "1 of 2 failed"))
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[  0%] Sync › a.txt: started, 0 of 10",
                "[  0%] Sync › b.txt: started, 0 of 10",
                "[  0%] Sync › a.txt: failed: not found, 0 of 10",
                "[100%] Sync › b.txt: done, 10 of 10",
                "[ 50%] Sync: failed: 1 of 2 failed, 1 of 2",
                "1 failed: not found",
            ])
    }

    /// A child that appears and fails between two frames gets its failed line, with its reason, as one
    /// seen failing does: read from the node while something holds it, from what its parent kept after.
    func test_plain_mode_prints_failed_with_the_reason_for_a_child_that_appears_and_fails_between_two_frames() {
        func lines(holdingTheChild: Bool) -> [String] {
            let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
            let (root, _, _) = makeSyncTree()
            root.totalUnitCount = 3
            let renderer = makeTestRenderer(root, mode: .plain, output: output)
            renderer.drawFrame()
            var held: ProgressNode?
            weak var released: ProgressNode?
            do {
                let third = makeChild("c\u{1B}[2J.txt", total: 10, parent: root)
                third.completedUnitCount = 4
                third.fail(Reason(description: "the disk\nis full"))
                if holdingTheChild { held = third }
                released = third
            }
            XCTAssertEqual(released == nil, !holdingTheChild, "its parent let go of it")
            withExtendedLifetime(held) {
                renderer.drawFrame()
                renderer.drawFrame()
            }
            return output.allLines
        }
        let expected = [
            "[  0%] Sync: started, 0 of 3",
            "[  0%] Sync › a.txt: started, 0 of 10",
            "[  0%] Sync › b.txt: started, 0 of 10",
            "[ 40%] Sync › c [2J.txt: failed: the disk is full, 4 of 10",
        ]
        XCTAssertEqual(lines(holdingTheChild: true), expected)
        XCTAssertEqual(lines(holdingTheChild: false), expected)
    }

    /// Down to `logDepth`, the nodes a failure cancelled below a child that appeared and failed between
    /// two frames get their cancelled lines, after its failed line; below it, nothing.
    func test_plain_mode_prints_the_nodes_cancelled_below_an_unseen_failure_down_to_the_log_depth() {
        func lines(logDepth: Int?) -> [String] {
            let (root, renderer, output) = makeDrawnRoot("Import", total: 2, mode: .plain) { $0.logDepth = logDepth }
            failPhotoWithHalfADownload(below: root, reason: "the camera stopped")
            renderer.drawFrame()
            return output.allLines
        }
        XCTAssertEqual(
            lines(logDepth: nil),
            [
                "[  0%] Import: started, 0 of 2",
                "[ 50%] Import › IMG_0004.jpg: failed: the camera stopped, 0 of 10",
            ])
        XCTAssertEqual(
            lines(logDepth: 2),
            [
                "[  0%] Import: started, 0 of 2",
                "[ 50%] Import › IMG_0004.jpg: failed: the camera stopped, 0 of 10",
                "[ 50%] Import › IMG_0004.jpg › download: cancelled, 50 of 100",
            ])
    }

    func test_json_mode_has_state_failed_the_reason_and_the_counts_below() throws {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, mode: .json, output: output)
        renderer.drawFrame()
        let before = output.writes.count
        first.fail(Reason(description: "the disk is full"))
        second.cancel()
        renderer.stop()
        let objects = try output.writes.dropFirst(before).joined().split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(objects.count, 3)
        XCTAssertEqual(objects[0]["state"] as? String, "running")
        XCTAssertTrue(objects[0]["reason"] is NSNull)
        XCTAssertEqual(objects[0]["failedBelow"] as? Int, 1)
        XCTAssertEqual(objects[0]["cancelledBelow"] as? Int, 1)
        XCTAssertEqual(objects[1]["name"] as? String, "a.txt")
        XCTAssertEqual(objects[1]["state"] as? String, "failed")
        XCTAssertEqual(objects[1]["reason"] as? String, "the disk is full")
        XCTAssertEqual(objects[2]["state"] as? String, "cancelled")
        XCTAssertTrue(objects[2]["reason"] is NSNull)
    }

    // MARK: OSC 9;4

    func test_the_taskbar_progress_follows_the_root_and_is_cleared_at_stop() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, second) = makeSyncTree()
        let renderer = makeTestRenderer(root, output: terminal)
        first.completedUnitCount = 5
        renderer.drawFrame()
        renderer.drawFrame()  // nothing changed: nothing written
        root.pause()
        renderer.drawFrame()
        root.resume()
        renderer.drawFrame()
        second.fail(Reason(description: "the disk is full"))
        renderer.drawFrame()
        renderer.stop()
        XCTAssertEqual(terminal.operatingSystemCommands, ["9;4;1;25", "9;4;4;25", "9;4;1;25", "9;4;2;25", "9;4;0;0"])
        XCTAssertEqual(terminal.visibleLines.count, 4, "the sequences draw nothing")
    }

    func test_the_taskbar_progress_is_indeterminate_for_an_indeterminate_root_and_cleared_when_cancelled() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let root = ProgressNode.discreteProgress(totalUnitCount: -1)
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        root.cancel()
        renderer.drawFrame()
        renderer.stop()
        XCTAssertEqual(terminal.operatingSystemCommands, ["9;4;3;0", "9;4;0;0"])
    }

    func test_no_taskbar_progress_with_TERM_dumb_when_switched_off_off_a_terminal_or_in_plain_mode() {
        func sequences(
            mode: TerminalRenderer.Mode = .live, isTerminal: Bool = true, environment: [String: String] = [:],
            enabled: Bool = true
        ) -> [String] {
            let output = VirtualTerminal(columns: 70, rows: 10, isTerminal: isTerminal)
            let root = ProgressNode.discreteProgress(totalUnitCount: 4)
            root.completedUnitCount = 1
            let renderer = makeTestRenderer(
                root, mode: mode, output: output, environment: environment,
                configure: { $0.showsTaskbarProgress = enabled })
            renderer.drawFrame()
            renderer.stop()
            return output.operatingSystemCommands
        }
        XCTAssertEqual(sequences(), ["9;4;1;25", "9;4;0;0"], "on by default, live, on a terminal")
        XCTAssertEqual(sequences(environment: ["TERM": "dumb"]), [])
        XCTAssertEqual(sequences(enabled: false), [])
        XCTAssertEqual(sequences(isTerminal: false), [])
        XCTAssertEqual(sequences(mode: .plain), [])
        XCTAssertEqual(sequences(mode: .json), [])
    }
}

extension FailureRenderingTests {
    func test_a_failed_line_stays_while_finished_lines_give_way_to_the_limit() {
        let terminal = VirtualTerminal(columns: 60, rows: 20)
        let (root, jobs) = makeBatch(jobs: 4, unitsEach: 2)
        let renderer = makeTestRenderer(root, output: terminal) { $0.keptFinishedChildren = 2 }
        renderer.drawFrame()
        jobs[0].fail(Reason(description: "lost"))
        for job in jobs.dropFirst() { job.completedUnitCount = 2 }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Batch · 1 failed  ███████▌░░  75% 3 of 4",
                "  ! job 1 — failed: lost",
                "  ✓ job 4           ██████████ 100% 2 of 2",
            ])
    }

    /// Failed lines kept after their nodes left the tree count against the terminal's height like the
    /// others: a frame never has more lines than `rows − 1`, or the terminal would scroll at every frame.
    /// Finished lines give way first, then the oldest failed ones: job 3's here (job 2's was forgotten,
    /// `keptFinishedChildren`).
    func test_failed_lines_kept_fit_in_the_rows_with_the_hint() {
        let terminal = VirtualTerminal(columns: 60, rows: 6)
        let (root, jobs) = makeBatch(jobs: 6, unitsEach: 2)
        let renderer = makeTestRenderer(root, output: terminal) { $0.hint = "Keys: c cancel" }
        renderer.drawFrame()
        jobs[0].completedUnitCount = 2
        for job in jobs[1...3] { job.fail(Reason(description: "lost")) }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Batch · 3 failed  █▋░░░░░░░░  16% 1 of 6",
                "  ! job 3 — failed: lost",
                "  ! job 4 — failed: lost",
                "  … +3 more",
                "Keys: c cancel",
            ])
    }

    /// A reason that begins with the line's own label ("IMG_0004.jpg: …", an error naming its file) is
    /// shown without it on that line; the summary, which has no other name, keeps it.
    func test_a_reason_that_names_the_line_is_shown_without_the_name_on_it() {
        let terminal = VirtualTerminal(columns: 90, rows: 10)
        let root = makeRoot("Import", total: 2)
        let photo = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_0004.jpg"
        let renderer = makeTestRenderer(root, output: terminal)
        renderer.drawFrame()
        photo.fail(Reason(description: "IMG_0004.jpg: the camera stopped answering"))
        renderer.stop()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Import · 1 failed         ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 2",
                "  ! IMG_0004.jpg — failed: the camera stopped answering",
                "! 1 failed: IMG_0004.jpg: the camera stopped answering",
            ])
    }

    /// In a narrow terminal the summary wraps at spaces onto at most three lines, later ones indented.
    func test_the_summary_wraps_onto_at_most_three_lines() {
        XCTAssertEqual(
            OutcomeSummary.lines("2 failed; first: IMG_0004.jpg: the camera stopped answering", width: 24, limit: 3),
            [
                "! 2 failed; first:",
                "  IMG_0004.jpg: the",
                "  camera stopped answer…",
            ])
        XCTAssertEqual(OutcomeSummary.lines("1 failed: lost", width: 24, limit: 3), ["! 1 failed: lost"])
        XCTAssertEqual(OutcomeSummary.lines("1 failed: lost", width: 10, limit: 1), ["! 1 faile…"])
        XCTAssertEqual(OutcomeSummary.lines("averyveryverylongword x", width: 10, limit: 2), ["! averyve…", "  x"])
    }
}
