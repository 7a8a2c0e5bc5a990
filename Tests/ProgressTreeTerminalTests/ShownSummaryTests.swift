import Foundation
import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Photos an import skipped: a count every photo leaves behind when it finishes.
private enum PhotosSkipped: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// Retries of the work still running: dropped when a node is done.
private enum Retries: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
    static func summaryLeftBehind(_ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? { nil }
}

/// `TerminalRenderer.show(_:_:)`: a program's own summary on the root's line (Docs/Terminal.md, "Your own
/// summaries"), exact lines at 100 and 40 columns, in live and plain modes.
final class ShownSummaryTests: XCTestCase {
    /// "Importing 4 photos" over four photos of one unit each; the first two finished, one of them skipped.
    private func makeImport() -> (album: ProgressNode, photos: [ProgressNode]) {
        let album = makeRoot("Importing 4 photos", total: 4)
        let photos = (1...4).map { makeChild("IMG_000\($0).jpg", total: 10, parent: album) }
        photos[0][PhotosSkipped.self] = 1
        photos[0].completedUnitCount = 10
        photos[1].completedUnitCount = 10
        photos[2].completedUnitCount = 5
        return (album, photos)
    }

    private func frame(columns: Int, rows: Int = 10, show: (TerminalRenderer) -> Void) -> [String] {
        let terminal = VirtualTerminal(columns: columns, rows: rows)
        let (album, _) = makeImport()
        let renderer = makeTestRenderer(album, output: terminal)
        show(renderer)
        renderer.drawFrame()
        return terminal.visibleLines
    }

    func test_at_100_columns_the_summary_follows_the_roots_name() {
        XCTAssertEqual(
            frame(columns: 100) { $0.show(PhotosSkipped.self) { "\($0) skipped" } },
            [
                "• Importing 4 photos · 1 skipped             ██████████████▍░░░░░░░░  62% 2 of 4",
                "  • IMG_0003.jpg                             ███████████▌░░░░░░░░░░░  50% 5 of 10",
                "  • IMG_0004.jpg                             ░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 10",
            ])
    }

    /// The name stays readable first: at 40 columns the label column holds the name alone, and the summary
    /// gives way (as the counts do), whole, never cut to another number.
    func test_at_40_columns_the_summary_gives_way_to_a_readable_name() {
        XCTAssertEqual(
            frame(columns: 40) { $0.show(PhotosSkipped.self) { "\($0) skipped" } },
            [
                "• Importing 4 phot… ████████▊░░░░░  62%",
                "  • IMG_0003.jpg    ███████░░░░░░░  50%",
                "  • IMG_0004.jpg    ░░░░░░░░░░░░░░   0%",
            ])
    }

