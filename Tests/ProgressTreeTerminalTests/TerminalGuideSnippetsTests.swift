// swift-format-ignore-file
// (The guides show this file's snippets verbatim, their end-of-line comments aligned by hand.)
import ProgressTree
import ProgressTreeTerminal
import XCTest

/// The terminal snippet of Docs/GettingStarted.md ("Showing it in a terminal"), as a test. The guide shows
/// the region between the markers verbatim (checked by
/// `GuideSnippetsTests.test_guide_snippets_match_the_guides` in ProgressTreeTests).
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
}
