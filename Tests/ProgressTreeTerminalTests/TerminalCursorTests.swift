#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProgressTreeTerminal
import XCTest

/// `TerminalCursor`, for programs that draw their own lines: the exact sequences it writes.
final class TerminalCursorTests: XCTestCase {
    func test_hide_then_show_write_the_cursor_sequences_in_order() throws {
        let written = try written { output in
            TerminalCursor.hide(on: output)
            TerminalCursor.show(on: output)
        }
        XCTAssertEqual(written, "\u{1B}[?25l\u{1B}[?25h")
    }

    /// The snippet of Docs/Terminal.md ("Drawing your own line"), on a pipe (no terminal size: 80 columns).
    func test_guide_drawing_your_own_line() throws {
        let line = "Step 4 of 5  " + String(repeating: "█", count: 100)
        let written = try written { output in
            TerminalCursor.hide(on: output)
            let columns = output.size()?.columns ?? 80
            output.write("\r" + DisplayWidth.truncate(line, toColumns: columns - 1) + "\u{1B}[K")
            TerminalCursor.show(on: output)
        }
        let drawn = "Step 4 of 5  " + String(repeating: "█", count: 65) + "…"
        XCTAssertEqual(DisplayWidth.of(drawn), 79)
        XCTAssertEqual(written, "\u{1B}[?25l\r" + drawn + "\u{1B}[K\u{1B}[?25h")
    }

    /// What `body` writes to an output on the write end of a pipe, read back once it is closed.
    private func written(by body: (FileDescriptorOutput) -> Void) throws -> String {
        writtenToPipe { body(FileDescriptorOutput(descriptor: $0)) }
    }
}
