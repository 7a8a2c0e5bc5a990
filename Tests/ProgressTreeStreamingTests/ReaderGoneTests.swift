#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import ProgressTreePlatform
import TestSupport
import XCTest

@testable import ProgressTreeStreaming

/// A publisher whose reader goes away stops working for nobody; one whose reader falls behind never
/// waits for it; a program a mount started ends with the process that started it (Docs/Mounting.md,
/// "When the parent goes away").
final class ReaderGoneTests: XCTestCase {
    private func publisher(
        of root: ProgressNode, on descriptor: Int32, configure: (inout ProgressPublisher.Options) -> Void = { _ in }
    ) -> ProgressPublisher {
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        configure(&options)
        return ProgressPublisher(root, fileDescriptor: descriptor, commandDescriptor: descriptor, options: options)
    }

    func test_a_publisher_whose_reader_closes_the_channel_cancels_its_root() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let cancelled = Flag()
        root.cancellationHandler = { cancelled.set() }
        let (mine, theirs) = try Sockets.pair()
        defer { FileDescriptor.close(mine) }
        let publisher = publisher(of: root, on: mine)
        publisher.start()
        FileDescriptor.close(theirs)  // the reader went away (a parent killed, a connection dropped)
        // The handler runs after the cancellation is visible (handlers run once the node's lock is released),
        // so the wait is for the handler, not for `isCancelled`.
        wait("the root's cancellation handler ran") { cancelled.isSet }
        XCTAssertTrue(root.isCancelled)
        XCTAssertTrue(publisher.isDisconnected)
        XCTAssertEqual(publisher.disconnection, .readerLeft)
    }

    func test_a_publisher_whose_writes_fail_cancels_its_root() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        defer { FileDescriptor.close(ends[1]) }
        let publisher = publisher(of: root, on: ends[1])
        FileDescriptor.close(ends[0])
        publisher.publishChanges()  // a write to a pipe nobody reads fails (EPIPE)
        XCTAssertTrue(root.isCancelled)
        XCTAssertEqual(publisher.disconnection, .readerLeft)
    }

    func test_a_publisher_told_not_to_cancel_keeps_its_root_running_when_its_reader_goes_away() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 10)
        let (mine, theirs) = try Sockets.pair()
        defer { FileDescriptor.close(mine) }
        let publisher = publisher(of: root, on: mine) { $0.cancelsRootWhenDisconnected = false }
        publisher.start()
        FileDescriptor.close(theirs)
        wait("the publisher disconnected") { publisher.isDisconnected }
        XCTAssertFalse(root.isCancelled)
        root.completedUnitCount = 10
        XCTAssertTrue(root.isFinished)
    }

    func test_a_reader_that_goes_away_after_the_roots_final_line_cancels_nothing() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mine, theirs) = try Sockets.pair()
        defer { FileDescriptor.close(mine) }
        let publisher = publisher(of: root, on: mine)
        publisher.start()
        root.completedUnitCount = 1
        publisher.finish()
        FileDescriptor.close(theirs)
        XCTAssertTrue(root.isFinished)
        XCTAssertFalse(root.isCancelled)
    }

    /// A reader that stops reading never holds up the work or the publisher's walks: the lines it did not
    /// take wait, walks are skipped meanwhile, and once it reads again it gets the state as it is then.
    func test_a_publisher_never_waits_for_a_reader_that_stopped_reading() throws {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1_000_000)
        let children = (0..<200).map { index in
            makeNamedNode(String(repeating: "\(index % 10)", count: 2_000), total: 1_000, parent: root)
        }
        let (mine, theirs) = try Sockets.pair()
        defer { FileDescriptor.close(theirs) }
        let finishTimeout = Duration.milliseconds(200)
        let publisher = publisher(of: root, on: mine) { $0.finishTimeout = finishTimeout }
        let start = ContinuousClock.now
        let walks = 200
        for step in 1...walks {  // 200 walks of 200 lines of 2 KB: far more than a socket's buffer
            for child in children { child.completedUnitCount = Int64(step) }
            publisher.publishChanges()
        }
        // A write that waited for this reader would never end; a walk that waited as `finish()` does, up
        // to its timeout, would make these walks take 40 s. Their own cost (under 1 s; a few seconds under
        // ThreadSanitizer on a loaded machine) is far below half of that.
        XCTAssertLessThan(start.duration(to: .now), finishTimeout * walks / 2, "no walk waited for the reader")
        XCTAssertFalse(publisher.isDisconnected)
        root.completedUnitCount = 7
        // The reader catches up: what it reads ends with the state of the last walk that could write.
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let readAll = { (seconds: Int32) in
            while Polling.waitReady(theirs, milliseconds: seconds) {
                let count = FileDescriptor.read(theirs, &buffer)
                guard count > 0 else { break }
                text += buffer[0..<count]
            }
        }
        // Room again: the lines waiting go first, then a walk writes the state as it is now.
        for _ in 0..<20 {
            readAll(50)
            publisher.publishChanges()
        }
        readAll(50)
        let records = try String(decoding: text, as: UTF8.self).split(separator: "\n").map {
            try ProgressWireRecord(line: Array($0.utf8))
        }
        XCTAssertEqual(records.last(where: { $0.id == 1 })?.completedUnitCount, 7)
        XCTAssertEqual(records.last(where: { $0.id == 2 })?.completedUnitCount, 200)
        // finish() waits for a reader that does not read at most its timeout, then gives up on it.
        for child in children { child.completedUnitCount = 999 }
        publisher.publishChanges()
        for child in children { child.completedUnitCount = 1_000 }
        let finishing = ContinuousClock.now
        publisher.finish()
        // Its own timeout, 200 ms, bounded the wait, not the default one (10 s): with the cost of its last
        // walk of 200 lines, it returned well before the default would have ended it.
        XCTAssertLessThan(finishing.duration(to: .now), ProgressPublisher.Options().finishTimeout)
        XCTAssertEqual(publisher.disconnection, .stalled)
        XCTAssertTrue(root.isFinished == false && root.isCancelled == false, "finish() cancels nothing")
    }

    // MARK: The parent-death signal

    /// The role this test binary plays when started by `test_a_program_started_by_a_mount_ends_when_the_process_that_started_it_is_killed`.
    private static let parentRoleVariable = "PROGRESSTREE_TEST_MOUNTING_PARENT"

    /// Run as a helper process only: mounts `sleep 60` (a program that never reads its channel), says its
    /// process id, and waits to be killed.
    func test_helper_mounting_parent() throws {
        guard ProcessInfo.processInfo.environment[Self.parentRoleVariable] != nil else {
            throw XCTSkip("a helper for another test")
        }
        try mountAndWaitToBeKilled { parent in
            try parent.mountProcess(path: "/bin/sleep", arguments: ["60"], pendingUnitCount: 1, name: "sleep")
        }
    }

    /// `kill -9` of a program that mounted another (here this test binary, running the helper above): the
    /// mounted program gets SIGTERM at once (Linux's parent-death signal), whether or not it reads its
    /// channel. (It went on running, reparented to init.)
    func test_a_program_started_by_a_mount_ends_when_the_process_that_started_it_is_killed() throws {
        #if !os(Linux)
        throw XCTSkip("the parent-death signal is Linux's")
        #else
        let (helper, sleeper) = try startMountingHelper(
            running: "ProgressTreeStreamingTests.ReaderGoneTests/test_helper_mounting_parent",
            environment: [Self.parentRoleVariable: "1"])
        XCTAssertGreaterThan(sleeper, 0)
        XCTAssertTrue(isRunning(sleeper))
        kill(helper.processIdentifier, SIGKILL)
        helper.waitUntilExit()
        let killed = Date()
        while isRunning(sleeper) && Date().timeIntervalSince(killed) < 2 { usleep(10_000) }
        XCTAssertFalse(isRunning(sleeper), "sleep still runs 2 s after its parent was killed")
        #endif
    }
}
