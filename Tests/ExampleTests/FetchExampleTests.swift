import Foundation
import TestSupport
import XCTest

/// The fetch example against a real HTTP server on 127.0.0.1 that each test starts and stops
/// (`TestHTTPServer`): the bytes written, the tree reaching 1.0, failures with their reasons, a cancel
/// that closes the connection, and the exit statuses.
final class FetchExampleTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: folder)
    }

    /// Bytes that differ from one position to the next, so that a file in the wrong order differs.
    private func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 8) })
    }

    /// The json lines of a run, as objects.
    private func records(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    private func savedFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    func test_downloads_every_file_byte_for_byte_and_the_tree_reaches_1() throws {
        let photo = bytes(300_000, seed: 1)
        let notes = bytes(1_234, seed: 2)
        let server = try TestHTTPServer(files: ["photo.jpg": photo, "docs/notes.txt": notes], chunkSize: 65_536)
        defer { server.stop() }
        let result = try FileCopyProcess.run(
            [server.url("photo.jpg"), server.url("docs/notes.txt"), "--output", folder.path, "--progress", "json"],
            named: "fetch")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try savedFiles(), ["notes.txt", "photo.jpg"])
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("photo.jpg")), photo)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("notes.txt")), notes)
        let lines = try records(result.standardOutput)
        let root = try XCTUnwrap(lines.last { $0["parent"] is NSNull })
        XCTAssertEqual(root["fraction"] as? Double, 1.0)
        XCTAssertEqual(root["state"] as? String, "finished")
        let photoLine = try XCTUnwrap(lines.last { $0["name"] as? String == "Downloading “photo.jpg”…" })
        XCTAssertEqual(photoLine["state"] as? String, "finished")
        XCTAssertEqual(photoLine["total"] as? Int, 300_000, "the task's own byte counts")
        XCTAssertTrue(
            result.standardError.hasPrefix("Downloaded 2 files (301 KB) to \(folder.standardizedFileURL.path) in "),
            "json mode: the JSON lines alone on standard output, the summary on standard error; " + result.standardError
        )
        XCTAssertEqual(server.served.map(\.completed), [true, true])
    }

    func test_a_404_and_a_refused_connection_are_shown_failed_with_their_reasons_and_exit_1() throws {
        let server = try TestHTTPServer(files: ["photo.jpg": bytes(10_000, seed: 3)])
        defer { server.stop() }
        let refused = "http://127.0.0.1:\(try TestHTTPServer.refusingPort())/other.jpg"
        // URLSession's downloads go to the temporary folder (`TMPDIR`): one of fetch's own, to see it left empty.
        let downloads = folder.deletingLastPathComponent().appendingPathComponent("\(folder.lastPathComponent)-tmp")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: downloads) }
        let result = try FileCopyProcess.run(
            [
                server.url("photo.jpg"), server.url("missing.jpg"), refused, "--output", folder.path, "--progress",
                "json",
            ],
            named: "fetch", environment: ["TMPDIR": downloads.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(try savedFiles(), ["photo.jpg"], "nothing saved for the failures")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: downloads.path), [],
            "no download left in the temporary folder, the 404's error page included")
        let lines = try records(result.standardOutput)
        let missing = try XCTUnwrap(lines.last { $0["name"] as? String == "Downloading “missing.jpg”…" })
        XCTAssertEqual(missing["state"] as? String, "failed")
        XCTAssertEqual(missing["reason"] as? String, "HTTP 404 (Not Found)")
        let other = try XCTUnwrap(lines.last { $0["name"] as? String == "Downloading “other.jpg”…" })
        XCTAssertEqual(other["state"] as? String, "failed")
        let reason = try XCTUnwrap(other["reason"] as? String)
        XCTAssertTrue(reason.contains("onnect"), reason)  // curl's words: "Failed to connect to 127.0.0.1 port …"
        let root = try XCTUnwrap(lines.last { $0["parent"] is NSNull })
        XCTAssertEqual(root["state"] as? String, "failed")
        XCTAssertEqual(root["reason"] as? String, "2 of 3 failed")
        XCTAssertEqual(root["failedBelow"] as? Int, 2)
        XCTAssertEqual(
            result.standardError, "Downloaded 1 of 3 files (10 KB) to \(folder.standardizedFileURL.path), 2 failed\n")
    }

    func test_an_existing_file_is_never_overwritten() throws {
        let server = try TestHTTPServer(files: ["photo.jpg": bytes(10_000, seed: 4)])
        defer { server.stop() }
        let existing = Data("mine\n".utf8)
        try existing.write(to: folder.appendingPathComponent("photo.jpg"))
        let result = try FileCopyProcess.run(
            [server.url("photo.jpg"), "--output", folder.path, "--progress", "plain"], named: "fetch")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("photo.jpg")), existing)
        XCTAssertEqual(try savedFiles(), ["photo.jpg"])
        XCTAssertTrue(
            result.standardError.contains("1 failed: \(folder.standardizedFileURL.path)/photo.jpg already exists"),
            result.standardError)
        XCTAssertEqual(server.served, [], "not even requested")
    }

    func test_ctrl_c_mid_transfer_closes_the_connection_leaves_no_file_and_exits_130() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(4_000_000, seed: 5)], chunkSize: 32_768, pause: .milliseconds(20))
        defer { server.stop() }
        // URLSession's downloads go to the temporary folder (`TMPDIR`): one of this test's, to see it left empty.
        let downloads = folder.deletingLastPathComponent().appendingPathComponent("\(folder.lastPathComponent)-tmp")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: downloads) }
        let fetch = try ExampleProcess(
            "fetch", [server.url("big.bin"), "--output", folder.path, "--progress", "plain"],
            environment: ["NO_COLOR": "1", "TERM": "xterm", "TMPDIR": downloads.path])
        XCTAssertTrue(fetch.wait(timeout: 30) { server.hasSent(262_144, of: "big.bin") }, "the transfer began")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: downloads.path).filter { $0.hasPrefix("fetch-") }.count,
            1, "fetch downloads into a folder of its own")
        fetch.send(SIGINT)
        let exit = try XCTUnwrap(fetch.waitForExit(timeout: 30))
        XCTAssertEqual(exit.status, 130, fetch.outputText)
        XCTAssertTrue(
            fetch.wait(timeout: 30) { server.served.first?.closedByClient == true }, "the server saw it closed")
        XCTAssertEqual(server.served.map(\.completed), [false])
        XCTAssertEqual(try savedFiles(), [], "no file, partial or not")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: downloads.path), [],
            "nor the cancelled download's partial file in the temporary folder")
        XCTAssertTrue(fetch.outputText.contains("Cancelled at "), fetch.outputText)
        XCTAssertTrue(fetch.outputText.contains(": 0 of 1 file (0 bytes) downloaded to "), fetch.outputText)
    }

    /// `c` is not a signal: the exit status is 3 (cancelled), not Ctrl-C's 130.
    func test_the_c_key_cancels_a_live_transfer_and_exits_3() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(4_000_000, seed: 6)], chunkSize: 32_768, pause: .milliseconds(20))
        defer { server.stop() }
        let fetch = try ExampleProcess("fetch", [server.url("big.bin"), "--output", folder.path], terminal: true)
        XCTAssertTrue(fetch.wait(timeout: 30) { server.hasSent(262_144, of: "big.bin") }, "the transfer began")
        XCTAssertTrue(fetch.waitForOutput(containing: "c cancel"), fetch.outputText)
        fetch.type("c")
        let exit = try XCTUnwrap(fetch.waitForExit(timeout: 30))
        XCTAssertEqual(exit.status, 3, fetch.outputText)
        XCTAssertTrue(
            fetch.wait(timeout: 30) { server.served.first?.closedByClient == true }, "the server saw it closed")
        XCTAssertEqual(try savedFiles(), [])
    }

    func test_a_url_that_is_not_http_is_a_usage_error() throws {
        let result = try FileCopyProcess.run(["ftp://example.invalid/a"], named: "fetch")
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(
            result.standardError.hasPrefix(
                "fetch: not an http or https URL: ftp://example.invalid/a\n\nusage: fetch URL…"))
    }
}
