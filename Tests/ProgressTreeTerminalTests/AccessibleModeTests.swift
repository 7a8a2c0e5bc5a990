import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Accessible mode (issue 49, Docs/Terminal.md "Accessible mode"): sentences for a screen reader, at
/// milestones only, with exact output and a manual clock.
final class AccessibleModeTests: XCTestCase {
    /// A test renderer in accessible mode. The root's estimates get a clock of their own that never moves
    /// (unless the test gave it one): the renderer's manual clock does not reach the model's throughput
    /// estimator, which on the system clock makes a first estimate once half a second has passed, so a run
    /// slower than that (ThreadSanitizer's: 0.6 s) would say "about 1 second left" in sentences that
    /// expect no time left. A test that wants a time left sets `estimatedTimeRemaining`.
    private func renderer(
        _ root: ProgressNode, output: VirtualTerminal, clock: ManualProgressClock,
        configure: (inout TerminalRenderer.Options) -> Void = { _ in }
    ) -> TerminalRenderer {
        if root.estimationClock == nil { root.estimationClock = ManualProgressClock() }
        return makeTestRenderer(root, mode: .accessible, output: output, clock: clock, configure: configure)
    }

    // MARK: Choosing it

    func test_auto_mode_is_accessible_when_ACCESSIBLE_is_set_to_anything_but_0_false_no_or_empty() {
        let root = makeRoot("Work", total: 1)
        let terminal = VirtualTerminal(columns: 80, rows: 24)
        func mode(_ value: String?) -> TerminalRenderer.Mode {
            var environment = ["TERM": "xterm"]
            environment["ACCESSIBLE"] = value
            return TerminalRenderer(root, output: terminal, environment: environment).mode
        }
        for value in ["1", "true", "yes", "screen-reader", " 1 "] {
            XCTAssertEqual(mode(value), .accessible, "ACCESSIBLE=\(value)")
        }
        for value in [nil, "", "0", "false", "FALSE", "no", "No", " 0 "] {
            XCTAssertEqual(mode(value), .live, "ACCESSIBLE=\(value ?? "(unset)")")
        }
        // On a pipe too: the person listens to a log as well.
        let pipe = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        XCTAssertEqual(TerminalRenderer(root, output: pipe, environment: ["ACCESSIBLE": "1"]).mode, .accessible)
        // A mode the program chose is kept.
        XCTAssertEqual(
            TerminalRenderer(root, mode: .live, output: terminal, environment: ["ACCESSIBLE": "1"]).mode, .live)
        XCTAssertTrue(TerminalRenderer.isAccessibleModeRequested(environment: ["ACCESSIBLE": "on"]))
        XCTAssertFalse(TerminalRenderer.isAccessibleModeRequested(environment: ["ACCESSIBLE": "false"]))
        XCTAssertEqual(TerminalRenderer.Mode(rawValue: "accessible"), .accessible)
    }

    // MARK: What it says

