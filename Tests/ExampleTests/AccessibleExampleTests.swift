import Foundation
import TestSupport
import XCTest

/// photo-import heard through a screen reader (issue 49): in a real terminal (tmux, an interactive bash,
/// 100 × 30 and 40 × 15), `--progress accessible` and `ACCESSIBLE=1` write sentences only, few of them,
/// and nothing that moves the cursor or stands for a word.
final class AccessibleExampleTests: XCTestCase {
    /// The glyphs of the live mode: marks, bars, spinner.
    private let glyphs = Set("•✓‖✗█▉▊▋▌▍▎▏░⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

    private func run(_ command: String, columns: Int, rows: Int, environment: [String: String] = [:]) throws
        -> [String]
    {
        let tmux = try TmuxSession(columns: columns, rows: rows, environment: environment)
        defer { tmux.end() }
        let photoImport = FileCopyProcess.productsDirectory.appendingPathComponent("photo-import").path
        tmux.type("\(photoImport) \(command); echo EXIT=$?", enter: true)
        XCTAssertTrue(tmux.wait(timeout: 60) { $0.contains("\nEXIT=") }, tmux.screen)
        let lines = tmux.history
        guard let start = lines.lastIndex(where: { $0.hasSuffix("; echo EXIT=$?") }),
            let end = lines.lastIndex(where: { $0.hasPrefix("EXIT=") })
        else {
            XCTFail("no run in \(lines)")
            return []
        }
        XCTAssertEqual(lines[end], "EXIT=1")
        return Array(lines[(start + 1)..<end])
    }

    private func checkSentences(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) {
        // A start, at most three quarters, the failure, the outcome, and the program's summary.
        XCTAssertGreaterThanOrEqual(lines.count, 4, "\(lines)", file: file, line: line)
        XCTAssertLessThanOrEqual(lines.count, 7, "\(lines)", file: file, line: line)
        XCTAssertEqual(lines.first, "Importing 6 photos: started, 0 of 6.", file: file, line: line)
        XCTAssertTrue(
            lines.contains("IMG_0004.jpg failed: the camera stopped answering (simulated with --fail-every 4)."),
            "\(lines)", file: file, line: line)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("Importing 6 photos failed at ") && $0.hasSuffix(": 1 of 6 photos failed.") },
            "\(lines)", file: file, line: line)
        XCTAssertTrue(
            lines.last?.hasPrefix("Imported 5 photos, 1 failed, in ") == true, "\(lines)", file: file, line: line)
        for sentence in lines {
            XCTAssertTrue(".!?".contains(sentence.last ?? " "), "a sentence: \(sentence)", file: file, line: line)
            XCTAssertTrue(sentence.allSatisfy { !glyphs.contains($0) }, "no glyph: \(sentence)", file: file, line: line)
            XCTAssertTrue(sentence.first?.isUppercase == true, "a sentence: \(sentence)", file: file, line: line)
        }
    }

    func test_progress_accessible_says_sentences_on_a_terminal_of_100_columns() throws {
        checkSentences(try run("--progress accessible --photos 6 --speed 4 --fail-every 4", columns: 100, rows: 30))
    }

    /// Chosen by `ACCESSIBLE=1` alone, on a terminal of 40 columns: the same sentences, wrapped by the
    /// terminal, never cut or redrawn.
    func test_accessible_environment_chooses_it_on_a_terminal_of_40_columns() throws {
        checkSentences(
            try run("--photos 6 --speed 4 --fail-every 4", columns: 40, rows: 15, environment: ["ACCESSIBLE": "1"]))
    }

    /// The raw bytes of a run on a pseudo-terminal: no escape sequence at all, and one line per sentence.
    func test_accessible_writes_no_escape_sequence_on_a_terminal() throws {
        let child = try ExampleProcess(
            "photo-import", ["--photos", "6", "--speed", "4", "--progress", "accessible"], terminal: true)
        XCTAssertEqual(child.waitForExit()?.status, 0)
        let output = child.outputText
        XCTAssertFalse(output.contains("\u{1B}"), output.debugDescription)
        let lines = output.split(separator: "\r\n", omittingEmptySubsequences: true)
        XCTAssertEqual(lines.first, "Importing 6 photos: started, 0 of 6.")
        XCTAssertTrue(lines.contains("Importing 6 photos finished: 6 of 6."), output)
        XCTAssertLessThanOrEqual(lines.count, 6, output)
    }
}
