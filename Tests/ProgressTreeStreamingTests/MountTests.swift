import Foundation
import Synchronization
import XCTest

import ProgressTree
@testable import ProgressTreeStreaming
import ProgressTreePlatform

/// Publishing and mounting (Docs/Mounting.md) over real sockets, pipes and processes: composition with the right
/// weight, the control channel, failures of the stream, and every kind of bad input.
final class MountTests: XCTestCase {
    // MARK: Support

    /// A publisher of `root` on one end of a socket pair and a mount of the other end under `parent`.
    func connect(
        _ root: ProgressNode, under parent: ProgressNode, pending: Int64, name: String = "worker 1"
    ) throws -> (ProgressPublisher, ProgressMount, Int32) {
        let (a, b) = try Sockets.pair()
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        let publisher = ProgressPublisher(root, fileDescriptor: a, commandDescriptor: a, options: options)
        let mount = parent.mount(fileDescriptor: b, commandDescriptor: b, pendingUnitCount: pending, name: name)
        return (publisher, mount, a)
    }

    /// A mount of lines written by hand to a socket pair; returns the writing end.
    func rawMount(under parent: ProgressNode, pending: Int64 = 1) throws -> (ProgressMount, Int32) {
        let (a, b) = try Sockets.pair()
        return (parent.mount(fileDescriptor: b, pendingUnitCount: pending, name: "raw"), a)
    }

    func write(_ descriptor: Int32, _ text: String) {
        XCTAssertTrue(FileDescriptor.sendAll(descriptor, Array(text.utf8)))
    }

    // MARK: Wire records

    func test_a_record_reads_back_what_it_wrote_and_ignores_unknown_fields() throws {
        var record = ProgressWireRecord(
            id: 3, parentID: 1, pendingUnitCount: 7, totalUnitCount: 10, completedUnitCount: 4)
        record.label = "a \"quoted\" name\n"
        record.kind = ProgressNode.Kind.file.rawValue
        record.fileURL = "file:///tmp/a.jpg"
        record.throughput = 1200
        record.estimatedTimeRemaining = 2.5
        record.failedBelow = 2
        record.isPausable = true
        XCTAssertEqual(try ProgressWireRecord(line: Array(record.line.utf8)), record)
        let extended = record.line.dropLast() + ",\"future\":{\"a\":[1,2,{\"b\":null}]},\"other\":\"x\"}"
        XCTAssertEqual(try ProgressWireRecord(line: Array(extended.utf8)), record)
    }

    func test_an_unknown_major_version_is_a_clear_error() {
        let line = #"{"v":2,"id":1,"parent":null,"completed":0,"total":1,"state":"running"}"#
        XCTAssertThrowsError(try ProgressWireRecord(line: Array(line.utf8))) { error in
            XCTAssertEqual(error as? ProgressWireError, .unsupportedVersion(2))
            XCTAssertEqual(
                "\(error)", "unsupported progress wire format version 2 (this program reads version 1)")
        }
    }

    // MARK: Composition

