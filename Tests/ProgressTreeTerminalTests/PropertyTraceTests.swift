import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// A rate: a number that crosses the wire, when it is finite.
private enum UploadRate: WireProgressProperty {
    static let wireName = "uploadRate"
    static var defaultValue: Double { 0 }
    static var defaultSummary: Double { 0 }
    static func reduce(into summary: inout Double, value: Double) { summary += value }
    static func merge(_ a: Double, _ b: Double) -> Double { a + b }
}

/// A count that crosses the wire while it stays within ±(2^53 − 1) (summed wrapping: the test sets
/// `Int.max`).
private enum Warnings: WireProgressProperty {
    static let wireName = "warnings"
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary &+= value }
    static func merge(_ a: Int, _ b: Int) -> Int { a &+ b }
}

/// A property whose wire name holds a line break and quotes.
private enum OddlyNamed: WireProgressProperty {
    static let wireName = "note\n\"x\""
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// Property values that cannot cross the wire leave a trace, names cannot pass for something else, and a
/// property is spelled one way (issue 49, items 5 and 8).
final class PropertyTraceTests: XCTestCase {
    /// NaN and `Int.max` cannot be written as JSON: the plain line says a value was left out, and the
    /// renderer counts them, as the publisher does (before, they vanished without a trace).
    func test_values_the_wire_cannot_carry_are_counted_and_said_in_plain_mode() {
        let output = VirtualTerminal(columns: 100, rows: 100, isTerminal: false)
        let (root, first, second) = makeSyncTree()
        first[UploadRate.self] = .nan
        first[Warnings.self] = 3
        second[Warnings.self] = .max
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[  0%] Sync › a.txt: started, 0 of 10, warnings=3, 1 property value left out",
                "[  0%] Sync › b.txt: started, 0 of 10, 1 property value left out",
            ])
        XCTAssertEqual(renderer.diagnostics.skippedProperties, 2)
    }

    func test_json_mode_counts_the_values_it_leaves_out() throws {
        let output = VirtualTerminal(columns: 100, rows: 100, isTerminal: false)
        let (root, first, _) = makeSyncTree()
        first[UploadRate.self] = .infinity
        let renderer = makeTestRenderer(root, mode: .json, output: output)
        XCTAssertEqual(renderer.diagnostics.skippedProperties, 0)
        renderer.drawFrame()
        XCTAssertEqual(renderer.diagnostics.skippedProperties, 1, "a.txt's line, written without it")
        let lines = output.writes.joined().split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        XCTAssertFalse(lines.contains { $0.contains("uploadRate") })
    }

    /// A name that is not a plain word is written as JSON writes it: its line break and quotes escaped,
    /// never `note "x"=1`, which reads as a note about "x".
    func test_a_name_that_is_not_a_plain_word_is_quoted_as_json_does() {
        let output = VirtualTerminal(columns: 100, rows: 100, isTerminal: false)
        let root = makeRoot("Work", total: 1)
        root[OddlyNamed.self] = 1
        root[Warnings.self] = 2
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        XCTAssertEqual(output.allLines, [#"[  0%] Work: started, 0 of 1, "note\n\"x\""=1, warnings=2"#])
    }

    /// A property the program words with `show(_:_:)` is spelled in its words on every plain line, each
    /// line its node's own summary; never also as `name=value` (before: `warnings=67` on the children,
    /// "265 warnings" on the root).
    func test_a_shown_property_is_spelled_in_its_words_on_every_plain_line() {
        let output = VirtualTerminal(columns: 100, rows: 100, isTerminal: false)
        let (root, first, second) = makeSyncTree()
        first[Warnings.self] = 67
        second[Warnings.self] = 198
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.show(Warnings.self) { $0 == 0 ? nil : "\($0) warnings" }
        renderer.drawFrame()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2, 265 warnings",
                "[  0%] Sync › a.txt: started, 0 of 10, 67 warnings",
                "[  0%] Sync › b.txt: started, 0 of 10, 198 warnings",
            ])
    }
}

