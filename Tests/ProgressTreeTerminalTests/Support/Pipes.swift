#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import XCTest

/// Everything `body` writes to the write end of a pipe (the descriptor it is given), read back once `body`
/// returned and that end is closed.
func writtenToPipe(by body: (_ writeEnd: Int32) -> Void) -> String {
    var ends: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&ends), 0)
    defer { close(ends[0]) }
    body(ends[1])
    close(ends[1])
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1024)
    while true {
        let count = read(ends[0], &buffer, buffer.count)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
