import Foundation
import Synchronization
import XCTest

import ProgressTree
@testable import ProgressTreeStreaming
import ProgressTreePlatform

/// A count that crosses the wire.
enum PhotosSkipped: WireProgressProperty {
    static let wireName = "photosSkipped"
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// A rate that crosses the wire, dropped when its node is done.
enum BytesPerSecond: WireProgressProperty {
    static let wireName = "bytesPerSecond"
    static var defaultValue: Double { 0 }
    static var defaultSummary: Double { 0 }
    static func reduce(into summary: inout Double, value: Double) { summary += value }
    static func merge(_ a: Double, _ b: Double) -> Double { a + b }
    static func summaryLeftBehind(_ summary: Double, by outcome: ProgressPropertyOutcome) -> Double? { nil }
}

/// Lists of words that cross the wire.
enum WarningWords: WireProgressProperty {
    static let wireName = "warnings"
    static var defaultValue: [String] { [] }
    static var defaultSummary: [String] { [] }
    static func reduce(into summary: inout [String], value: [String]) { summary += value }
    static func merge(_ a: [String], _ b: [String]) -> [String] { (a + b).sorted() }
}

/// A property that stays in its process (not a `WireProgressProperty`).
enum LocalOnly: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// Properties in wire lines (Docs/WireFormat.md, "Properties"): the record, the writer, the reader, and a
/// mount that sets them on its mirrored nodes.
final class WirePropertiesTests: XCTestCase {
    // MARK: Support

    /// A publisher of `root` on one end of a socket pair and a mount of the other end under `parent` that
    /// knows `properties`.
    func connect(
        _ root: ProgressNode, under parent: ProgressNode, properties: [any WireProgressProperty.Type]
    ) throws -> (ProgressPublisher, ProgressMount, Int32) {
        let (a, b) = try Sockets.pair()
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        let publisher = ProgressPublisher(root, fileDescriptor: a, commandDescriptor: a, options: options)
        var mountOptions = ProgressMount.Options()
        mountOptions.properties = properties
        let mount = parent.mount(
            fileDescriptor: b, commandDescriptor: b, pendingUnitCount: 1, name: "worker", options: mountOptions)
        return (publisher, mount, a)
    }

    /// A mount of lines written by hand, knowing the three wire properties above; returns the writing end.
    func rawMount(under parent: ProgressNode) throws -> (ProgressMount, Int32) {
        let (a, b) = try Sockets.pair()
        var options = ProgressMount.Options()
        options.properties = [PhotosSkipped.self, BytesPerSecond.self, WarningWords.self]
        return (parent.mount(fileDescriptor: b, pendingUnitCount: 1, name: "raw", options: options), a)
    }

    func write(_ descriptor: Int32, _ text: String) {
        XCTAssertTrue(FileDescriptor.sendAll(descriptor, Array(text.utf8)))
    }

    static let base = #"{"v":1,"id":1,"parent":null,"completed":0,"total":4,"state":"running""#

    // MARK: Records