/// Live frames while the work pauses, and while log records flow (issue 49, items 7 and 8).
final class LiveFrameRateTests: XCTestCase {
    /// 810 records in 24 s, with the timer's frames 15 times a second: no more frames than the frame rate
    /// allows (before: one frame per record besides the timer's, 1,110 and more), and every record once,
    /// in order, above the tree.
    func test_log_records_in_a_burst_draw_no_more_frames_than_the_frame_rate() {
        let terminal = VirtualTerminal(columns: 80, rows: 20)
        let clock = ManualProgressClock()
        let root = makeRoot("Import", total: 810)
        // The timer is never started (no `start()`): the test plays its ticks (`timerTick()`), each late
        // after the records of its moment, as a dispatch timer may be.
        let renderer = makeTestRenderer(root, output: terminal, clock: clock) { $0.drawsOnTimer = true }
        let tick = Duration.seconds(1) / 15
        let record = Duration.seconds(24) / 810
        var nextTick = Duration.zero
        var now = Duration.zero
        for index in 1...810 {
            clock.advance(by: record)
            now += record
            renderer.print("record \(index)")
            root.completedUnitCount = Int64(index)
            while nextTick + tick <= now {
                nextTick += tick
                renderer.timerTick()
            }
        }
        let frames = terminal.writes.count
        renderer.stop()
        XCTAssertLessThanOrEqual(frames, 24 * 15 + 2, "frames in 24 s at 15 a second, and the first")
        XCTAssertGreaterThanOrEqual(frames, 24 * 15 - 1, "the timer's frames still draw")
        XCTAssertEqual(terminal.allLines.filter { $0.hasPrefix("record ") }, (1...810).map { "record \($0)" })
    }

    /// A record logged after a quiet moment is drawn at once, not one frame later.
    func test_a_record_after_a_quiet_frame_interval_is_drawn_at_once() {
        let terminal = VirtualTerminal(columns: 80, rows: 20)
        let clock = ManualProgressClock()
        let root = makeRoot("Import", total: 4)
        let renderer = makeTestRenderer(root, output: terminal, clock: clock) { $0.drawsOnTimer = true }
        renderer.drawFrame()
        renderer.print("too soon")
        XCTAssertEqual(terminal.visibleLines.count, 1, "waits for the next frame")
        clock.advance(by: .milliseconds(70))
        renderer.print("after 70 ms")
        XCTAssertEqual(terminal.visibleLines.first, "too soon")
        XCTAssertEqual(terminal.visibleLines.dropFirst().first, "after 70 ms")
    }

    /// A paused tree says "paused" in words on its topmost paused line (the mark `‖` alone is a glyph to
    /// decode), and the hint offers the keys that work while paused (before: "p pause" still offered).
    func test_a_paused_root_says_paused_and_its_hint_offers_resume() {
        let terminal = VirtualTerminal(columns: 70, rows: 10)
        let (root, first, _) = makeSyncTree()
        first.completedUnitCount = 5
        let renderer = makeTestRenderer(root, output: terminal) {
            $0.hint = "Keys: p pause · c cancel"
            $0.pausedHint = "Paused. Keys: r resume · c cancel"
        }
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines.last, "Keys: p pause · c cancel")
        root.pause()
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "‖ Sync · paused    ████▊░░░░░░░░░░░░░░  25% 0 of 2",
                "  ‖ a.txt          █████████▌░░░░░░░░░  50% 5 of 10",
                "  ‖ b.txt          ░░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "Paused. Keys: r resume · c cancel",
            ])
        root.resume()
        renderer.drawFrame()
        XCTAssertEqual(terminal.visibleLines.first, "• Sync             ████▊░░░░░░░░░░░░░░  25% 0 of 2")
        XCTAssertEqual(terminal.visibleLines.last, "Keys: p pause · c cancel")
    }
}

/// A count taken below zero (issue 49, item 3): by Foundation's rule the node is indeterminate, and the
/// display shows the counts that made it so, where it showed a blank percentage alone.
final class NegativeCountTests: XCTestCase {
    func test_a_count_taken_below_zero_shows_the_counts_that_made_it_indeterminate() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (root, first, _) = makeSyncTree()
        first.advance(by: -3)
        XCTAssertTrue(first.isIndeterminate)
        XCTAssertEqual(first.fractionCompleted, 0)
        let renderer = makeTestRenderer(root, mode: .plain, output: output)
        renderer.drawFrame()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                "[   %] Sync › a.txt: started, -3 of 10",
                "[  0%] Sync › b.txt: started, 0 of 10",
            ])
        let live = VirtualTerminal(columns: 60, rows: 10)
        let liveRenderer = makeTestRenderer(root, output: live)
        liveRenderer.drawFrame()
        XCTAssertTrue(live.visibleLines[1].hasSuffix("-3 of 10"), live.visibleLines[1])
        // An unknown total stays without counts: "3 of -1" would say nothing.
        let unknown = makeRoot("Search", total: -1)
        unknown.completedUnitCount = 3
        let search = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let searchRenderer = makeTestRenderer(unknown, mode: .plain, output: search)
        searchRenderer.drawFrame()
        XCTAssertEqual(search.allLines, ["[   %] Search: started"])
    }
}
