#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
@testable import ProgressTreeStreaming
import TestSupport
import XCTest
import ProgressTreePlatform

/// The lines a publisher wrote, walk by walk.
private final class WrittenLines: Sendable {
    private let lines = Lock<[String]>([])

    func append(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        lines.withLock { $0.append(contentsOf: text.split(separator: "\n").map(String.init)) }
        return true
    }

    /// The records written since the last call.
    func taken() throws -> [ProgressWireRecord] {
        try lines.withLock { lines in
            defer { lines = [] }
            return try lines.map { try ProgressWireRecord(line: Array($0.utf8)) }
        }
    }
}

/// `ProgressPublisher` keeps Docs/WireFormat.md's rules for writers ("Rules for writers"), walk by walk.
final class WireWriterRulesTests: XCTestCase {
    private func makePublisher(_ root: ProgressNode, maximumDepth: Int = .max) -> (ProgressPublisher, WrittenLines) {
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        options.maximumDepth = maximumDepth
        let written = WrittenLines()
        return (ProgressPublisher(root, options: options, write: written.append), written)
    }

    /// "id parent state name", one string a record, for the order of a walk.
    private func summary(_ records: [ProgressWireRecord]) -> [String] {
        records.map { "\($0.id) \($0.parentID.map(String.init) ?? "-") \($0.state.rawValue) \($0.label ?? "")" }
    }

    private func album(total: Int64) -> ProgressNode {
        let root = ProgressNode.discreteProgress(totalUnitCount: total)
        root.localizedDescription = "Album"
        return root
    }

    /// An album of `total` units, published once (that walk's records taken).
    private func publishedAlbum(total: Int64) throws -> (
        root: ProgressNode, publisher: ProgressPublisher, written: WrittenLines
    ) {
        let root = album(total: total)
        let (publisher, written) = makePublisher(root)
        _ = try walk(publisher, written)
        return (root, publisher, written)
    }

    /// One walk of `publisher`: its records.
    private func walk(_ publisher: ProgressPublisher, _ written: WrittenLines) throws -> [ProgressWireRecord] {
        publisher.publishChanges()
        return try written.taken()
    }

