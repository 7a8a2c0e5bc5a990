import XCTest

/// Polls `condition` between `Task.yield()`s; fails (instead of hanging) after `timeout`.
func waitUntil(
    timeout: Duration = .seconds(60), file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline {
            XCTFail("condition not met within \(timeout)", file: file, line: line)
            throw CancellationError()
        }
        await Task.yield()
    }
}