    /// Where the label column has room for a readable name and the summary, the name is cut before it.
    func test_at_40_columns_a_short_name_keeps_its_summary() {
        let terminal = VirtualTerminal(columns: 40, rows: 10)
        let album = makeRoot("Sync", total: 2)
        let photo = makeChild("IMG_0001.jpg", total: 10, parent: album)
        makeChild("IMG_0002.jpg", total: 10, parent: album)
        photo[PhotosSkipped.self] = 1
        photo.completedUnitCount = 10
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.show(PhotosSkipped.self) { "\($0) skipped" }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Sync · 1 skipped  ███████░░░░░░░  50%",
                "  • IMG_0002.jpg    ░░░░░░░░░░░░░░   0%",
            ])
    }

    func test_words_that_say_nothing_show_nothing_and_the_columns_stay_when_they_come() {
        let terminal = VirtualTerminal(columns: 100, rows: 10)
        let album = makeRoot("Importing 2 photos", total: 2)
        let photos = (1...2).map { makeChild("IMG_000\($0).jpg", total: 10, parent: album) }
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.show(PhotosSkipped.self) { $0 == 0 ? nil : "\($0) skipped" }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Importing 2 photos                  ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 2",
                "  • IMG_0001.jpg                      ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 10",
                "  • IMG_0002.jpg                      ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 10",
            ])
        photos[0][PhotosSkipped.self] = 1
        photos[0].completedUnitCount = 10
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Importing 2 photos · 1 skipped      ███████████████░░░░░░░░░░░░░░░  50% 1 of 2",
                "  ✓ IMG_0001.jpg                      ██████████████████████████████ 100% 10 of 10",
                "  • IMG_0002.jpg                      ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░   0% 0 of 10",
            ])
    }

    func test_control_characters_in_the_words_are_shown_as_spaces() {
        XCTAssertEqual(
            frame(columns: 100) { $0.show(PhotosSkipped.self) { "\($0)\nskipped\u{1B}[31m" } }.first,
            "• Importing 4 photos · 1 skipped [31m             ███████████▎░░░░░░  62% 2 of 4")
    }

    func test_two_summaries_in_the_order_given() {
        let terminal = VirtualTerminal(columns: 100, rows: 10)
        let (album, photos) = makeImport()
        photos[2][Retries.self] = 2
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.show(PhotosSkipped.self) { "\($0) skipped" }
        renderer.show(Retries.self) { $0 == 0 ? nil : "\($0) retrying" }
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines.first,
            "• Importing 4 photos · 1 skipped · 2 retrying     ███████████▎░░░░░░  62% 2 of 4")
    }

    /// The count of failures below comes after the summaries, in the room the plan kept for it.
    func test_the_count_of_failures_follows_the_summary() {
        let terminal = VirtualTerminal(columns: 100, rows: 10)
        let (album, photos) = makeImport()
        album.localizedDescription = "Import"
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.show(PhotosSkipped.self) { "\($0) skipped" }
        renderer.drawFrame()
        photos[3].fail(Reason(description: "the camera stopped answering"))
        renderer.drawFrame()
        XCTAssertEqual(
            terminal.visibleLines,
            [
                "• Import · 1 skipped · 1 failed       ██████████████████▊░░░░░░░░░░░  62% 2 of 4",
                "  • IMG_0003.jpg                      ███████████████░░░░░░░░░░░░░░░  50% 5 of 10",
                "  ! IMG_0004.jpg — failed: the camera stopped answering",
            ])
    }

    func test_the_final_frame_keeps_the_summary() {
        let terminal = VirtualTerminal(columns: 100, rows: 10)
        let (album, photos) = makeImport()
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.show(PhotosSkipped.self) { "\($0) skipped" }
        renderer.drawFrame()
        photos[3][PhotosSkipped.self] = 1
        photos[2].completedUnitCount = 10
        photos[3].completedUnitCount = 10
        renderer.stop()
        XCTAssertEqual(
            terminal.visibleLines,
            ["✓ Importing 4 photos · 2 skipped             ███████████████████████ 100% 4 of 4"],
            "the finished subtree collapsed; the summary counts what the photos left behind")
    }

    func test_plain_mode_adds_the_summary_to_the_roots_lines() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let (album, photos) = makeImport()
        let renderer = makeTestRenderer(album, mode: .plain, output: output)
        renderer.show(PhotosSkipped.self) { "\($0) skipped" }
        renderer.drawFrame()
        photos[2].completedUnitCount = 10
        photos[3][PhotosSkipped.self] = 1
        photos[3].completedUnitCount = 10
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[ 62%] Importing 4 photos: started, 2 of 4, 1 skipped",
                "[ 50%] Importing 4 photos › IMG_0003.jpg: started, 5 of 10",
                "[  0%] Importing 4 photos › IMG_0004.jpg: started, 0 of 10",
                "[100%] Importing 4 photos › IMG_0003.jpg: done, 10 of 10",
                "[100%] Importing 4 photos › IMG_0004.jpg: done, 10 of 10",
                "[100%] Importing 4 photos: done, 4 of 4, 2 skipped",
            ])
    }
}