    /// "Album" over "IMG_0001.jpg" (1 of 2 units) over "download" (9 of 10), published once; that walk's
    /// records.
    private func publishedPhoto() throws -> (
        root: ProgressNode, photo: ProgressNode, download: ProgressNode, publisher: ProgressPublisher,
        written: WrittenLines, first: [ProgressWireRecord]
    ) {
        let root = album(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        let download = makeNamedNode("download", total: 100, parent: photo, pending: 9)
        let (publisher, written) = makePublisher(root)
        publisher.publishChanges()
        return (root, photo, download, publisher, written, try written.taken())
    }

    /// The child, with its reason, and below it the download its failure cancelled, both from what the
    /// parent kept: the first line of each is its last.
    func test_a_line_spells_every_member_in_order_with_strings_escaped_and_numbers_rounded() throws {
        var record = ProgressWireRecord(
            id: 12, parentID: 3, pendingUnitCount: 2, totalUnitCount: -1,
            completedUnitCount: -9_223_372_036_854_775_807, state: .paused)
        record.time = 2.5
        record.label = "a \"b\" \\ c\n\r\t\u{1}\u{1F}\u{7F} é 🙂"
        record.fractionCompleted = 1.0 / 3.0
        record.throughput = -4
        record.estimatedTimeRemaining = 7
        record.failureReason = ""
        record.failedBelow = 1
        record.cancelledBelow = 20
        record.localizedDescription = "Copying"
        record.fileURL = "file:///tmp/a%20b"
        record.fileTotalCount = 0
        record.isCancellable = false
        record.isPausable = true
        let expected =
            #"{"v":1,"time":2.5,"id":12,"parent":3,"pending":2,"name":"a \"b\" \\ c\n\r\t\u0001\u001f\u007f é 🙂","#
            + #""completed":-9223372036854775807,"total":-1,"fraction":0.333333,"state":"paused","indeterminate":true,"#
            + #""throughput":-4,"timeRemaining":7,"reason":"","failedBelow":1,"cancelledBelow":20,"description":"Copying","#
            + #""additionalDescription":null,"kind":null,"fileOperationKind":null,"fileURL":"file:///tmp/a%20b","#
            + #""fileTotalCount":0,"fileCompletedCount":null,"cancellable":false,"pausable":true}"#
        XCTAssertEqual(record.line, expected)
        XCTAssertEqual(try ProgressWireRecord(line: Array(record.line.utf8)).label, record.label)
        record.time = nil
        record.fractionCompleted = .nan
        XCTAssertTrue(record.line.contains(#""time":null,"#))
        XCTAssertTrue(record.line.contains(#""fraction":null,"#))
    }

    func test_a_decimal_number_is_read_as_the_nearest_double_whatever_its_digits() throws {
        let spellings = [
            "0.1", "0.737257", "-0.5", "-0.0", "00.25", "123456.789", "0.333333333333333", "0.1234567890123456789",
            "9007199254740993.5", "1.5e3", "2.5E-2", "0.000001", "12345678901234.5", "1.23456789012345",
        ]
        for spelling in spellings {
            let members = try WireJSON.object(Array("{\"n\":\(spelling)}".utf8))
            guard case .number(let value, let integer)? = members["n"] else { return XCTFail(spelling) }
            XCTAssertEqual(value.bitPattern, Double(spelling)!.bitPattern, spelling)
            XCTAssertNil(integer, spelling)
        }
        for malformed in ["1.5.2", "0.5x", "0.5-1"] {
            XCTAssertThrowsError(try WireJSON.object(Array("{\"n\":\(malformed)}".utf8)), malformed)
        }
    }

    func test_records_whose_numbers_round_alike_write_the_same_line() {
        var record = ProgressWireRecord(id: 1, parentID: nil, totalUnitCount: 10, completedUnitCount: 3)
        var other = record
        other.fractionCompleted += 1e-9
        other.label = ""
        XCTAssertTrue(record.writesSameLine(as: other))
        XCTAssertEqual(record.line, other.line)
        other.fractionCompleted += 1e-6
        XCTAssertFalse(record.writesSameLine(as: other))
        record.estimatedTimeRemaining = .infinity
        other = record
        other.estimatedTimeRemaining = nil
        XCTAssertTrue(record.writesSameLine(as: other))
        XCTAssertEqual(record.line, other.line)
    }

    func test_a_child_that_appears_and_fails_between_two_walks_is_named_with_its_reason_and_what_it_cancelled() throws {
        let root = album(total: 10)
        let (publisher, written) = makePublisher(root)
        publisher.publishChanges()
        XCTAssertEqual(summary(try written.taken()), ["1 - running Album"])
        let photo = makeNamedNode("IMG_0004.jpg", total: 10, parent: root)
        photo.completedUnitCount = 4
        let download = makeNamedNode("download", total: 100, parent: photo, pending: 6)
        download.completedUnitCount = 50
        photo.fail(Numbered(number: 4))
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 failed IMG_0004.jpg", "3 2 cancelled download"])
        let line = try XCTUnwrap(records.dropFirst().first)
        XCTAssertEqual(line.failureReason, "failure 4")
        XCTAssertEqual(line.pendingUnitCount, 1)
        XCTAssertEqual(line.completedUnitCount, 4)
        XCTAssertEqual(line.totalUnitCount, 10)
        XCTAssertEqual(line.fractionCompleted, 0.7)  // (4 + 6 × 0.5) / 10, as it failed
        XCTAssertEqual(line.cancelledBelow, 1)
        let cancelled = try XCTUnwrap(records.last)
        XCTAssertEqual(cancelled.failureReason, nil)
        XCTAssertEqual(cancelled.pendingUnitCount, 6)
        XCTAssertEqual(cancelled.completedUnitCount, 50)
        XCTAssertEqual(cancelled.totalUnitCount, 100)
        XCTAssertEqual(records.first?.failedBelow, 1)
        XCTAssertEqual(records.first?.cancelledBelow, 1)
        XCTAssertEqual(try walk(publisher, written), [], "the first line of each was its last")
    }

    func test_a_named_child_that_fails_is_written_failed_once() throws {
        let root = album(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        let (publisher, written) = makePublisher(root)
        publisher.publishChanges()
        XCTAssertEqual(summary(try written.taken()), ["1 - running Album", "2 1 running IMG_0001.jpg"])
        photo.completedUnitCount = 3
        photo.fail(Numbered(number: 1))
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 failed IMG_0001.jpg"])
        XCTAssertEqual(records.last?.pendingUnitCount, 1, "the share it stood for, though it left")
        XCTAssertEqual(records.last?.failureReason, "failure 1")
        XCTAssertEqual(try walk(publisher, written), [])
    }

    func test_a_child_that_appears_and_finishes_between_two_walks_is_not_named() throws {
        let (root, publisher, written) = try publishedAlbum(total: 2)
        makeNamedNode("quick", total: 1, parent: root).completedUnitCount = 1
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album"])
        XCTAssertEqual(records.first?.completedUnitCount, 1, "its units are in its parent's count")
    }

    /// The root's final line ends the stream: after the last line of every node the stream named, each in
    /// a final state (a child still running below the finished root ends finished with it); nothing after.
    func test_the_roots_final_line_comes_after_every_named_nodes_last_line_and_nothing_follows() throws {
        let root = album(total: 2)
        let first = makeNamedNode("a", total: 10, parent: root)
        let second = makeNamedNode("b", total: 10, parent: root)
        let (publisher, written) = makePublisher(root)
        _ = try walk(publisher, written)
        first.completedUnitCount = 10
        second.completedUnitCount = 4
        root.completedUnitCount = 2  // finished by its own count while b still runs
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["2 1 finished a", "3 1 finished b", "1 - finished Album"])
        XCTAssertEqual(
            records.dropFirst().first?.completedUnitCount, 4, "b's counts as read; its state its parent's outcome")
        XCTAssertEqual(records.dropFirst().first?.pendingUnitCount, 1)
        second.completedUnitCount = 5
        publisher.publishChanges()
        publisher.finish()
        XCTAssertEqual(try written.taken(), [])
    }

    /// Cancelling the root: each named node's last line says cancelled, children before parents, the root
    /// last; a child no walk saw yet is named then, cancelled, before the root's final line.
    func test_cancelling_the_root_ends_each_node_cancelled_before_its_parent() throws {
        let (root, _, download, publisher, written, first) = try publishedPhoto()
        XCTAssertEqual(summary(first), ["1 - running Album", "2 1 running IMG_0001.jpg", "3 2 running download"])
        makeNamedNode("IMG_0002.jpg", total: 10, parent: root)
        root.cancel()
        let records = try walk(publisher, written)
        XCTAssertEqual(
            summary(records),
            [
                "3 2 cancelled download", "2 1 cancelled IMG_0001.jpg", "4 1 cancelled IMG_0002.jpg",
                "1 - cancelled Album",
            ])
        XCTAssertEqual(records.last?.cancelledBelow, 3)
        download.completedUnitCount = 50
        publisher.finish()
        XCTAssertEqual(try written.taken(), [])
    }

    /// A cancelled node stays among its parent's children: it is read on, and its line written when it
    /// changes, while its parent runs.
    func test_a_cancelled_child_is_read_on_while_it_stays_in_the_tree() throws {
        let (_, photo, download, publisher, written, _) = try publishedPhoto()
        photo.cancel()
        publisher.publishChanges()
        XCTAssertEqual(
            summary(try written.taken()),
            ["1 - running Album", "3 2 cancelled download", "2 1 cancelled IMG_0001.jpg"])
        download.completedUnitCount = 20
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "3 2 cancelled download", "2 1 cancelled IMG_0001.jpg"])
        XCTAssertEqual(records.dropFirst().first?.completedUnitCount, 20)
    }

    /// The failed child of a node that itself appeared and failed between two walks is named below it,
    /// with its reason, from what that node kept.
    func test_the_failed_child_of_a_child_that_appears_and_fails_between_two_walks_is_named_below_it() throws {
        let (root, publisher, written) = try publishedAlbum(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        makeNamedNode("download", total: 100, parent: photo, pending: 9).fail(Numbered(number: 1))
        photo.fail(Numbered(number: 2))
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 failed IMG_0001.jpg", "3 2 failed download"])
        XCTAssertEqual(records.map(\.failureReason), [nil, "failure 2", "failure 1"])
        XCTAssertEqual(records.dropFirst().first?.failedBelow, 1)
        XCTAssertEqual(records.first?.failedBelow, 2)
    }

    /// Of the nodes below a child that appears and fails between two walks, the parent keeps the first 64.
    func test_of_70_nodes_below_a_child_that_appears_and_fails_the_first_64_are_named_cancelled() throws {
        let (root, publisher, written) = try publishedAlbum(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 70, parent: root)
        for index in 0..<70 { makeNamedNode("part \(index)", total: 1, parent: photo) }
        photo.fail(Numbered(number: 1))
        let records = try walk(publisher, written)
        XCTAssertEqual(records.first?.cancelledBelow, 70)
        XCTAssertEqual(
            summary(records).prefix(3), ["1 - running Album", "2 1 failed IMG_0001.jpg", "3 2 cancelled part 0"])
        XCTAssertEqual(records.dropFirst(2).map(\.label), (0..<64).map { "part \($0)" })
        XCTAssertEqual(Set(records.dropFirst(2).map(\.state)), [.cancelled])
        XCTAssertEqual(Set(records.dropFirst(2).map(\.parentID)), [2])
    }

    /// A node first read cancelled is named, and so is every node below it, its first line before theirs.
    func test_a_child_first_read_cancelled_is_named_with_the_nodes_below_it() throws {
        let (root, publisher, written) = try publishedAlbum(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        makeNamedNode("download", total: 100, parent: photo, pending: 9)
        photo.cancel()
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 cancelled IMG_0001.jpg", "3 2 cancelled download"])
        XCTAssertEqual(records.first?.cancelledBelow, 2)
        XCTAssertEqual(try walk(publisher, written), [])
    }

    /// A child added to a cancelled node is cancelled as it attaches, and named: then the cancelled node's
    /// line, which counts it, after it.
    func test_a_child_added_to_a_named_cancelled_node_is_named_cancelled() throws {
        let (root, photo, _, publisher, written, _) = try publishedPhoto()
        photo.cancel()
        _ = try walk(publisher, written)
        makeNamedNode("filter", total: 8, parent: photo)
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "4 2 cancelled filter", "2 1 cancelled IMG_0001.jpg"])
        XCTAssertEqual(records.map(\.cancelledBelow), [3, 0, 2])
        XCTAssertEqual(root.descendantOutcomes.cancelledCount, 3)
    }

    /// A named cancelled node whose counts then finish it leaves its parent as a finished one does (its
    /// units credited), and its last line says cancelled, as it was counted.
    func test_a_named_cancelled_child_that_finishes_ends_cancelled_with_its_counts() throws {
        let (_, photo, _, publisher, written, _) = try publishedPhoto()
        photo.cancel()
        _ = try walk(publisher, written)
        photo.completedUnitCount = 10
        let records = try walk(publisher, written)
        XCTAssertEqual(
            summary(records), ["1 - running Album", "2 1 cancelled IMG_0001.jpg"], "the download's line did not change")
        XCTAssertEqual(records.last?.completedUnitCount, 10)
        XCTAssertEqual(records.first?.completedUnitCount, 1, "its units credited to its parent")
        XCTAssertEqual(records.first?.cancelledBelow, 2)
    }

    /// A cancelled node that finishes between two walks left its parent as finished ones do, unseen: it is
    /// counted in `cancelledBelow` and its units in its parent's count, and it has no line.
    func test_a_child_cancelled_and_finished_between_two_walks_is_counted_not_named() throws {
        let (root, publisher, written) = try publishedAlbum(total: 2)
        let quick = makeNamedNode("quick", total: 1, parent: root)
        quick.cancel()
        quick.completedUnitCount = 1
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album"])
        XCTAssertEqual(records.first?.cancelledBelow, 1)
        XCTAssertEqual(records.first?.completedUnitCount, 1)
    }

    /// A parent keeps its last 64 failed children: more failing between two walks leave the oldest unnamed.
    func test_of_70_children_failing_between_two_walks_the_last_64_are_named() throws {
        let (root, publisher, written) = try publishedAlbum(total: 70)
        for index in 0..<70 { makeNamedNode("child \(index)", total: 1, parent: root).fail(Numbered(number: index)) }
        let records = try walk(publisher, written)
        XCTAssertEqual(records.first?.failedBelow, 70)
        XCTAssertEqual(records.dropFirst().map(\.label), (6..<70).map { "child \($0)" })
        XCTAssertEqual(records.dropFirst().map(\.failureReason), (6..<70).map { "failure \($0)" })
        XCTAssertEqual(records.dropFirst().map(\.id), Array(2..<66))
    }

    /// Children fail on another thread while walks run: each is named once, failed, with its reason, and
    /// the part below it cancelled, whether a walk saw them among their parent's children or only in what
    /// the parent kept. The failing thread lets two walks run after every 16 failures, so that no more
    /// than 64 fail between two walks.
    func test_children_failing_while_walks_run_are_each_named_failed_once_with_what_they_cancelled() throws {
        let count = 400
        let root = album(total: Int64(count))
        let (publisher, written) = makePublisher(root)
        publisher.publishChanges()
        let walks = Counter()
        let done = Flag()
        DispatchQueue.global().async {
            for index in 0..<count {
                let child = ProgressNode(totalUnitCount: 2, parent: root, pendingUnitCount: 1)
                child.completedUnitCount = 1
                _ = ProgressNode(totalUnitCount: 2, parent: child, pendingUnitCount: 1)
                child.fail(Numbered(number: index))
                if index % 16 == 15 {
                    let seen = walks.count
                    while walks.count < seen + 2 { sched_yield() }
                }
            }
            done.set()
        }
        while !done.isSet {
            publisher.publishChanges()
            walks.add()
        }
        publisher.publishChanges()
        var last: [Int: ProgressWireRecord] = [:]
        var repeated: [String] = []
        for record in try written.taken() {
            if last[record.id]?.line == record.line { repeated.append(record.line) }
            last[record.id] = record
        }
        XCTAssertEqual(repeated, [])
        let failed = last.values.filter { $0.state == .failed }
        XCTAssertEqual(failed.count, count)
        XCTAssertEqual(Set(failed.compactMap(\.failureReason)), Set((0..<count).map { "failure \($0)" }))
        XCTAssertEqual(Set(failed.map(\.pendingUnitCount)), [1])
        XCTAssertEqual(last[1]?.failedBelow, count)
        let cancelled = last.values.filter { $0.state == .cancelled }
        XCTAssertEqual(cancelled.count, count)
        XCTAssertEqual(Set(cancelled.map { last[$0.parentID ?? 0]?.state }), [.failed])
        XCTAssertEqual(last[1]?.cancelledBelow, count)
    }

    /// Below the depth limit nothing is named, also from what a failed child kept: it is counted only.
    func test_below_the_maximum_depth_the_nodes_a_failure_cancelled_are_counted_not_named() throws {
        let root = album(total: 2)
        let (publisher, written) = makePublisher(root, maximumDepth: 1)
        _ = try walk(publisher, written)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        makeNamedNode("download", total: 100, parent: photo, pending: 9)
        photo.fail(Numbered(number: 1))
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 failed IMG_0001.jpg"])
        XCTAssertEqual(records.map(\.cancelledBelow), [1, 1])
    }

    func test_below_the_maximum_depth_no_node_is_named_and_failures_are_counted() throws {
        let root = album(total: 2)
        let photo = makeNamedNode("IMG_0001.jpg", total: 10, parent: root)
        let (publisher, written) = makePublisher(root, maximumDepth: 1)
        _ = try walk(publisher, written)
        makeNamedNode("download", total: 100, parent: photo, pending: 9).fail(Numbered(number: 1))
        let records = try walk(publisher, written)
        XCTAssertEqual(summary(records), ["1 - running Album", "2 1 running IMG_0001.jpg"])
        XCTAssertEqual(records.map(\.failedBelow), [1, 1])
    }
}
