import Foundation
import ProgressTree
import ProgressTreePlatform
import TestSupport
import XCTest

@testable import ProgressTreeStreaming

/// A process that reads many publishers asks them to walk less often while its streams' thread is busy
/// (the `interval` command, Docs/WireFormat.md; Docs/Mounting.md, "Scale"): the decision, the line, the
/// publisher that takes it and the mount that sends it.
final class PacingTests: XCTestCase {
    override func tearDown() {
        StreamReactor.shared.overrideRequestedInterval(milliseconds: nil)
        super.tearDown()
    }

    // MARK: The decision

    func test_pacing_asks_for_the_interval_that_brings_the_reads_back_to_the_budget() {
        var pacing = ReadPacing()
        XCTAssertEqual(pacing.milliseconds, 0)
        // A thousand publishers at their own 50 ms: 19,000 to 20,000 reads a second; 50 × 20,000 / 6,300
        // = 158.7 and 50 × 19,000 / 6,300 = 150.8, rounded to the nearest 10 ms.
        XCTAssertTrue(pacing.update(readsPerSecond: 20_000))
        XCTAssertEqual(pacing.milliseconds, 160)
        var other = ReadPacing()
        XCTAssertTrue(other.update(readsPerSecond: 19_000))
        XCTAssertEqual(other.milliseconds, 150)
    }

    func test_a_request_made_on_a_partial_load_is_corrected_at_the_next_window() {
        var pacing = ReadPacing()
        XCTAssertTrue(pacing.update(readsPerSecond: 16_000))  // publishers still starting: 50 × 16,000 / 6,300
        XCTAssertEqual(pacing.milliseconds, 130)
        XCTAssertFalse(pacing.update(readsPerSecond: 7_700))  // settling
        XCTAssertTrue(pacing.update(readsPerSecond: 7_700))  // all of them at 130 ms: 130 × 7,700 / 6,300
        XCTAssertEqual(pacing.milliseconds, 160)
        XCTAssertFalse(pacing.update(readsPerSecond: 6_250))
        XCTAssertFalse(pacing.update(readsPerSecond: 6_250))
        XCTAssertEqual(pacing.milliseconds, 160)
    }

    func test_the_window_after_a_change_is_not_used() {
        var pacing = ReadPacing()
        XCTAssertTrue(pacing.update(readsPerSecond: 20_000))
        XCTAssertFalse(pacing.update(readsPerSecond: 50_000))
        XCTAssertEqual(pacing.milliseconds, 160)
        XCTAssertTrue(pacing.update(readsPerSecond: 12_600))
        XCTAssertEqual(pacing.milliseconds, 320)  // 160 × 12,600 / 6,300
    }

    func test_reads_within_five_percent_of_the_budget_keep_the_interval() {
        var pacing = ReadPacing()
        XCTAssertTrue(pacing.update(readsPerSecond: 20_000))
        XCTAssertFalse(pacing.update(readsPerSecond: 20_000))  // settling
        for reads in [5_985.0, 6_000, 6_300, 6_615] {
            XCTAssertFalse(pacing.update(readsPerSecond: reads), "\(reads)")
            XCTAssertEqual(pacing.milliseconds, 160, "\(reads)")
        }
        var idle = ReadPacing()
        XCTAssertFalse(idle.update(readsPerSecond: 100))  // few reads, no request: nothing to lower
        XCTAssertFalse(idle.update(readsPerSecond: 6_615))  // not above the upper bound: nothing asked
        XCTAssertFalse(idle.update(readsPerSecond: 6_800))  // 50 × 6,800 / 6,300 = 54: the publishers' own
        XCTAssertEqual(idle.milliseconds, 0)
        XCTAssertTrue(idle.update(readsPerSecond: 7_200))  // 57.1: 60 ms
        XCTAssertEqual(idle.milliseconds, 60)
    }

