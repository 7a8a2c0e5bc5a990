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
/// every failed node with its reason, no line that only repeats the node's previous one, and as many
/// nodes named failed and cancelled as the root's `failedBelow` and `cancelledBelow` count (nothing is
/// below a depth limit, and photo-import has no node that finishes after it was cancelled).
final class WireFormatExampleTests: XCTestCase {
    private let failure = "IMG_0004.jpg: the camera stopped answering (simulated with --fail-every 4)"

    /// Runs photo-import with `arguments` and reads its stream (standard output: json mode writes the JSON
    /// lines there, and so does a program `publishing` on `PROGRESSTREE_FD=1`); fails the test for every rule the stream broke and every
    /// failure or cancellation the root counts that the stream did not name.
    private func stream(
        _ arguments: [String], publishing: Bool = false, status: Int32, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> WireFormatReader {
        let result = try FileCopyProcess.run(
            arguments, named: "photo-import", environment: publishing ? ["PROGRESSTREE_FD": "1"] : [:])
        XCTAssertEqual(result.status, status, result.standardError, file: file, line: line)
        let reader = WireFormatReader(result.standardOutput)
        XCTAssertEqual(reader.violations, [], file: file, line: line)
        XCTAssertEqual(reader.unaccountedOutcomes, [], file: file, line: line)
        XCTAssertGreaterThan(reader.lineCount, 0, file: file, line: line)
        return reader
    }

    /// The reason photo-import gives for the photo `name` that `--fail-every every` made fail.
    private func failure(of name: String, every: Int) -> String {
        "\(name): the camera stopped answering (simulated with --fail-every \(every))"
    }

    /// The photo that fails between two frames (at `--speed 20` it lives for less than two) is named,
    /// failed, with its reason, and below it the download its failure cancelled; so is the album; every
    /// run, whatever the timing.
    func test_json_mode_names_the_photo_that_failed_with_its_reason_and_the_download_it_cancelled() throws {
        for _ in 0..<3 {
            let reader = try stream(
                ["--photos", "5", "--speed", "20", "--fail-every", "4", "--progress", "json"], status: 1)
            XCTAssertEqual(reader.nodes(in: "failed").map(\.name), ["Importing 5 photos", "IMG_0004.jpg"])
            XCTAssertEqual(reader.nodes(in: "failed").map(\.reason), ["1 of 5 photos failed", failure])
            let photo = try XCTUnwrap(reader.nodes(in: "failed").last)
            XCTAssertEqual(photo.parent, 1)
            XCTAssertEqual(photo.cancelledBelow, 1, "its download, cancelled")
            XCTAssertEqual(reader.nodes(in: "cancelled").map(\.name), ["Downloading “IMG_0004.jpg”…"])
            XCTAssertEqual(reader.nodes(in: "cancelled").map(\.parent), [photo.id])
            XCTAssertEqual(reader.root?.failedBelow, 1)
            XCTAssertEqual(reader.root?.cancelledBelow, 1)
        }
    }

    /// Without failures every level is named (json mode's default depth is the whole tree), and ends
    /// finished.
    func test_json_mode_without_failures_ends_with_every_photo_and_download_finished_and_repeats_no_line() throws {
        let reader = try stream(["--photos", "5", "--speed", "4", "--progress", "json"], status: 0)
        XCTAssertEqual(reader.root?.state, "finished")
        XCTAssertEqual(Set(reader.nodes.values.map(\.state)), ["finished"])
        XCTAssertEqual(
            reader.nodes.values.filter { $0.parent == 1 }.map(\.name).sorted(),
            (1...5).map { "IMG_000\($0).jpg" })
        XCTAssertEqual(
            reader.nodes.values.filter { $0.name.hasPrefix("Downloading") }.map(\.name).sorted(),
            (1...5).map { "Downloading “IMG_000\($0).jpg”…" })
    }

    /// The parent's stream with three workers: the worker whose photo failed is named with the reason its
    /// own stream gave, and so is the photo, below it; the album's final line comes after every worker's.
    func test_json_mode_with_workers_names_the_failed_worker_and_its_failed_photo_with_their_reasons() throws {
        let reader = try stream(
            ["--workers", "3", "--photos", "5", "--speed", "20", "--fail-every", "4", "--progress", "json"],
            status: 1)
        XCTAssertEqual(
            reader.nodes(in: "failed").map(\.name),
            ["Importing 5 photos", "worker 1: Importing 2 photos", "IMG_0004.jpg"])
        XCTAssertEqual(
            reader.nodes(in: "failed").map(\.reason), ["1 of 3 workers failed", "1 of 2 photos failed", failure])
        XCTAssertEqual(reader.nodes(in: "failed").last?.parent, reader.nodes(in: "failed").dropFirst().first?.id)
        XCTAssertEqual(
            reader.nodes(in: "finished").filter { $0.parent == 1 }.map(\.name).sorted(),
            ["worker 2: Importing 2 photos", "worker 3: Importing 1 photos"])
        XCTAssertEqual(reader.root?.failedBelow, 2)
    }

    /// Every worker has photos that fail, some between two of the parent's frames: each is named with its
    /// reason below its worker, and so is each worker.
    func test_json_mode_with_workers_and_many_failures_names_every_failed_photo_below_its_worker() throws {
        let reader = try stream(
            ["--workers", "3", "--photos", "12", "--speed", "20", "--fail-every", "2", "--progress", "json"],
            status: 1)
        let failed = reader.nodes(in: "failed")
        let workers = failed.filter { $0.parent == 1 }
        XCTAssertEqual(
            workers.map(\.name),
            ["worker 1: Importing 4 photos", "worker 2: Importing 4 photos", "worker 3: Importing 4 photos"])
        XCTAssertEqual(Set(workers.map(\.reason)), ["2 of 4 photos failed"])
        let photos = failed.filter { $0.id != 1 && $0.parent != 1 }
        XCTAssertEqual(photos.map(\.name).sorted(), [2, 4, 6, 8, 10, 12].map { Importer.name($0) })
        XCTAssertEqual(
            Set(photos.map { $0.reason ?? "" }),
            Set([2, 4, 6, 8, 10, 12].map { failure(of: Importer.name($0), every: 2) }))
        let workerOf = Dictionary(uniqueKeysWithValues: workers.map { ($0.id, $0.name) })
        XCTAssertEqual(
            photos.map { "\(workerOf[$0.parent ?? 0] ?? "?") › \($0.name)" }.sorted(),
            [
                "worker 1: Importing 4 photos › IMG_0004.jpg", "worker 1: Importing 4 photos › IMG_0010.jpg",
                "worker 2: Importing 4 photos › IMG_0002.jpg", "worker 2: Importing 4 photos › IMG_0008.jpg",
                "worker 3: Importing 4 photos › IMG_0006.jpg", "worker 3: Importing 4 photos › IMG_0012.jpg",
            ])
        XCTAssertEqual(reader.root?.reason, "3 of 3 workers failed")
        XCTAssertEqual(reader.root?.failedBelow, 9)
    }

    func test_json_mode_with_workers_and_no_failures_ends_with_every_worker_finished() throws {
        let reader = try stream(["--workers", "3", "--photos", "6", "--speed", "20", "--progress", "json"], status: 0)
        XCTAssertEqual(
            reader.nodes.values.filter { $0.parent == 1 }.map(\.name).sorted(),
            ["worker 1: Importing 2 photos", "worker 2: Importing 2 photos", "worker 3: Importing 2 photos"])
        XCTAssertEqual(Set(reader.nodes.values.map(\.state)), ["finished"])
    }

    /// `ProgressPublisher`'s stream, every level: the failed photo with its reason below the album; its
    /// download cancelled below it.
    func test_a_publishing_photo_import_names_the_photo_that_failed_with_its_reason_and_its_download() throws {
        for _ in 0..<3 {
            let reader = try stream(
                ["--photos", "5", "--speed", "20", "--fail-every", "4"], publishing: true, status: 1)
            XCTAssertEqual(reader.nodes(in: "failed").map(\.name), ["Importing 5 photos", "IMG_0004.jpg"])
            XCTAssertEqual(reader.nodes(in: "failed").map(\.reason), ["1 of 5 photos failed", failure])
            let photo = try XCTUnwrap(reader.nodes(in: "failed").last)
            XCTAssertEqual(reader.nodes(in: "cancelled").map(\.parent), [photo.id])
        }
    }

    /// Half the photos fail, several at once: each is named with its reason, and its download cancelled.
    func test_a_publishing_photo_import_with_many_failures_names_each_failed_photo_and_its_download() throws {
        let reader = try stream(
            ["--photos", "12", "--speed", "20", "--fail-every", "2"], publishing: true, status: 1)
        let photos = reader.nodes(in: "failed").filter { $0.parent == 1 }.sorted { $0.name < $1.name }
        XCTAssertEqual(photos.map(\.name), [2, 4, 6, 8, 10, 12].map { Importer.name($0) })
        XCTAssertEqual(photos.map(\.reason), [2, 4, 6, 8, 10, 12].map { failure(of: Importer.name($0), every: 2) })
        XCTAssertEqual(reader.nodes(in: "cancelled").compactMap(\.parent).sorted(), photos.map(\.id).sorted())
        XCTAssertEqual(reader.root?.failedBelow, 6)
    }

    /// Runs photo-import in json mode with `arguments`, sends Ctrl-C once the stream named each of `names`
    /// (in any order: workers are processes of their own, and either may name its root first), and reads
    /// the stream; fails the test for every rule the stream broke, every cancellation the root counts that
    /// it did not name, and a root that did not end cancelled.
    private func interrupted(
        _ arguments: [String], onceNamed names: String..., file: StaticString = #filePath, line: UInt = #line
    ) throws -> WireFormatReader {
        let child = try ExampleProcess("photo-import", arguments + ["--progress", "json"])
        for name in names {
            XCTAssertTrue(
                child.waitForOutput(containing: "\"name\":\"\(name)\""), child.outputText, file: file, line: line)
        }
        child.send(SIGINT)
        XCTAssertEqual(child.waitForExit(timeout: 30)?.status, 130, child.outputText, file: file, line: line)
        let reader = WireFormatReader(child.outputText)
        XCTAssertEqual(reader.violations, [], file: file, line: line)
        XCTAssertEqual(reader.unaccountedOutcomes, [], file: file, line: line)
        XCTAssertEqual(reader.root?.state, "cancelled", file: file, line: line)
        return reader
    }

    /// Ctrl-C: every photo and download the stream named and that had not finished ends cancelled, before
    /// the album's final line.
    func test_ctrl_c_in_json_mode_ends_every_named_photo_cancelled_before_the_album() throws {
        let reader = try interrupted(["--photos", "6", "--speed", "1"], onceNamed: "IMG_0003.jpg")
        XCTAssertEqual(
            reader.nodes(in: "cancelled").filter { $0.parent == 1 }.map(\.name),
            ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg"])
        XCTAssertEqual(reader.root?.cancelledBelow, 3 + 3 * 1, "each photo and its download")
    }

    func test_ctrl_c_in_json_mode_with_workers_ends_every_worker_cancelled_before_the_album() throws {
        let reader = try interrupted(
            ["--workers", "2", "--photos", "40", "--speed", "0.5"],
            onceNamed: "worker 1: Importing 20 photos", "worker 2: Importing 20 photos")
        XCTAssertEqual(
            reader.nodes(in: "cancelled").filter { $0.parent == 1 }.map(\.name),
            ["worker 1: Importing 20 photos", "worker 2: Importing 20 photos"])
    }
}

private enum Importer {
    /// photo-import's name for its `number`-th photo, from 1.
    static func name(_ number: Int) -> String {
        "IMG_" + String(repeating: "0", count: 4 - String(number).count) + "\(number).jpg"
    }
}
