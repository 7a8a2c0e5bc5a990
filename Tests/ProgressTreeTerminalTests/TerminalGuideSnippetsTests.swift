// swift-format-ignore-file
// (The guides show this file's snippets verbatim, their end-of-line comments aligned by hand.)
import ProgressTree
import ProgressTreeTerminal
import Synchronization
import XCTest

/// The terminal snippets of Docs/GettingStarted.md ("Showing it in a terminal") and Docs/Properties.md
/// ("Showing a summary"), as tests. The guides show the regions between the markers verbatim (checked by
/// `GuideSnippetsTests.test_guide_snippets_match_the_guides` in ProgressTreeTests); what the second
/// prints is checked by `DocSnippetProgramTests`, which runs it as a program.
final class TerminalGuideSnippetsTests: XCTestCase {
    func test_guide_getting_started_terminal() {
        // BEGIN snippet: getting-started-terminal
        let album = ProgressNode.discreteProgress(totalUnitCount: 3)
        album.localizedDescription = "Importing 3 photos"

        let renderer = TerminalRenderer(album)  // live bars on a terminal, plain lines otherwise; standard error
        renderer.start()
        for _ in 0..<3 {
            album.advance()                      // the work
        }
        renderer.stop()                          // the final frame; the cursor is restored
        // END snippet: getting-started-terminal
        XCTAssertTrue(album.isFinished)
        XCTAssertTrue(renderer.mode == .live || renderer.mode == .plain)
    }

    func test_guide_properties_showing() {
        let printed = Mutex<[String]>([])
        let print: @Sendable (String) -> Void = { line in printed.withLock { $0.append(line) } }
        // BEGIN snippet: properties-showing
        /// Photos an import skipped: the library has them already.
        enum PhotosSkipped: ProgressProperty {
            static var defaultValue: Int { 0 }
            static var defaultSummary: Int { 0 }
            static func reduce(into summary: inout Int, value: Int) { summary += value }
            static func merge(_ a: Int, _ b: Int) -> Int { a + b }
        }

        let album = ProgressNode.discreteProgress(totalUnitCount: 4)
        album.localizedDescription = "Importing 4 photos"
        var options = TerminalRenderer.Options()
        options.drawsOnTimer = false  // frames only when asked: the same log on every run
        let renderer = TerminalRenderer(album, mode: .plain, options: options, output: FileDescriptorOutput.standardOutput)
        renderer.show(PhotosSkipped.self) { $0 == 0 ? nil : "\($0) skipped" }  // the one line
        renderer.start()
        for number in 1...4 {
            let photo = ProgressNode(totalUnitCount: 1, parent: album, pendingUnitCount: 1)
            if number.isMultiple(of: 2) { photo[PhotosSkipped.self] = 1 }  // in the library: skipped
            photo.completedUnitCount = 1                    // let go; it leaves its count in the album
        }
        renderer.stop()  // [100%] Importing 4 photos: done, 4 of 4, 2 skipped
        print("Imported 2 photos, \(album.summary(of: PhotosSkipped.self)) skipped")  // Imported 2 photos, 2 skipped
        // END snippet: properties-showing
        XCTAssertEqual(printed.withLock { $0 }, ["Imported 2 photos, 2 skipped"])
        XCTAssertTrue(album.isFinished)
    }
}