    func test_fewer_reads_halve_the_interval_at_most_each_step_down_to_no_request() {
        var pacing = ReadPacing()
        XCTAssertTrue(pacing.update(readsPerSecond: 50_400))  // 50 × 8 = 400
        XCTAssertEqual(pacing.milliseconds, 400)
        XCTAssertFalse(pacing.update(readsPerSecond: 0))  // settling
        XCTAssertTrue(pacing.update(readsPerSecond: 3_000))  // 400 × 3,000 / 6,300 = 190.5 < 200: halved
        XCTAssertEqual(pacing.milliseconds, 200)
        XCTAssertFalse(pacing.update(readsPerSecond: 0))
        XCTAssertTrue(pacing.update(readsPerSecond: 2_400))  // 200 × 2,400 / 6,300 = 76.2 < 100: halved
        XCTAssertEqual(pacing.milliseconds, 100)
        XCTAssertFalse(pacing.update(readsPerSecond: 0))
        XCTAssertTrue(pacing.update(readsPerSecond: 0))  // 50 is the publishers' own interval: none
        XCTAssertEqual(pacing.milliseconds, 0)
    }

    func test_a_window_in_which_streams_were_added_raises_nothing_but_may_lower() {
        var pacing = ReadPacing()
        XCTAssertFalse(pacing.update(readsPerSecond: 50_000, streamsAdded: true))
        XCTAssertEqual(pacing.milliseconds, 0)
        XCTAssertTrue(pacing.update(readsPerSecond: 25_200))  // 50 × 4 = 200
        XCTAssertFalse(pacing.update(readsPerSecond: 0))  // settling
        XCTAssertFalse(pacing.update(readsPerSecond: 50_000, streamsAdded: true))
        XCTAssertEqual(pacing.milliseconds, 200)
        XCTAssertTrue(pacing.update(readsPerSecond: 0, streamsAdded: true))
        XCTAssertEqual(pacing.milliseconds, 100)
    }

    func test_pacing_never_asks_for_more_than_a_second_and_ignores_what_is_not_a_rate() {
        var pacing = ReadPacing()
        XCTAssertTrue(pacing.update(readsPerSecond: 1_000_000))
        XCTAssertEqual(pacing.milliseconds, 1000)
        var other = ReadPacing()
        XCTAssertFalse(other.update(readsPerSecond: .nan))
        XCTAssertFalse(other.update(readsPerSecond: -1))
        XCTAssertFalse(other.update(readsPerSecond: .infinity))
        XCTAssertEqual(other.milliseconds, 0)
    }

    // MARK: The line

