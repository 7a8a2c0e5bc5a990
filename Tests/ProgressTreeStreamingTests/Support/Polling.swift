import TestSupport
import XCTest

extension XCTestCase {
    /// Waits (polling every 2 ms, at most `seconds`) until `condition` holds, and fails the test naming
    /// `what` if it does not: the other side of a stream runs on other threads and in other processes,
    /// with nothing to wait on but its effects.
    func wait(
        _ what: String, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () -> Bool
    ) {
        if !poll(seconds: seconds, until: condition) {
            XCTFail("timed out waiting for: \(what)", file: file, line: line)
        }
    }
}