    func test_a_published_tree_composes_into_the_parent_with_the_pending_count_as_weight() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 10)
        let local = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 6)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 100)
        let child = ProgressNode(totalUnitCount: 10, parent: remote, pendingUnitCount: 50)
        child.localizedDescription = "IMG_0001.jpg"
        let (publisher, mount, _) = try connect(remote, under: parent, pending: 4)
        child.completedUnitCount = 5  // remote: 50 × 0.5 / 100 = 0.25
        publisher.publishChanges()
        wait("the child's line") { mount.node.children.first?.completedUnitCount == 5 }
        XCTAssertEqual(mount.node.totalUnitCount, 100)
        XCTAssertEqual(mount.node.fractionCompleted, 0.25)
        XCTAssertEqual(mount.node.children.first?.localizedDescription, "IMG_0001.jpg")
        XCTAssertEqual(parent.fractionCompleted, 0.1, accuracy: 1e-12)  // 4 × 0.25 / 10
        child.completedUnitCount = 10  // finished: credits 50 to remote
        publisher.publishChanges()
        wait("the child finished") { mount.node.children.isEmpty }
        XCTAssertEqual(mount.node.completedUnitCount, 50)
        XCTAssertEqual(parent.fractionCompleted, 0.2, accuracy: 1e-12)
        remote.completedUnitCount = 100
        publisher.finish()
        wait("the mount ended") { mount.hasEnded }
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 4)
        local.completedUnitCount = 1
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
    }

    /// Two mounts of programs that describe their roots alike read apart: the mount's name comes first,
    /// and alone while a root sets no description. (Both read "Importing 3 photos".)
    func test_two_mounts_of_alike_roots_show_their_names_before_the_roots_description() throws {
        let album = ProgressNode.discreteProgress(totalUnitCount: 3)
        var connections: [(ProgressPublisher, ProgressMount, Int32)] = []
        for index in 1...3 {
            let remote = ProgressNode.discreteProgress(totalUnitCount: 3)
            if index < 3 { remote.localizedDescription = "Importing 3 photos" }
            connections.append(try connect(remote, under: album, pending: 1, name: "worker \(index)"))
        }
        for (publisher, mount, _) in connections {
            publisher.publishChanges()
            wait("the root's line") { mount.diagnostics.acceptedLines == 1 }
        }
        XCTAssertEqual(
            connections.map(\.1.node.localizedDescription),
            ["worker 1: Importing 3 photos", "worker 2: Importing 3 photos", "worker 3"])
        for (publisher, _, socket) in connections {
            publisher.finish()
            FileDescriptor.close(socket)
        }
    }

    /// The mirrored fraction equals the publisher's after every walk, while children finish one by one and
    /// together (a finished child's share moves into its parent's count on both sides, never twice).
    func test_the_mirrored_fraction_follows_the_publisher_exactly_as_children_finish() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 10)
        let children = (0..<4).map { index in
            ProgressNode(totalUnitCount: 4, parent: remote, pendingUnitCount: Int64(index + 1))
        }
        let (publisher, mount, _) = try connect(remote, under: parent, pending: 1)
        let steps: [() -> Void] = [
            { children[0].completedUnitCount = 2 },
            { children[1].completedUnitCount = 3 },
            { children[0].completedUnitCount = 4 },  // finishes: 1 unit into the remote root
            {
                children[2].completedUnitCount = 4; children[3].completedUnitCount = 1
            },  // 3 units
            {
                children[1].completedUnitCount = 4; children[3].completedUnitCount = 4
            },  // both finish
        ]
        var accepted = 0
        for step in steps {
            step()
            let expected = remote.fractionCompleted
            let expectedCompleted = remote.completedUnitCount
            publisher.publishChanges()
            accepted = mount.diagnostics.acceptedLines
            let expectedChildren = remote.children.count
            wait("the walk applied") {
                mount.node.completedUnitCount == expectedCompleted && mount.node.fractionCompleted == expected
                    && mount.node.children.count == expectedChildren
            }
            XCTAssertEqual(mount.node.fractionCompleted, expected)
            XCTAssertEqual(parent.fractionCompleted, expected)
            XCTAssertEqual(mount.node.children.count, remote.children.count)
        }
        XCTAssertEqual(mount.node.completedUnitCount, 10)
        XCTAssertTrue(parent.isFinished)
        XCTAssertGreaterThan(accepted, 0)
    }

    func test_file_metadata_and_failures_below_come_through() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 2)
        remote.fileOperationKind = .copying
        let file = ProgressNode(totalUnitCount: 1000, parent: remote, pendingUnitCount: 1)
        file.kind = .file
        file.fileURL = URL(fileURLWithPath: "/tmp/photo.jpg")
        let broken = ProgressNode(totalUnitCount: 1000, parent: remote, pendingUnitCount: 1)
        let (publisher, mount, _) = try connect(remote, under: parent, pending: 1)
        file.completedUnitCount = 500
        publisher.publishChanges()
        wait("two children") { mount.node.children.count == 2 }
        let mirroredFile = mount.node.children[0]
        XCTAssertEqual(mirroredFile.kind, .file)
        XCTAssertEqual(mirroredFile.fileURL?.lastPathComponent, "photo.jpg")
        XCTAssertEqual(mount.node.fileOperationKind, .copying)
        XCTAssertEqual(mirroredFile.localizedDescription, "Processing “photo.jpg”…")
        XCTAssertEqual(mirroredFile.localizedDescription, file.localizedDescription)
        XCTAssertEqual(mount.node.localizedAdditionalDescription, remote.localizedAdditionalDescription)
        broken.fail(CocoaError(.fileWriteOutOfSpace))
        publisher.publishChanges()
        wait("the failure") { parent.descendantOutcomes.failedCount == 1 }
        XCTAssertEqual(mount.node.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(mount.node.children.count, 1)
    }

    /// A writer names the nodes a failure cancelled after the failed node's line: the mount drops them,
    /// as the rest of a subtree that ended, and counts nothing as bad input.
    func test_lines_below_a_node_that_ended_are_dropped_and_not_counted_as_bad_input() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mount, socket) = try rawMount(under: parent)
        let lines = [
            #"{"v":1,"id":1,"parent":null,"completed":0,"total":10,"state":"running","name":"Root"}"#,
            #"{"v":1,"id":2,"parent":1,"pending":1,"completed":4,"total":10,"state":"failed","reason":"gone"}"#,
            #"{"v":1,"id":3,"parent":2,"pending":9,"completed":1,"total":2,"state":"cancelled","name":"download"}"#,
            #"{"v":1,"id":4,"parent":3,"pending":1,"completed":0,"total":2,"state":"cancelled","name":"part"}"#,
            #"{"v":1,"id":1,"parent":null,"completed":2,"total":10,"state":"running","name":"Root"}"#,
        ]
        write(socket, lines.joined(separator: "\n") + "\n")
        wait("the root's second line") { mount.node.completedUnitCount == 2 }
        // A read's lines are applied before its counts reach `diagnostics`: wait for those too.
        wait("the lines counted") { mount.diagnostics.acceptedLines >= 3 }
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
        XCTAssertEqual(mount.diagnostics.acceptedLines, 3)
        XCTAssertEqual(mount.node.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(mount.node.descendantOutcomes.cancelledCount, 0)
        XCTAssertEqual(mount.node.children.count, 0)
    }

    /// A cancelled node stays in its publisher's tree and is written again when it changes: the mount,
    /// which ended its mirror at the first cancelled line, makes no second node of it.
    func test_a_later_line_of_a_cancelled_node_adds_no_node_to_the_mirror() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 10, parent: remote, pendingUnitCount: 1)
        let (publisher, mount, _) = try connect(remote, under: parent, pending: 1)
        publisher.publishChanges()
        wait("the child") { mount.node.children.count == 1 }
        child.cancel()
        publisher.publishChanges()
        wait("the child cancelled") { mount.node.children.first?.isCancelled == true }
        child.completedUnitCount = 5
        remote.completedUnitCount = 1
        publisher.publishChanges()
        wait("the root's count") { mount.node.completedUnitCount == 1 }
        XCTAssertEqual(mount.node.children.count, 1)
        XCTAssertEqual(mount.node.descendantOutcomes.cancelledCount, 1)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
    }

    // MARK: Control channel

    func test_cancel_round_trips_to_the_publisher_whose_handler_runs() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 4)
        let handled = Lock(0)
        remote.cancellationHandler = { handled.withLock { $0 += 1 } }
        let (publisher, mount, socket) = try connect(remote, under: parent, pending: 1)
        publisher.start()
        wait("the root line") { mount.node.totalUnitCount == 4 }
        // The publisher reads commands only once started; a command for the root names the root's id.
        parent.cancel()
        // The flag is set before the handler runs, on the publisher's queue: wait for the handler itself.
        wait("the publisher's handler ran") { handled.withLock { $0 } == 1 }
        XCTAssertTrue(remote.isCancelled)
        publisher.finish()
        wait("the mount ended") { mount.hasEnded }
        XCTAssertEqual(handled.withLock { $0 }, 1, "the handler runs once")
        XCTAssertTrue(mount.node.isCancelled)
        XCTAssertFalse(mount.node.isFailed)
        FileDescriptor.close(socket)
    }

    func test_pause_and_resume_of_a_mirrored_child_round_trip() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 2)
        let child = ProgressNode(totalUnitCount: 2, parent: remote, pendingUnitCount: 1)
        let events = Lock<[String]>([])
        child.pausingHandler = { events.withLock { $0.append("paused") } }
        child.resumingHandler = { events.withLock { $0.append("resumed") } }
        let (publisher, mount, socket) = try connect(remote, under: parent, pending: 1)
        publisher.start()
        wait("the child") { mount.node.children.count == 1 }
        let mirrored = mount.node.children[0]
        // A read's lines are applied before its counts reach `diagnostics`: wait for those too.
        wait("the lines counted") { mount.diagnostics.acceptedLines >= 2 }
        XCTAssertEqual(mount.diagnostics.acceptedLines, 2)
        mirrored.pause()
        wait("paused remotely") { child.isPaused }
        publisher.publishChanges()
        wait("the paused line came back") { mount.diagnostics.acceptedLines == 3 }
        XCTAssertTrue(mirrored.isPaused)
        XCTAssertFalse(remote.isPaused)
        mirrored.resume()
        wait("resumed remotely") { !child.isPaused }
        XCTAssertEqual(events.withLock { $0 }, ["paused", "resumed"])
        publisher.finish()
        FileDescriptor.close(socket)
        wait("the mount ended") { mount.hasEnded }
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "worker 1 stopped before the end")
    }

    func test_a_mirrored_node_is_prepared_before_anyone_can_reach_it() throws {
        // A pause and a cancel made the moment a node appears must both be sent, in order: so its command
        // handlers are installed before it is attached, while nobody else can see it.
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        var map = MountedNodeMap(root: root, name: "map")
        var diagnostics = ProgressMount.Diagnostics()
        let rootLine = ProgressWireRecord(
            id: 1, parentID: nil, pendingUnitCount: 0, totalUnitCount: 2, completedUnitCount: 0)
        map.apply(rootLine, diagnostics: &diagnostics, maximumNodeCount: 10, sentCommand: { _ in nil }) { _, _ in
            XCTFail("the root is the mount's own node, never created")
        }
        var prepared: [(node: ProgressNode, parent: ProgressNode, attached: Bool)] = []
        let childLine = ProgressWireRecord(
            id: 2, parentID: 1, pendingUnitCount: 1, totalUnitCount: 4, completedUnitCount: 1)
        map.apply(childLine, diagnostics: &diagnostics, maximumNodeCount: 10, sentCommand: { _ in nil }) {
            node, parent in
            prepared.append((node, parent, !root.children.isEmpty))
        }
        XCTAssertEqual(prepared.count, 1)
        XCTAssertTrue(prepared.first?.parent === root)
        XCTAssertEqual(prepared.first?.attached, false)
        XCTAssertEqual(root.children.count, 1)
        XCTAssertTrue(root.children.first === prepared.first?.node)
        XCTAssertEqual(root.children.first?.completedUnitCount, 1)
        XCTAssertEqual(root.children.first?.totalUnitCount, 4)
        XCTAssertEqual(diagnostics.acceptedLines, 2)
    }

    func test_a_cancel_before_the_first_line_is_sent_once_the_root_says_its_id() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (a, b) = try Sockets.pair()
        let mount = parent.mount(fileDescriptor: b, commandDescriptor: b, pendingUnitCount: 1, name: "early")
        parent.cancel()
        XCTAssertTrue(mount.node.isCancelled)
        write(a, #"{"v":1,"id":7,"parent":null,"completed":0,"total":3,"state":"running"}"# + "\n")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while !received.contains(0x0A), Polling.waitReady(a, milliseconds: 10_000) {
            let count = FileDescriptor.read(a, &buffer)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), #"{"v":1,"command":"cancel","id":7}"# + "\n")
        FileDescriptor.close(a)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isCancelled)
    }

    func test_a_cancel_whose_handler_runs_after_the_stream_ended_still_reaches_the_publisher() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (a, b) = try Sockets.pair()
        let mount = parent.mount(fileDescriptor: b, commandDescriptor: b, pendingUnitCount: 1, name: "late")
        write(a, #"{"v":1,"id":7,"parent":null,"completed":0,"total":3,"state":"running"}"# + "\n")
        wait("the root line") { mount.node.totalUnitCount == 3 }
        // `cancel()` marks the whole subtree cancelled before it runs the handlers, parent before children:
        // the parent's handler holds back the mirrored root's (the one that sends the command) until a line
        // has come, seen the mirrored root cancelled, and ended the mount.
        // That line batch also brings a new child and grandchild, written before the publisher got the cancel:
        // the mirrored root is final, so they end with it (not counted as lines with an unknown parent).
        let batch = [
            #"{"v":1,"id":7,"parent":null,"completed":1,"total":3,"state":"running"}"#,
            #"{"v":1,"id":8,"parent":7,"pending":1,"completed":0,"total":2,"state":"running"}"#,
            #"{"v":1,"id":9,"parent":8,"pending":1,"completed":0,"total":5,"state":"running"}"#,
        ]
        parent.cancellationHandler = {
            _ = FileDescriptor.sendAll(a, Array(batch.map { $0 + "\n" }.joined().utf8))
            _ = mount.waitUntilEnded(timeout: .seconds(10))
        }
        parent.cancel()
        parent.cancellationHandler = nil
        XCTAssertTrue(mount.hasEnded)
        // The command reached the publisher once, before the mount closed its end.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while Polling.waitReady(a, milliseconds: 10_000) {
            let count = FileDescriptor.read(a, &buffer)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), #"{"v":1,"command":"cancel","id":7}"# + "\n")
        FileDescriptor.close(a)
        XCTAssertTrue(mount.node.isCancelled)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
        XCTAssertTrue(mount.node.children.isEmpty)
    }

    // MARK: Processes

    /// A line of the root of a stream, for shell scripts.
    let rootLine = #"{"v":1,"id":1,"parent":null,"completed":1,"total":4,"state":"running"}"#

    func mountShell(_ script: String, under parent: ProgressNode, name: String) throws -> ProgressMount {
        try parent.mountProcess(path: "/bin/sh", arguments: ["-c", script], pendingUnitCount: 1, name: name)
    }

    func test_a_killed_child_process_fails_its_mirrored_node_with_the_signal() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let mount = try mountShell("echo '\(rootLine)' >&3; sleep 0.05; kill -9 $$", under: parent, name: "worker 2")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFailed)
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "worker 2 exited with signal 9")
        XCTAssertEqual(mount.exitDescription, "exited with signal 9")
        XCTAssertTrue(parent.children.isEmpty)
        XCTAssertEqual(parent.descendantOutcomes.failedCount, 1)
        XCTAssertEqual(parent.fractionCompleted, 0.125)  // its share at failure: 1 × 1/4 of 2
    }

    func test_a_child_exiting_non_zero_or_stopping_mid_stream_fails_its_node() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let failing = try mountShell("echo '\(rootLine)' >&3; exit 3", under: parent, name: "worker 1")
        let stopping = try mountShell("printf '%s' '{\"v\":1,\"id\":1' >&3", under: parent, name: "worker 2")
        XCTAssertTrue(failing.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(stopping.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual((failing.node.failure as? ProgressMount.Failure)?.reason, "worker 1 exited with status 3")
        XCTAssertEqual(
            (stopping.node.failure as? ProgressMount.Failure)?.reason, "worker 2 exited before its work was done")
        XCTAssertEqual(stopping.diagnostics.malformedLines, 1)  // the line cut short
        XCTAssertEqual(parent.descendantOutcomes.failedCount, 2)
    }

    /// A tool that never writes a line fails its mount when it exits, whatever its status, as the recipe of
    /// Docs/Mounting.md says (it said the node finishes, and in the same sentence that it fails).
    func test_a_tool_that_never_writes_fails_when_it_exits_as_the_guide_says() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let quiet = try mountShell("exit 0", under: parent, name: "tool")
        let failing = try mountShell("exit 3", under: parent, name: "tool")
        XCTAssertTrue(quiet.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(failing.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual((quiet.node.failure as? ProgressMount.Failure)?.reason, "tool exited before its work was done")
        XCTAssertEqual((failing.node.failure as? ProgressMount.Failure)?.reason, "tool exited with status 3")
        let guide = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Docs/Mounting.md"), encoding: .utf8)
        let recipe = try XCTUnwrap(
            guide.components(separatedBy: "### A tool that runs tools").last?.components(separatedBy: "###").first)
        XCTAssertTrue(
            recipe.contains(
                "**fails** when it exits — \"… exited before its work was done\" after status 0, \"… exited with status 3\""
            ),
            recipe)
        XCTAssertFalse(recipe.contains("finishes"), recipe)
    }

    func test_a_child_that_finishes_ends_its_mount_finished() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let done = #"{"v":1,"id":1,"parent":null,"completed":4,"total":4,"state":"finished"}"#
        let mount = try mountShell("echo '\(rootLine)' >&3; echo '\(done)' >&3", under: parent, name: "worker")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertTrue(parent.isFinished)
        XCTAssertEqual(mount.exitDescription, "exited with status 0")
    }

    // MARK: TCP

    func test_a_tree_over_loopback_tcp_and_a_dropped_connection_fails_the_node() throws {
        let (listening, port) = try ProgressSocket.listen()
        defer { ProgressSocket.close(listening) }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let remote = ProgressNode.discreteProgress(totalUnitCount: 10)
        let mount = try parent.mountConnection(host: "127.0.0.1", port: port, pendingUnitCount: 1, name: "build host")
        let connection = try ProgressSocket.accept(listening)
        var options = ProgressPublisher.Options()
        options.publishesOnTimer = false
        let publisher = ProgressPublisher(
            remote, fileDescriptor: connection, commandDescriptor: connection, options: options)
        remote.completedUnitCount = 3
        publisher.publishChanges()
        wait("the root line") { mount.node.completedUnitCount == 3 }
        XCTAssertEqual(parent.fractionCompleted, 0.3, accuracy: 1e-12)
        ProgressSocket.close(connection)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "build host stopped before the end")
        publisher.finish()
    }

    // MARK: Bad input

    func test_bad_lines_are_ignored_and_counted_and_good_ones_still_apply() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mount, socket) = try rawMount(under: parent)
        let lines = [
            #"{"v":1,"id":1,"parent":null,"completed":1,"total":10,"state":"running","name":"Root"}"#,
            "not json",  // malformed
            #"{"v":1,"id":2,"parent":1,"completed":1"#,  // truncated: malformed
            #"[1,2,3]"#,  // not an object: malformed
            #"{"id":2,"parent":1,"completed":1,"total":2,"state":"running"}"#,  // no version: malformed
            // Out of range:
            #"{"v":1,"id":0,"parent":1,"completed":1,"total":2,"state":"running"}"#,  // id out of range
            #"{"v":1,"id":2,"parent":1,"pending":-1,"completed":1,"total":2,"state":"running"}"#,  // out of range
            #"{"v":1,"id":2,"parent":1,"completed":1,"total":2,"fraction":7,"state":"running"}"#,  // out of range
            #"{"v":1,"id":2,"parent":1,"completed":"x","total":2,"state":"running"}"#,  // wrong type
            #"{"v":1,"id":2,"parent":1,"completed":1,"total":2,"state":"sleeping"}"#,  // unknown state
            #"{"v":1,"id":5,"parent":9,"completed":1,"total":2,"state":"running"}"#,  // unknown parent
            #"{"v":1,"id":6,"parent":7,"pending":1,"completed":1,"total":2,"state":"running"}"#,  // cycle 6→7→6:
            #"{"v":1,"id":7,"parent":6,"pending":1,"completed":1,"total":2,"state":"running"}"#,  // unknown parents
            #"{"v":1,"id":3,"parent":null,"completed":1,"total":2,"state":"running"}"#,  // a second root
            #"{"v":1,"id":2,"parent":1,"pending":4,"completed":1,"total":2,"state":"running","name":"\u001b[31mred\u001b[0m\u0007"}"#,
            #"{"v":1,"id":4,"parent":2,"pending":1,"completed":0,"total":2,"state":"running"}"#,
            // cycle: moves 2 below 4
            #"{"v":1,"id":2,"parent":4,"pending":4,"completed":1,"total":2,"state":"running"}"#,
            #"{"v":1,"id":4,"parent":2,"pending":1,"completed":5,"total":2,"state":"running"}"#,  // counts: held below
        ]
        write(socket, lines.joined(separator: "\n") + "\n")
        wait("all lines read") {
            let d = mount.diagnostics
            return d.acceptedLines + d.ignoredLines + d.outOfRangeLines >= lines.count
        }
        let diagnostics = mount.diagnostics
        XCTAssertEqual(diagnostics.malformedLines, 4)
        XCTAssertEqual(diagnostics.outOfRangeLines, 6)  // 5 refused lines + 1 line applied with counts held
        XCTAssertEqual(diagnostics.unknownParentLines, 3)
        XCTAssertEqual(diagnostics.cycleLines, 1)
        XCTAssertEqual(diagnostics.rejectedNodes, 1)
        XCTAssertEqual(diagnostics.cleanedStrings, 1)
        XCTAssertEqual(diagnostics.acceptedLines, 4)
        let mirrored = try XCTUnwrap(mount.node.children.first)
        XCTAssertEqual(mirrored.localizedDescription, " red  ")
        let grandchild = try XCTUnwrap(mirrored.children.first)
        XCTAssertEqual(grandchild.completedUnitCount, 1)  // 5 of 2, held below the total: not finished
        XCTAssertFalse(grandchild.isFinished)
        XCTAssertEqual(mount.node.localizedDescription, "raw: Root")  // the mount's name first
        FileDescriptor.close(socket)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "raw stopped before the end")
        XCTAssertTrue(grandchild.isCancelled)  // nothing mirrored is left running
    }

    func test_an_oversized_line_is_dropped_without_being_buffered() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mount, socket) = try rawMount(under: parent)
        let huge = "{\"v\":1,\"name\":\"" + String(repeating: "x", count: ProgressMount.maximumLineLength) + "\"}\n"
        DispatchQueue.global().async {
            _ = FileDescriptor.sendAll(socket, Array(huge.utf8))
            _ = FileDescriptor.sendAll(
                socket, Array((#"{"v":1,"id":1,"parent":null,"completed":2,"total":4,"state":"running"}"# + "\n").utf8))
        }
        wait("the good line after it") { mount.node.completedUnitCount == 2 }
        // A read's lines are applied before its counts reach `diagnostics`: wait for the line dropped.
        wait("the dropped line counted") { mount.diagnostics.oversizedLines + mount.diagnostics.malformedLines >= 1 }
        XCTAssertEqual(mount.diagnostics.oversizedLines, 1)
        XCTAssertEqual(mount.diagnostics.malformedLines, 0)
        FileDescriptor.close(socket)
        mount.waitUntilEnded(timeout: .seconds(10))
    }

    func test_an_unsupported_version_fails_the_node_and_stops_reading() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (mount, socket) = try rawMount(under: parent)
        write(socket, #"{"v":2,"id":1,"parent":null,"completed":0,"total":1,"state":"running"}"# + "\n")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual(
            (mount.node.failure as? ProgressMount.Failure)?.reason,
            "raw: unsupported progress wire format version 2 (this program reads version 1)")
        XCTAssertEqual(mount.diagnostics.unsupportedVersion, 2)
        FileDescriptor.close(socket)
    }

    func test_nodes_beyond_the_limit_and_nesting_bombs_are_refused() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let (a, b) = try Sockets.pair()
        var options = ProgressMount.Options()
        options.maximumNodeCount = 3
        let mount = parent.mount(fileDescriptor: b, pendingUnitCount: 1, name: "raw", options: options)
        var lines = [#"{"v":1,"id":1,"parent":null,"completed":0,"total":10,"state":"running"}"#]
        for id in 2...6 {
            lines.append(#"{"v":1,"id":\#(id),"parent":1,"pending":1,"completed":0,"total":1,"state":"running"}"#)
        }
        // 10,000 nested arrays in an unknown field: refused at depth 32, no deep recursion.
        lines.append(
            #"{"v":1,"x":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}")
        write(a, lines.joined(separator: "\n") + "\n")
        wait("all lines read") { mount.diagnostics.rejectedNodes + mount.diagnostics.malformedLines == 4 }
        XCTAssertEqual(mount.diagnostics.rejectedNodes, 3)  // the root and 2 children fill the 3 places
        XCTAssertEqual(mount.diagnostics.malformedLines, 1)
        XCTAssertEqual(mount.node.children.count, 2)
        mount.close()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "raw was closed before the end")
        FileDescriptor.close(a)
    }

    func test_the_line_splitter_keeps_memory_bounded() {
        var splitter = LineSplitter(maximumLineLength: 8)
        XCTAssertEqual(splitter.append(ArraySlice(Array("abc\r\nde".utf8))), [.line(Array("abc".utf8))])
        XCTAssertEqual(splitter.append(ArraySlice(Array("fghijklm".utf8))), [])
        XCTAssertEqual(splitter.append(ArraySlice(Array("nop\nq".utf8))), [.oversized(13)])
        XCTAssertEqual(splitter.remainder(), Array("q".utf8))
    }
}