    func test_a_record_with_properties_writes_them_last_by_name_and_reads_them_back() throws {
        var record = ProgressWireRecord(
            id: 2, parentID: 1, pendingUnitCount: 1, totalUnitCount: 4, completedUnitCount: 1)
        record.properties = [
            "photosSkipped": .integer(3), "bytesPerSecond": .number(2.5), "done": .bool(false),
            "status": .string("copying \"a\"\n"), "warnings": .array([.string("disk"), .integer(-2)]),
            "whole": .number(2_500_000),
        ]
        let line = record.line
        XCTAssertTrue(
            line.hasSuffix(
                #","pausable":false,"properties":{"bytesPerSecond":2.5,"done":false,"photosSkipped":3,"#
                    + #""status":"copying \"a\"\n","warnings":["disk",-2],"whole":2500000.0}}"#), line)
        XCTAssertEqual(try ProgressWireRecord(line: Array(line.utf8)), record)
    }

    /// Programs in other languages are written from Docs/WireFormat.md alone: its example line with
    /// properties is exactly what a node with those values writes, and reads back to them.
    func test_the_guides_example_line_is_what_a_node_with_those_values_writes() throws {
        let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Docs/WireFormat.md")
        let text = try String(contentsOf: guide, encoding: .utf8)
        let example = try XCTUnwrap(
            text.split(separator: "\n").first { $0.hasPrefix("{") && $0.contains(#""properties":{"#) })
        let root = ProgressNode.discreteProgress(totalUnitCount: 4)
        let photo = ProgressNode(totalUnitCount: 4, parent: root, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_0001.jpg"
        photo.completedUnitCount = 1
        photo[BytesPerSecond.self] = 2_500_000
        photo[PhotosSkipped.self] = 1
        photo[WarningWords.self] = ["disk almost full"]
        XCTAssertEqual(photo.wireRecord(id: 2, parentID: 1).line, String(example))
        let read = try ProgressWireRecord(line: Array(example.utf8))
        XCTAssertEqual(
            read.properties,
            [
                "bytesPerSecond": .number(2_500_000), "photosSkipped": .integer(1),
                "warnings": .array([.string("disk almost full")]),
            ])
    }

    func test_a_line_without_properties_reads_as_before_and_a_record_without_them_writes_none() throws {
        let old = Self.base + #","name":"import","fileTotalCount":3}"#
        let record = try ProgressWireRecord(line: Array(old.utf8))
        XCTAssertEqual(record.properties, [:])
        XCTAssertEqual(record.skippedProperties, 0)
        XCTAssertEqual(record.label, "import")
        XCTAssertEqual(record.fileTotalCount, 3)
        XCTAssertFalse(record.line.contains("properties"))
        XCTAssertTrue(record.line.hasSuffix(#""cancellable":true,"pausable":false}"#))
    }

    func test_a_malformed_properties_member_is_skipped_and_counted_and_the_rest_of_the_line_kept() throws {
        let notAnObject = try ProgressWireRecord(
            line: Array((Self.base + #","properties":[1,2],"fileTotalCount":3}"#).utf8))
        XCTAssertEqual(notAnObject.properties, [:])
        XCTAssertEqual(notAnObject.skippedProperties, 1)
        XCTAssertEqual(notAnObject.fileTotalCount, 3)
        XCTAssertEqual(notAnObject.totalUnitCount, 4)
        let mixed =
            Self.base
            + #","properties":{"a":null,"b":{"x":1},"c":[1,[2]],"d":9007199254740992,"e":-9007199254740991,"#
            + #""f":1e3,"g":[],"h":"ok"},"name":"x"}"#
        let record = try ProgressWireRecord(line: Array(mixed.utf8))
        XCTAssertEqual(
            record.properties,
            ["e": .integer(-9_007_199_254_740_991), "f": .number(1000), "g": .array([]), "h": .string("ok")])
        XCTAssertEqual(record.skippedProperties, 4)
        XCTAssertEqual(record.label, "x")
        // Not JSON at all is still a malformed line.
        XCTAssertThrowsError(try ProgressWireRecord(line: Array((Self.base + #","properties":{"a":}}"#).utf8)))
    }

    func test_a_node_writes_its_own_values_of_wire_properties_only() {
        let root = ProgressNode(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        root[PhotosSkipped.self] = 2
        child[PhotosSkipped.self] = 3
        root[WarningWords.self] = ["disk"]
        root[LocalOnly.self] = 7
        let record = root.wireRecord(id: 1, parentID: nil)
        XCTAssertEqual(record.properties, ["photosSkipped": .integer(2), "warnings": .array([.string("disk")])])
        XCTAssertEqual(record.skippedProperties, 0)
        XCTAssertEqual(child.wireRecord(id: 2, parentID: 1).properties, ["photosSkipped": .integer(3)])
    }

    func test_a_value_that_cannot_cross_is_left_out_counted_and_the_line_still_written() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        root[BytesPerSecond.self] = .nan
        root[PhotosSkipped.self] = 1 << 60  // beyond ±(2^53 − 1)
        root[WarningWords.self] = ["ok"]
        let record = root.wireRecord(id: 1, parentID: nil)
        XCTAssertEqual(record.properties, ["warnings": .array([.string("ok")])])
        XCTAssertEqual(record.skippedProperties, 2)
        var lines: [String] = []
        let collected = Mutex<[UInt8]>([])
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        let publisher = ProgressPublisher(root, options: options) { bytes in
            collected.withLock { $0 += bytes }
            return true
        }
        publisher.publishChanges()
        lines = collected.withLock { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines[0].hasSuffix(#","properties":{"warnings":["ok"]}}"#), lines[0])
        XCTAssertEqual(publisher.diagnostics.skippedProperties, 2)
        publisher.publishChanges()  // nothing changed: no line, nothing more counted
        XCTAssertEqual(publisher.diagnostics.skippedProperties, 2)
    }

    // MARK: Mounts

    func test_a_mounted_trees_values_summarize_in_the_mounting_parent() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let local = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        local[PhotosSkipped.self] = 100
        let remote = ProgressNode.discreteProgress(totalUnitCount: 3)
        let first = ProgressNode(totalUnitCount: 1, parent: remote, pendingUnitCount: 1)
        let second = ProgressNode(totalUnitCount: 1, parent: remote, pendingUnitCount: 1)
        let third = ProgressNode(totalUnitCount: 1, parent: remote, pendingUnitCount: 1)
        remote[PhotosSkipped.self] = 1
        first[PhotosSkipped.self] = 2
        second[PhotosSkipped.self] = 5
        second[BytesPerSecond.self] = 1_000
        third[BytesPerSecond.self] = 250.5
        third[WarningWords.self] = ["slow"]  // published, not known to the mount: ignored
        first[LocalOnly.self] = 9  // not published
        let (publisher, mount, socket) = try connect(
            remote, under: parent, properties: [PhotosSkipped.self, BytesPerSecond.self])
        publisher.publishChanges()
        wait("the four lines") { mount.diagnostics.acceptedLines >= 4 }
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), 108)
        XCTAssertEqual(mount.node.summary(of: PhotosSkipped.self), 8)
        XCTAssertEqual(parent.summary(of: BytesPerSecond.self), 1_250.5)
        XCTAssertEqual(parent.summary(of: WarningWords.self), [])
        XCTAssertEqual(parent.summary(of: LocalOnly.self), 0)
        // A value that changes, then children that finish: the count stays, the rate of a finished one goes.
        first[PhotosSkipped.self] = 4
        publisher.publishChanges()
        wait("the new value") { mount.node.summary(of: PhotosSkipped.self) == 10 }
        first.completedUnitCount = 1
        second.completedUnitCount = 1
        publisher.publishChanges()
        wait("two children finished") { mount.node.children.count == 1 }
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), 110)
        XCTAssertEqual(parent.summary(of: BytesPerSecond.self), 250.5)
        third.completedUnitCount = 1
        publisher.finish()
        wait("the mount ended") { mount.hasEnded }
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), 110)
        XCTAssertEqual(parent.summary(of: BytesPerSecond.self), 0)
        XCTAssertEqual(mount.diagnostics.skippedProperties, 0)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
        FileDescriptor.close(socket)
    }

    /// Docs/Properties.md's mount: the properties a mount is given summarize in the mounting program.
    func test_guide_properties_mount() throws {
        let remote = ProgressNode.discreteProgress(totalUnitCount: 1)
        remote[PhotosSkipped.self] = 4
        remote[WarningWords.self] = ["not mounted"]
        let (theirs, socket) = try Sockets.pair()
        var publisherOptions = ProgressPublisher.Options()
        publisherOptions.publishesOnTimer = false
        let publisher = ProgressPublisher(
            remote, fileDescriptor: theirs, commandDescriptor: theirs, options: publisherOptions)
        // BEGIN snippet: properties-mount
        let album = ProgressNode(totalUnitCount: 2)
        var options = ProgressMount.Options()
        options.properties = [PhotosSkipped.self, BytesPerSecond.self]  // set on the mirrored nodes
        let worker = album.mount(
            fileDescriptor: socket, commandDescriptor: socket, pendingUnitCount: 1, name: "worker 1",
            options: options)
        // END snippet: properties-mount
        publisher.publishChanges()
        wait("the root's line") { worker.diagnostics.acceptedLines == 1 }
        XCTAssertEqual(album.summary(of: PhotosSkipped.self), 4)
        XCTAssertEqual(album.summary(of: WarningWords.self), [])
        remote.completedUnitCount = 1
        publisher.finish()
        wait("the mount ended") { worker.hasEnded }
        XCTAssertEqual(album.summary(of: PhotosSkipped.self), 4)
        XCTAssertEqual(album.completedUnitCount, 1)
        FileDescriptor.close(theirs)
    }

    func test_a_mount_skips_and_counts_values_it_cannot_take_and_applies_the_rest_of_the_line() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mount, socket) = try rawMount(under: parent)
        write(socket, Self.base + #","properties":{"photosSkipped":2,"warnings":["a"]}}"# + "\n")
        wait("the first line") { mount.diagnostics.acceptedLines == 1 }
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), 2)
        // A string for a count: the node keeps its 2; a malformed member: the line's counts still apply.
        write(
            socket,
            Self.base.replacingOccurrences(of: #""completed":0"#, with: #""completed":1"#)
                + #","properties":{"photosSkipped":"many","warnings":["a"],"other":{"x":1}}}"# + "\n")
        wait("the second line") { mount.diagnostics.acceptedLines == 2 }
        XCTAssertEqual(mount.node.completedUnitCount, 1)
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), 2)
        XCTAssertEqual(mount.diagnostics.skippedProperties, 2)
        write(socket, Self.base + #","properties":"photosSkipped=3"}"# + "\n")
        wait("the third line") { mount.diagnostics.acceptedLines == 3 }
        XCTAssertEqual(mount.diagnostics.skippedProperties, 3)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
        XCTAssertEqual(mount.diagnostics.outOfRangeLines, 0)
        // A line without the member: an absolute snapshot, the node holds the default again.
        XCTAssertEqual(mount.node[PhotosSkipped.self], 0)
        XCTAssertEqual(mount.node[WarningWords.self], [])
        mount.close()
        mount.waitUntilEnded()
        FileDescriptor.close(socket)
    }

    func test_a_line_that_differs_only_in_its_properties_is_read_where_it_differs() throws {
        var memo = WireLineMemo()
        var record = ProgressWireRecord(
            id: 2, parentID: 1, pendingUnitCount: 1, totalUnitCount: 4, completedUnitCount: 1)
        record.label = "IMG_0001.jpg"
        record.properties = ["photosSkipped": .integer(1), "warnings": .array([.string("a")])]
        for value in [1, 2, 30] {
            record.properties["photosSkipped"] = .integer(Int64(value))
            let line = Array(record.line.utf8)
            let read = try line.withUnsafeBytes { bytes in try memo.record(bytes) }
            XCTAssertEqual(read, record)
        }
        XCTAssertEqual(memo.partialReads, 2)
    }
}