    /// A 24-second import of 12 photos, one every 2 s: a start sentence, one per quarter, the pause and
    /// the resumption, the failure with its reason, the outcome. Eight lines in all, each a sentence, no
    /// escape sequence, on a terminal.
    func test_a_run_says_its_start_each_quarter_a_pause_a_failure_and_its_outcome_in_sentences() {
        let terminal = VirtualTerminal(columns: 80, rows: 24)
        let clock = ManualProgressClock()
        let album = makeRoot("Importing 12 photos", total: 12)
        album.estimatedTimeRemaining = 18
        let renderer = renderer(album, output: terminal, clock: clock)
        renderer.start()
        for index in 1...12 {
            clock.advance(by: .seconds(2))
            let photo = makeChild(String(format: "IMG_%04d.jpg", index), total: 1, parent: album)
            renderer.drawFrame()
            if index == 6 {
                album.pause()
                renderer.drawFrame()
                album.resume()
                renderer.drawFrame()
            }
            if index == 7 {
                photo.fail(Reason(description: "IMG_0007.jpg: connection reset"))
            } else {
                photo.completedUnitCount = 1
            }
            renderer.drawFrame()
        }
        album.fail(Reason(description: "1 of 12 photos failed"))
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines,
            [
                "Importing 12 photos: started, 0 of 12.",
                "Importing 12 photos: 25 percent, 3 of 12, about 20 seconds left.",
                "Importing 12 photos: paused at 41 percent, 5 of 12.",
                "Importing 12 photos: resumed at 41 percent, 5 of 12.",
                "Importing 12 photos: 50 percent, 6 of 12, about 20 seconds left.",
                "IMG_0007.jpg failed: connection reset.",
                "Importing 12 photos: 75 percent, 9 of 12, 1 failed, about 20 seconds left.",
                "Importing 12 photos failed at 91 percent, 11 of 12: 1 of 12 photos failed.",
            ])
        XCTAssertFalse(terminal.writes.joined().contains("\u{1B}"), "no escape sequence, even on a terminal")
        XCTAssertTrue(terminal.cursorVisible)
    }

    /// At most one sentence per interval when no quarter is crossed: 130 s of work, 30 of them without a
    /// move, says 14 lines, not one per frame; and nothing while it does not move.
    func test_progress_is_said_once_per_interval_or_quarter_and_not_while_nothing_moves() {
        let terminal = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let clock = ManualProgressClock()
        let root = makeRoot("Copying", total: 100)
        let renderer = renderer(root, output: terminal, clock: clock)
        renderer.start()
        for second in 1...130 {
            clock.advance(by: .seconds(1))
            if second <= 40 || second > 70 { root.completedUnitCount += 1 }  // 30 s without a move
            for _ in 0..<15 { renderer.drawFrame() }  // the timer's frames
        }
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines,
            [
                "Copying: started, 0 of 100.",
                "Copying: 10 percent, 10 of 100.",
                "Copying: 20 percent, 20 of 100.",
                "Copying: 25 percent, 25 of 100.",
                "Copying: 35 percent, 35 of 100.",
                "Copying: 40 percent, 40 of 100.",  // 10 s after 35 %: then 30 s without a move, silent
                "Copying: 41 percent, 41 of 100.",
                "Copying: 50 percent, 50 of 100.",
                "Copying: 60 percent, 60 of 100.",
                "Copying: 70 percent, 70 of 100.",
                "Copying: 75 percent, 75 of 100.",
                "Copying: 85 percent, 85 of 100.",
                "Copying: 95 percent, 95 of 100.",
                "Copying finished: 100 of 100.",
            ])
    }

    func test_an_indeterminate_root_says_it_is_still_working_once_per_interval() {
        let terminal = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let clock = ManualProgressClock()
        let root = makeRoot("Loading customers from the archive…", total: -1)
        let renderer = renderer(root, output: terminal, clock: clock) { $0.accessibleInterval = .seconds(5) }
        renderer.start()
        for _ in 1...12 {
            clock.advance(by: .seconds(1))
            renderer.drawFrame()
        }
        root.totalUnitCount = 1
        root.completedUnitCount = 1
        renderer.drawFrame()
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines,
            [
                "Loading customers from the archive: started.",
                "Loading customers from the archive: still working after 5 seconds.",
                "Loading customers from the archive: still working after 10 seconds.",
                "Loading customers from the archive finished: 1 of 1.",
            ])
    }

    /// Printed messages and log records are lines of their own, between the sentences, in order; a
    /// renderer stopped while the work runs says where it stopped; a cancelled root says so.
    func test_printed_lines_are_their_own_lines_and_a_stop_or_a_cancellation_is_said() {
        let terminal = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let clock = ManualProgressClock()
        let root = makeRoot("Sync", total: 4)
        let renderer = renderer(root, output: terminal, clock: clock)
        renderer.start()
        renderer.print("warning sync: a.txt is read-only")
        root.completedUnitCount = 1
        renderer.drawFrame()
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines,
            [
                "Sync: started, 0 of 4.",
                "warning sync: a.txt is read-only",
                "Sync: 25 percent, 1 of 4.",
                "Sync stopped at 25 percent, 1 of 4.",
            ])

        let cancelled = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let other = makeRoot("Sync", total: 4)
        let second = self.renderer(other, output: cancelled, clock: clock)
        second.start()
        other.completedUnitCount = 2
        other.cancel()
        second.drawFrame()
        second.print("after the end")
        second.stop()
        XCTAssertEqual(
            cancelled.allLines,
            ["Sync: started, 0 of 4.", "Sync cancelled at 50 percent, 2 of 4.", "after the end"])
    }

    /// The failure of a node deep in the tree is said too, once, and the nodes it cancelled are not; a
    /// node without a label is named by its parent; the summaries the program shows are said.
    func test_every_failure_is_said_once_by_name_and_summaries_are_said_in_words() {
        let terminal = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let clock = ManualProgressClock()
        let album = makeRoot("Album…", total: 3)
        let renderer = renderer(album, output: terminal, clock: clock)
        renderer.show(PhotosSkippedForTests.self) { $0 == 0 ? nil : "\($0) skipped" }
        renderer.start()
        failPhotoWithHalfADownload(below: album, download: "Downloading “IMG_0004.jpg”…", reason: "timed out")
        let other = makeChild("IMG_0005.jpg", total: 2, parent: album)
        let unnamed = ProgressNode(totalUnitCount: 1, parent: other, pendingUnitCount: 1)
        renderer.drawFrame()
        unnamed.fail(Reason(description: "no space left"))
        renderer.drawFrame()
        renderer.drawFrame()
        album[PhotosSkippedForTests.self] = 1
        album.completedUnitCount = 3
        renderer.stop()
        XCTAssertEqual(
            terminal.allLines,
            [
                "Album: started, 0 of 3.",
                "IMG_0004.jpg failed: timed out.",
                "A step of IMG_0005.jpg failed: no space left.",
                "Album finished: 3 of 3, 1 skipped, 2 failed.",
            ])
    }
}

/// A count of skipped photos, summed over the tree, for the summaries the renderer says.
enum PhotosSkippedForTests: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}
