import Foundation
import ProgressTree
import ProgressTreeStreaming
import XCTest

/// The example run as a program: its first line is the URL; `curl -N URL/events` gives lines that the
/// wire format's reader (`ProgressWireRecord(line:)`, written from `Docs/WireFormat.md`) accepts, ending
/// with the root's final line; Ctrl-C ends it with 130 and leaves no process.
final class WebDashboardExampleTests: XCTestCase {
    /// The folder of the built products, where `web-dashboard` is (the test bundle's folder on Linux).
    private static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return Bundle.main.bundleURL
    }

    /// Starts web-dashboard with `arguments`; the process and its first line on standard output.
    private func start(_ arguments: [String]) throws -> (Process, String) {
        let executable = Self.productsDirectory.appendingPathComponent("web-dashboard")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), executable.path)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != 0x0A else { break }
            line.append(first)
        }
        return (process, String(decoding: line, as: UTF8.self))
    }

    /// Runs `curl -sN --max-time SECONDS URL`: what it printed.
    private func curl(_ url: String, seconds: Int) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-sN", "--max-time", String(seconds), url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func test_the_first_line_is_the_url_curl_reads_wire_lines_to_the_roots_final_one_and_ctrl_c_ends_it() throws {
        let (process, url) = try start(["--port", "0", "--photos", "4", "--speed", "20", "--fail-every", "3"])
        defer { if process.isRunning { process.terminate() } }
        XCTAssertNotNil(url.wholeMatch(of: /http:\/\/127\.0\.0\.1:[0-9]+\//), url)
        // The job takes well under a second at speed 20; the stream stays open after it: curl stops at 3 s.
        let text = try curl(url + "events", seconds: 3)
        var records: [ProgressWireRecord] = []
        var syncedEvents = 0
        var runEvents = 0
        for block in text.components(separatedBy: "\n\n") where !block.isEmpty {
            let lines = block.split(separator: "\n").map(String.init)
            if lines == ["retry: 1000"] || lines.allSatisfy({ $0.hasPrefix(":") }) { continue }
            if lines.first == "event: run" {
                runEvents += 1
                XCTAssertNotNil(lines.last?.wholeMatch(of: /data: \{"v":1,"run":"[0-9a-f]{32}"\}/), block)
                continue
            }
            if lines.first == "event: synced" {
                syncedEvents += 1
                continue
            }
            let data = lines.filter { $0.hasPrefix("data: ") }
            XCTAssertEqual(data.count, 1, block)
            XCTAssertNotNil(lines.first { $0.hasPrefix("id: ") }.flatMap { UInt64($0.dropFirst(4)) }, block)
            guard let line = data.first?.dropFirst("data: ".count) else { continue }
            XCTAssertNoThrow(records.append(try ProgressWireRecord(line: Array(line.utf8))), String(line))
        }
        XCTAssertEqual(syncedEvents, 1)
        XCTAssertEqual(runEvents, 1, "the stream names its run first")
        // The writer rules: every node named gets a final line, the root's is the last; the failed photo
        // is named with its reason.
        let last = try XCTUnwrap(records.last)
        XCTAssertNil(last.parentID)
        XCTAssertEqual(last.state, .failed)
        XCTAssertEqual(last.failureReason, "1 of 4 photos failed")
        XCTAssertEqual(records.filter { $0.parentID == nil && $0.state.isFinal }.count, 1)
        var lastLines: [Int: ProgressWireRecord] = [:]
        for record in records { lastLines[record.id] = record }
        XCTAssertTrue(
            lastLines.values.allSatisfy { $0.state.isFinal }, "\(lastLines.values.filter { !$0.state.isFinal })")
        XCTAssertEqual(
            lastLines.values.filter { $0.state == .failed && $0.parentID == 1 }.map(\.failureReason),
            ["IMG_0003.jpg: the camera stopped answering (simulated with --fail-every 3)"])

        // A reader joining after the end: the final state, then synced; the server still serves.
        let late = try curl(url + "events", seconds: 1)
        XCTAssertTrue(late.hasPrefix("retry: 1000\n\n"), late)
        XCTAssertTrue(late.contains("event: synced\n"), late)

        let pid = process.processIdentifier
        kill(pid, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 130)
        XCTAssertEqual(kill(pid, 0), -1, "no process is left")
    }

    func test_sigterm_ends_it_with_143_while_the_job_runs() throws {
        let (process, url) = try start(["--photos", "50", "--read-only"])
        defer { if process.isRunning { process.terminate() } }
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:"), url)
        let token = try curl(url + "token", seconds: 2)
        XCTAssertEqual(token, "")  // 404: curl -s prints the empty body
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 143)
    }
}
