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
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[0]) }
        let output = FileDescriptorOutput(descriptor: ends[1])

        TerminalCursor.hide(on: output)
        TerminalCursor.show(on: output)
        close(ends[1])

        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "\u{1B}[?25l\u{1B}[?25h")
    }
}
