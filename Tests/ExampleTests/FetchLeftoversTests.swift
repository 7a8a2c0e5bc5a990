import Foundation
import TestSupport
import XCTest

/// A fetch ended by `kill -9` cannot clean up: its folder of partial downloads stays in the temporary
/// folder, named after its process, and the next fetch removes it.
final class FetchLeftoversTests: XCTestCase {
    func test_the_partial_downloads_of_a_killed_fetch_are_removed_by_the_next_one() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("leftovers-\(UUID().uuidString)")
        let output = root.appendingPathComponent("out")
        let downloads = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try TestHTTPServer(
            files: ["big.bin": Data(count: 4_000_000), "small.bin": Data(count: 1_000)], chunkSize: 32_768,
            pause: .milliseconds(20))
        defer { server.stop() }
        func leftFolders() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: downloads.path).filter { $0.hasPrefix("fetch-") }
        }

        let killed = try ExampleProcess(
            "fetch", [server.url("big.bin"), "--output", output.path, "--progress", "none"],
            environment: ["TMPDIR": downloads.path])
        XCTAssertTrue(killed.wait(timeout: 30) { server.hasSent(262_144, of: "big.bin") }, "the transfer began")
        killed.send(SIGKILL)
        _ = try XCTUnwrap(killed.waitForExit(timeout: 30))
        let left = try leftFolders()
        XCTAssertEqual(left.count, 1, "kill -9 leaves its folder")
        XCTAssertTrue(left[0].hasPrefix("fetch-\(killed.process.processIdentifier)-"), left[0])

        let next = try FileCopyProcess.run(
            [server.url("small.bin"), "--output", output.path, "--progress", "none"], named: "fetch",
            environment: ["TMPDIR": downloads.path])
        XCTAssertEqual(next.status, 0, next.standardError)
        XCTAssertEqual(try leftFolders(), [], "the next fetch removed it, and its own")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path), ["small.bin"])
    }
}