    func test_an_interval_request_is_written_in_seconds_with_at_most_three_decimals() {
        XCTAssertEqual(WireIntervalRequest(milliseconds: 160).line, #"{"v":1,"command":"interval","seconds":0.16}"#)
        XCTAssertEqual(WireIntervalRequest(milliseconds: 0).line, #"{"v":1,"command":"interval","seconds":0}"#)
        XCTAssertEqual(WireIntervalRequest(milliseconds: 1000).line, #"{"v":1,"command":"interval","seconds":1}"#)
        XCTAssertEqual(WireIntervalRequest(milliseconds: 1505).line, #"{"v":1,"command":"interval","seconds":1.505}"#)
        XCTAssertEqual(WireIntervalRequest(milliseconds: 5).line, #"{"v":1,"command":"interval","seconds":0.005}"#)
        XCTAssertEqual(WireIntervalRequest(milliseconds: -3).milliseconds, 0)
        XCTAssertEqual(WireIntervalRequest(milliseconds: 99_999).milliseconds, 10_000)
    }

    func test_an_interval_request_is_read_back_and_bad_ones_are_no_command() {
        for milliseconds in [0, 5, 160, 1000, 1505, 10_000] {
            let line = Array(WireIntervalRequest(milliseconds: milliseconds).line.utf8)
            XCTAssertEqual(WireIntervalRequest.parse(line)?.milliseconds, milliseconds)
            XCTAssertNil(ProgressWireCommand.parse(line), "not one of the node commands")
        }
        func parse(_ text: String) -> Int? { WireIntervalRequest.parse(Array(text.utf8))?.milliseconds }
        XCTAssertEqual(parse(#"{"v":1,"command":"interval","seconds":3600}"#), 10_000)
        XCTAssertEqual(parse(#"{"command":"interval","v":1,"seconds":0.25,"id":3}"#), 250)
        XCTAssertNil(parse(#"{"v":1,"command":"interval","seconds":-1}"#))
        XCTAssertNil(parse(#"{"v":1,"command":"interval","seconds":"1"}"#))
        XCTAssertNil(parse(#"{"v":1,"command":"interval"}"#))
        XCTAssertNil(parse(#"{"v":2,"command":"interval","seconds":1}"#))
        XCTAssertNil(parse(#"{"v":1,"command":"pause","seconds":1}"#))
        XCTAssertNil(parse(#"{"v":1,"command":"interval","seconds":1"#))
    }

    // MARK: The publisher

    func test_a_publisher_walks_at_the_interval_its_reader_asks_for_and_never_faster_than_its_own() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let (mine, theirs) = try Sockets.pair()
        defer {
            FileDescriptor.close(mine)
            FileDescriptor.close(theirs)
        }
        var options = ProgressPublisher.Options()
        options.interval = .milliseconds(20)
        let publisher = ProgressPublisher(root, fileDescriptor: mine, commandDescriptor: mine, options: options)
        publisher.start()
        defer { publisher.finish() }
        XCTAssertEqual(publisher.walkInterval, .milliseconds(20))

        func ask(_ line: String) {
            XCTAssertTrue(FileDescriptor.sendAll(theirs, Array((line + "\n").utf8)))
        }
        ask(#"{"v":1,"command":"interval","seconds":0.3}"#)
        wait("the request taken") { publisher.walkInterval == .milliseconds(300) }

        // Walks now come at most every 300 ms: with the root changing every 2 ms for 1.5 s, at most 6 lines
        // (5 walks, and one that may have been under way), where 20 ms walks would write about 75.
        FileDescriptor.setNonBlocking(theirs)
        var drain = [UInt8](repeating: 0, count: 65_536)
        while FileDescriptor.read(theirs, &drain) > 0 {}
        var bytes: [UInt8] = []
        let end = Date().addingTimeInterval(1.5)
        var count: Int64 = 0
        while Date() < end {
            count += 1
            root.completedUnitCount = count
            usleep(2_000)
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let read = FileDescriptor.read(theirs, &chunk)
            if read > 0 { bytes += chunk[0..<read] }
        }
        let lines = bytes.filter { $0 == 0x0A }.count
        XCTAssertLessThanOrEqual(lines, 6, "walks at most every 300 ms")
        XCTAssertGreaterThanOrEqual(lines, 1, "walks go on")

        ask(#"{"v":1,"command":"interval","seconds":0.005}"#)
        wait("a shorter request taken") { publisher.walkInterval == .milliseconds(20) }
        ask(#"{"v":1,"command":"interval","seconds":0}"#)
        ask(#"{"v":1,"command":"interval","seconds":60}"#)
        wait("the longest request taken") { publisher.walkInterval == .seconds(10) }
        ask(#"{"v":1,"command":"interval","seconds":0}"#)
        wait("the request withdrawn") { publisher.walkInterval == .milliseconds(20) }
    }

    // MARK: The mount

    /// Reads from `descriptor` until a whole line came (at most 10 s); the lines read.
    private func readLines(_ descriptor: Int32) -> [String] {
        var bytes: [UInt8] = []
        let end = Date().addingTimeInterval(10)
        while !bytes.contains(0x0A), Date() < end {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let read = FileDescriptor.read(descriptor, &chunk)
            if read > 0 { bytes += chunk[0..<read] } else { usleep(2_000) }
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func line(completed: Int64) -> [UInt8] {
        Array(
            (ProgressWireRecord(id: 1, parentID: nil, totalUnitCount: 100, completedUnitCount: completed).line + "\n")
                .utf8)
    }

    /// A mount of one end of a socket pair while the process wants `milliseconds`; the other end, not
    /// blocking, plays the publisher. Both are closed when the test ends.
    private func mountOfPair(
        wanting milliseconds: Int, options: ProgressMount.Options = ProgressMount.Options()
    ) throws -> (mount: ProgressMount, publisherEnd: Int32) {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mine, theirs) = try Sockets.pair()
        FileDescriptor.setNonBlocking(theirs)
        StreamReactor.shared.overrideRequestedInterval(milliseconds: milliseconds)
        let mount = parent.mount(
            fileDescriptor: mine, commandDescriptor: mine, pendingUnitCount: 1, name: "worker", options: options)
        addTeardownBlock {
            mount.close()
            FileDescriptor.close(theirs)
        }
        return (mount, theirs)
    }

    func test_a_mount_asks_its_publisher_for_the_interval_the_process_wants_once_per_change() throws {
        let (mount, theirs) = try mountOfPair(wanting: 250)

        XCTAssertTrue(FileDescriptor.sendAll(theirs, line(completed: 10)))
        XCTAssertEqual(readLines(theirs), [#"{"v":1,"command":"interval","seconds":0.25}"#])

        // The same wish is not sent again; a new one is, at the next read.
        XCTAssertTrue(FileDescriptor.sendAll(theirs, line(completed: 20)))
        wait("the second line applied") { mount.node.completedUnitCount == 20 }
        StreamReactor.shared.performAndWait {}  // the read that applied it is over
        var chunk = [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(FileDescriptor.read(theirs, &chunk), -1, "nothing more was sent")
        StreamReactor.shared.overrideRequestedInterval(milliseconds: 0)
        XCTAssertTrue(FileDescriptor.sendAll(theirs, line(completed: 30)))
        XCTAssertEqual(readLines(theirs), [#"{"v":1,"command":"interval","seconds":0}"#])
    }

    func test_a_mount_told_not_to_pace_sends_no_interval() throws {
        var options = ProgressMount.Options()
        options.pacesPublisher = false
        let (mount, theirs) = try mountOfPair(wanting: 250, options: options)
        XCTAssertTrue(FileDescriptor.sendAll(theirs, line(completed: 10)))
        wait("the line applied") { mount.node.completedUnitCount == 10 }
        StreamReactor.shared.performAndWait {}
        var chunk = [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(FileDescriptor.read(theirs, &chunk), -1, "nothing was sent")
    }

    func test_a_mounted_publisher_slows_down_when_the_process_asks() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let root = ProgressNode.discreteProgress(totalUnitCount: 100)
        let (mine, theirs) = try Sockets.pair()
        defer { FileDescriptor.close(theirs) }
        var options = ProgressPublisher.Options()
        options.interval = .milliseconds(20)
        let publisher = ProgressPublisher(root, fileDescriptor: theirs, commandDescriptor: theirs, options: options)
        StreamReactor.shared.overrideRequestedInterval(milliseconds: 400)
        let mount = parent.mount(fileDescriptor: mine, commandDescriptor: mine, pendingUnitCount: 1, name: "worker")
        defer { mount.close() }
        publisher.start()
        wait("the publisher asked for 400 ms") { publisher.walkInterval == .milliseconds(400) }
        StreamReactor.shared.overrideRequestedInterval(milliseconds: 0)
        root.completedUnitCount = 5  // a line, whose read sends the withdrawal
        wait("the request withdrawn", seconds: 30) { publisher.walkInterval == .milliseconds(20) }
        root.completedUnitCount = 100
        publisher.finish()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(30)))
        XCTAssertTrue(mount.node.isFinished)
    }
}
