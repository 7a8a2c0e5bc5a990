#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import XCTest

/// `photo-import --progress json` (the terminal renderer's json mode) and a publishing `photo-import`
/// (`ProgressPublisher`, `PROGRESSTREE_FD`), read by `WireFormatReader`, a reader written from
/// Docs/WireFormat.md alone: the root's final line last, a final line for every node the stream named,
/// every failed node with its reason, no line that only repeats the node's previous one.
final class WireFormatExampleTests: XCTestCase {
    private let failure = "IMG_0004.jpg: the camera stopped answering (simulated with --fail-every 4)"

    /// Runs photo-import with `arguments` and reads its stream (standard error, or standard output when
    /// `publishing` on `PROGRESSTREE_FD=1`); fails the test for every rule the stream broke.
    private func stream(
        _ arguments: [String], publishing: Bool = false, status: Int32, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> WireFormatReader {
        let result = try FileCopyProcess.run(
            arguments, named: "photo-import", environment: publishing ? ["PROGRESSTREE_FD": "1"] : [:])
        XCTAssertEqual(result.status, status, result.standardError, file: file, line: line)
        let reader = WireFormatReader(publishing ? result.standardOutput : result.standardError)
        XCTAssertEqual(reader.violations, [], file: file, line: line)
        XCTAssertGreaterThan(reader.lineCount, 0, file: file, line: line)
        return reader
    }

    /// The photo that fails between two frames (at `--speed 20` it lives for less than two) is named,
    /// failed, with its reason; so is the album; every run, whatever the timing.
    func test_json_mode_names_the_photo_that_failed_with_its_reason_and_ends_with_the_albums_line() throws {
        for _ in 0..<3 {
            let reader = try stream(
                ["--photos", "5", "--speed", "20", "--fail-every", "4", "--progress", "json"], status: 1)
            XCTAssertEqual(reader.nodes(in: "failed").map(\.name), ["Importing 5 photos", "IMG_0004.jpg"])
            XCTAssertEqual(reader.nodes(in: "failed").map(\.reason), ["1 of 5 photos failed", failure])
            XCTAssertEqual(reader.nodes(in: "failed").last?.parent, 1)
            XCTAssertEqual(reader.nodes(in: "failed").last?.cancelledBelow, 1, "its download, cancelled")
            XCTAssertEqual(reader.root?.failedBelow, 1)
            XCTAssertEqual(reader.nodes(in: "cancelled"), [])
        }
    }

    func test_json_mode_without_failures_ends_with_every_named_photo_finished_and_repeats_no_line() throws {
        let reader = try stream(["--photos", "5", "--speed", "4", "--progress", "json"], status: 0)
        XCTAssertEqual(reader.root?.state, "finished")
        XCTAssertEqual(Set(reader.nodes.values.map(\.state)), ["finished"])
        XCTAssertGreaterThan(reader.nodes.count, 1, "the photos were named")
    }

    /// The parent's stream with three workers: the worker whose photo failed is named with the reason its
    /// own stream gave, and the album's final line comes after every worker's.
    func test_json_mode_with_workers_names_the_failed_worker_with_its_reason() throws {
        let reader = try stream(
            ["--workers", "3", "--photos", "5", "--speed", "20", "--fail-every", "4", "--progress", "json"],
            status: 1)
        XCTAssertEqual(
            reader.nodes(in: "failed").map(\.name), ["Importing 5 photos", "Worker 1: 2 photos"])
        XCTAssertEqual(reader.nodes(in: "failed").map(\.reason), ["1 of 3 workers failed", "1 of 2 photos failed"])
        XCTAssertEqual(
            reader.nodes(in: "finished").map(\.name).sorted(), ["Worker 2: 2 photos", "Worker 3: 1 photos"])
    }

    func test_json_mode_with_workers_and_no_failures_ends_with_every_worker_finished() throws {
        let reader = try stream(["--workers", "3", "--photos", "6", "--speed", "20", "--progress", "json"], status: 0)
        XCTAssertEqual(
            reader.nodes.values.filter { $0.parent == 1 }.map(\.name).sorted(),
            ["Worker 1: 2 photos", "Worker 2: 2 photos", "Worker 3: 2 photos"])
        XCTAssertEqual(Set(reader.nodes.values.map(\.state)), ["finished"])
    }

    /// `ProgressPublisher`'s stream, every level: the failed photo with its reason below the album; its
    /// download, if the stream named it, cancelled.
    func test_a_publishing_photo_import_names_the_photo_that_failed_with_its_reason() throws {
        for _ in 0..<3 {
            let reader = try stream(
                ["--photos", "5", "--speed", "20", "--fail-every", "4"], publishing: true, status: 1)
            XCTAssertEqual(reader.nodes(in: "failed").map(\.name), ["Importing 5 photos", "IMG_0004.jpg"])
            XCTAssertEqual(reader.nodes(in: "failed").map(\.reason), ["1 of 5 photos failed", failure])
            let photo = try XCTUnwrap(reader.nodes(in: "failed").last)
            XCTAssertTrue(
                reader.nodes(in: "cancelled").allSatisfy { $0.parent == photo.id },
                "only the failed photo's download was cancelled: \(reader.nodes(in: "cancelled"))")
        }
    }

    /// Ctrl-C: every photo the stream named and that had not finished ends cancelled, before the album's
    /// final line.
    func test_ctrl_c_in_json_mode_ends_every_named_photo_cancelled_before_the_album() throws {
        let child = try ExampleProcess("photo-import", ["--photos", "6", "--speed", "1", "--progress", "json"])
        XCTAssertTrue(child.waitForOutput(containing: "\"name\":\"IMG_0003.jpg\""), child.outputText)
        child.send(SIGINT)
        XCTAssertEqual(child.waitForExit(timeout: 30)?.status, 130, child.outputText)
        let reader = WireFormatReader(child.outputText)
        XCTAssertEqual(reader.violations, [])
        XCTAssertEqual(reader.root?.state, "cancelled")
        XCTAssertEqual(reader.nodes(in: "cancelled").map(\.name), ["Importing 6 photos", "IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg"])
        XCTAssertEqual(reader.root?.cancelledBelow, 3 + 3 * 1, "each photo and its download")
    }

    func test_ctrl_c_in_json_mode_with_workers_ends_every_worker_cancelled_before_the_album() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "2", "--photos", "40", "--speed", "0.5", "--progress", "json"])
        XCTAssertTrue(child.waitForOutput(containing: "\"name\":\"Worker 2: 20 photos\""), child.outputText)
        child.send(SIGINT)
        XCTAssertEqual(child.waitForExit(timeout: 30)?.status, 130, child.outputText)
        let reader = WireFormatReader(child.outputText)
        XCTAssertEqual(reader.violations, [])
        XCTAssertEqual(
            reader.nodes(in: "cancelled").map(\.name), ["Importing 40 photos", "Worker 1: 20 photos", "Worker 2: 20 photos"])
    }
}
