import Foundation
import ProgressTree
import ProgressTreeStreaming
import XCTest

/// The example run as a program: its first line is the URL; `curl -N URL/events` gives lines that the
/// wire format's reader (`ProgressWireRecord(line:)`, written from `Docs/WireFormat.md`) accepts, ending
/// with the root's final line; Ctrl-C ends it with 130 and leaves no process.
final class WebDashboardExampleTests: XCTestCase {
    /// Starts web-dashboard with `arguments`; the process and its first line on standard output.
    private func start(_ arguments: [String]) throws -> (Process, String) {
        let example = try ExampleProcess("web-dashboard", arguments)
        return (example.process, example.url)
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

    /// Reads `/events` of the server at `port` until `done` holds for the progress lines read (or 30 s).
    private func readLines(
        _ port: Int, until done: ([ProgressWireRecord]) -> Bool
    ) throws -> (RawHTTPConnection, [ProgressWireRecord]) {
        let connection = try RawHTTPConnection(port: port)
        connection.send("GET", "/events")
        XCTAssertTrue(connection.read(seconds: 30) { done(Self.records($0)) })
        return (connection, connection.response.map(Self.records) ?? [])
    }

    /// The progress lines of an event stream read so far (its other events left out).
    private static func records(_ response: RawHTTPConnection.Response) -> [ProgressWireRecord] {
        ServerSentEvent.parse(response.body).filter { $0.event == nil }.compactMap {
            $0.data.first.flatMap { try? ProgressWireRecord(line: Array($0.utf8)) }
        }
    }

    /// Posts `command` on `id` to the server at `port` with its token: the answer's status.
    private func command(_ port: Int, _ command: String, id: Int) throws -> Int {
        let tokenConnection = try RawHTTPConnection(port: port)
        tokenConnection.send("GET", "/token")
        let token = try tokenConnection.answer().body
        let connection = try RawHTTPConnection(port: port)
        connection.send(
            "POST", "/commands", headers: [("ProgressTree-Token", token)],
            body: Array(#"{"v":1,"command":"\#(command)","id":\#(id)}"#.utf8))
        return try connection.answer().status
    }

    func test_a_photo_cancelled_on_its_own_leaves_the_album_finished_with_what_was_imported() throws {
        let example = try ExampleProcess("web-dashboard", ["--photos", "6", "--speed", "2"])
        defer { example.end() }
        // The album paused first, so that the photo to cancel cannot finish before the Cancel reaches it.
        let (reader, named) = try readLines(example.port) { lines in lines.contains { $0.parentID == nil } }
        let albumID = try XCTUnwrap(named.first { $0.parentID == nil }).id
        XCTAssertEqual(try command(example.port, "pause", id: albumID), 204)
        XCTAssertTrue(
            reader.read(seconds: 30) { Self.records($0).contains { $0.id == albumID && $0.state == .paused } })
        // A reader joining now is sent the current line of every photo still in the tree, then `synced`:
        // the one that has done the least (paused, a photo advances one step at most) is the one cancelled.
        let joiner = try RawHTTPConnection(port: example.port)
        joiner.send("GET", "/events")
        XCTAssertTrue(joiner.read(seconds: 30) { ServerSentEvent.parse($0.body).contains { $0.event == "synced" } })
        let photo = try XCTUnwrap(
            joiner.response.map(Self.records)?.filter { $0.parentID == albumID && !$0.state.isFinal }
                .min { $0.fractionCompleted < $1.fractionCompleted })
        XCTAssertLessThan(photo.fractionCompleted, 0.9, "the photo cancelled is still downloading")
        XCTAssertEqual(try command(example.port, "cancel", id: photo.id), 204)
        XCTAssertEqual(try command(example.port, "resume", id: albumID), 204)
        // The album ends (before, it stayed at 5 of 6, running, for good): finished, saying what was imported.
        XCTAssertTrue(
            reader.read(seconds: 30) { Self.records($0).contains { $0.parentID == nil && $0.state.isFinal } },
            "the album reached a final state")
        let all = try XCTUnwrap(reader.response.map(Self.records))
        XCTAssertEqual(all.last { $0.id == photo.id }?.state, .cancelled)
        let album = try XCTUnwrap(all.last { $0.parentID == nil })
        XCTAssertEqual(album.state, .finished)
        XCTAssertEqual(album.localizedAdditionalDescription, "5 of 6 imported")
        XCTAssertEqual(album.failedBelow, 0)
        // The photo, and its download cancelled with it.
        XCTAssertEqual(album.cancelledBelow, 2)
    }

    func test_sigterm_with_readers_connected_ends_their_streams_with_ended_and_the_program_within_2_s() throws {
        let example = try ExampleProcess("web-dashboard", ["--photos", "50"])
        defer { example.end() }
        let readers = try (0..<2).map { _ in try readLines(example.port) { !$0.isEmpty }.0 }
        let started = ContinuousClock.now
        kill(example.process.processIdentifier, SIGTERM)
        example.process.waitUntilExit()
        let took = started.duration(to: .now)
        XCTAssertLessThan(took, .seconds(2), "web-dashboard stopped in \(took)")
        XCTAssertEqual(example.process.terminationStatus, 143)
        for reader in readers {
            XCTAssertTrue(reader.read(seconds: 2) { $0.isComplete })
            XCTAssertEqual(
                ServerSentEvent.parse(try XCTUnwrap(reader.response).body).last?.summary(base: 0), "ended stopping")
        }
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
