import Foundation
import XCTest

import ProgressTree
@testable import ProgressTreeStreaming
import ProgressTreePlatform
import TestSupport

/// A tree served over HTTP as Server-Sent Events (`Docs/WireFormat.md`, "Over HTTP"), mounted by URL
/// (`mountConnection(url:)`) from a real server on 127.0.0.1 (`TestEventServer`): the mirror, the framing,
/// reconnections, failures, and commands posted back.
final class HTTPMountTests: XCTestCase {
    /// A wire line of node `id`.
    func line(
        _ id: Int, parent: Int? = nil, pending: Int64 = 1, completed: Int64, total: Int64,
        state: ProgressWireRecord.State = .running
    ) -> String {
        var record = ProgressWireRecord(
            id: id, parentID: parent, pendingUnitCount: parent == nil ? 0 : pending, totalUnitCount: total,
            completedUnitCount: completed)
        record.state = state
        return record.line
    }

    /// The event that names a stream's run (`Docs/WireFormat.md`, "Runs").
    func runEvent(_ run: String) -> String {
        "event: run\ndata: {\"v\":1,\"run\":\"\(run)\"}\n\n"
    }

    /// A server whose event connections get `snapshots` in turn (the last one again once they run out),
    /// each after `retry: 100`.
    func server(
        framing: TestEventServer.Framing = .identity, token: String? = "0123456789abcdef0123456789abcdef",
        eventsStatus: String = "200 OK", snapshots: [String]
    ) throws -> TestEventServer {
        let left = Lock(snapshots)
        return try TestEventServer(framing: framing, token: token, eventsStatus: eventsStatus) {
            "retry: 100\n\n" + left.withLock { $0.count > 1 ? $0.removeFirst() : $0.first ?? "" }
        }
    }

    func test_a_served_tree_mounts_with_its_weight_and_ends_at_the_roots_final_line() throws {
        let server = try server(snapshots: [
            EventText.event(line(1, completed: 0, total: 2), id: 1)
                + EventText.event(line(2, parent: 1, completed: 2, total: 4), id: 1) + EventText.synced(1)
        ])
        defer { server.stop() }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 4)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 2, name: "farm")
        wait("the child's line") { mount.node.children.first?.completedUnitCount == 2 }
        XCTAssertEqual(mount.node.fractionCompleted, 0.25)  // 2/4 of one of 2 units
        XCTAssertEqual(parent.fractionCompleted, 0.125)
        XCTAssertEqual(mount.node.localizedDescription, "farm")
        server.send(
            EventText.event(line(2, parent: 1, completed: 4, total: 4, state: .finished), id: 2)
                + EventText.event(line(1, completed: 1, total: 2), id: 2))
        wait("the child finished") { mount.node.children.isEmpty && mount.node.completedUnitCount == 1 }
        server.send(EventText.event(line(1, completed: 2, total: 2, state: .finished), id: 3))
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 2)
        wait("the connection closed by the mount") { server.openStreams == 0 }
        let request = try XCTUnwrap(server.eventRequests.first)
        XCTAssertEqual(request.path, "/events")
        XCTAssertEqual(request.fields["accept"], "text/event-stream")
        XCTAssertEqual(request.fields["cache-control"], "no-store")
        XCTAssertEqual(request.fields["host"], "127.0.0.1:\(server.port)")
        XCTAssertNil(request.fields["last-event-id"])
        XCTAssertEqual(mount.diagnostics.acceptedLines, 5)
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
        // After the root's final line, never again (the server's retry is 100 ms).
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(server.eventRequests.count, 1)
    }

    func test_chunked_bodies_with_crlf_line_ends_and_events_split_between_chunks() throws {
        let root = line(1, completed: 0, total: 1)
        let server = try server(
            framing: .chunked, snapshots: ["id: 1\r\ndata: \(root)\r\n\r\nevent: synced\r\ndata: {}\r\n\r\n"])
        defer { server.stop() }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 1)
        XCTAssertEqual(mount.name, "127.0.0.1:\(server.port)")
        wait("the root's line") { mount.node.totalUnitCount == 1 }
        let child = line(2, parent: 1, completed: 1, total: 3)
        let half = child.index(child.startIndex, offsetBy: child.count / 2)
        server.send(": keep-alive\r\n\r\nid: 2\r\ndata: \(child[..<half])")
        server.send("\(child[half...])\r\n\r\n")
        wait("the child's line") { mount.node.children.first?.completedUnitCount == 1 }
        server.send("id: 3\rdata: \(line(1, completed: 1, total: 1, state: .finished))\r\r")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(mount.diagnostics.acceptedLines, 3)
        XCTAssertEqual(mount.diagnostics.malformedLines, 0)
    }

    func test_a_dropped_connection_reconnects_with_the_last_event_id_and_finishes_what_ended_away() throws {
        let first =
            EventText.event(line(1, completed: 0, total: 3), id: 5)
            + EventText.event(line(2, parent: 1, completed: 1, total: 2), id: 5)
            + EventText.event(line(3, parent: 1, completed: 0, total: 2), id: 5) + EventText.synced(5)
        // Walk 9: node 2 finished and left while the reader was away (its unit is in the root's count);
        // node 3 is named with its new counts.
        let second =
            EventText.event(line(1, completed: 1, total: 3), id: 9)
            + EventText.event(line(3, parent: 1, completed: 1, total: 2), id: 9) + EventText.synced(9)
        let server = try server(framing: .chunked, snapshots: [first, second])
        defer { server.stop() }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 1)
        wait("both children") { mount.node.children.count == 2 }
        let away = try XCTUnwrap(mount.node.children.first { $0.completedUnitCount == 1 })
        server.drop()
        wait("a second connection") { server.eventRequests.count == 2 }
        XCTAssertEqual(server.eventRequests[1].fields["last-event-id"], "5")
        wait("the node that ended away finished") { away.isFinished }
        XCTAssertEqual(mount.node.children.map(\.completedUnitCount), [1])
        XCTAssertEqual(mount.node.completedUnitCount, 1)
        XCTAssertEqual(mount.node.fractionCompleted, 0.5)  // (1 + 1/2) / 3
        XCTAssertFalse(mount.hasEnded)
        server.send(EventText.event(line(1, completed: 3, total: 3, state: .finished), id: 10))
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(mount.diagnostics.reconnections, 1)
        XCTAssertEqual(mount.diagnostics.finishedWhileAway, 1)
    }

    /// A node's subtree as words, children in order: what two mirrors must agree on.
    func shape(_ node: ProgressNode) -> [String] {
        let state =
            node.isFailed
            ? "failed"
            : node.isCancelled ? "cancelled" : node.isFinished ? "finished" : node.isPaused ? "paused" : "running"
        let own = "\(node.localizedDescription ?? "") \(node.completedUnitCount)/\(node.totalUnitCount) \(state)"
        return [own] + node.children.flatMap { shape($0).map { "  " + $0 } }
    }

    func test_a_server_serving_another_run_leaves_the_mount_equal_to_a_fresh_mount_of_that_run() throws {
        // Run A at 2 of 4, its photo 3 half done with a file below it, and photos skipped; the server
        // restarts (run B) and names new nodes with the same ids: B's node 2 is another photo, B's node 3
        // does not exist yet.
        var file = ProgressWireRecord(
            id: 4, parentID: 3, pendingUnitCount: 1, totalUnitCount: 20, completedUnitCount: 10)
        file.kind = ProgressNode.Kind.file.rawValue
        file.fileTotalCount = 1
        var skipping = ProgressWireRecord(
            id: 3, parentID: 1, pendingUnitCount: 1, totalUnitCount: 2, completedUnitCount: 1)
        skipping.properties = [PhotosSkipped.wireName: .integer(2)]
        var rootA = ProgressWireRecord(
            id: 1, parentID: nil, pendingUnitCount: 0, totalUnitCount: 4, completedUnitCount: 2)
        rootA.properties = [PhotosSkipped.wireName: .integer(1)]
        rootA.localizedAdditionalDescription = "2 of 4 photos"
        let first =
            runEvent("a") + EventText.event(rootA.line, id: 5)
            + EventText.event(line(2, parent: 1, completed: 1, total: 2), id: 5)
            + EventText.event(skipping.line, id: 5) + EventText.event(file.line, id: 5) + EventText.synced(5)
        let second =
            runEvent("b") + EventText.event(line(1, completed: 0, total: 4), id: 1)
            + EventText.event(line(2, parent: 1, completed: 0, total: 8), id: 1) + EventText.synced(1)
        let server = try server(snapshots: [first, second])
        defer { server.stop() }
        var options = ProgressMount.Options()
        options.properties = [PhotosSkipped.self]
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 1, name: "farm", options: options)
        wait("run A mirrored") { mount.node.children.last?.children.first?.completedUnitCount == 10 }
        let runA = mount.node.children + mount.node.children[1].children
        XCTAssertEqual(mount.node.fractionCompleted, 0.8125)  // (2 + 1/2 + (1 + 1/2) / 2) / 4
        XCTAssertEqual(mount.node.summary(of: PhotosSkipped.self), 3)
        XCTAssertEqual(mount.node.fileSummary.fileTotalCount, 1)
        server.drop()
        wait("run B mirrored") { mount.node.totalUnitCount == 4 && mount.node.children.map(\.totalUnitCount) == [8] }

        // A's nodes that had not ended left without an outcome: finished, not failed, not cancelled.
        for node in runA {
            XCTAssertTrue(node.isFinished)
            XCTAssertFalse(node.isFailed || node.isCancelled)
        }
        // The mount equals a fresh mount of run B, and so does what its parent counts.
        let freshParent = ProgressNode.discreteProgress(totalUnitCount: 2)
        let fresh = try freshParent.mountConnection(
            url: server.url(), pendingUnitCount: 1, name: "farm", options: options)
        wait("run B mirrored afresh") { fresh.node.children.map(\.totalUnitCount) == [8] }
        XCTAssertEqual(shape(mount.node), shape(fresh.node))
        XCTAssertEqual(shape(mount.node).first, "farm 0/4 running")
        XCTAssertEqual(shape(mount.node).count, 2)
        XCTAssertEqual(mount.node.descendantOutcomes, ProgressNode.DescendantOutcomes())
        XCTAssertEqual(mount.node.descendantOutcomes, fresh.node.descendantOutcomes)
        XCTAssertEqual(parent.descendantOutcomes, freshParent.descendantOutcomes)
        XCTAssertEqual(mount.node.fractionCompleted, 0)
        XCTAssertEqual(mount.node.fractionCompleted, fresh.node.fractionCompleted)
        XCTAssertEqual(parent.fractionCompleted, freshParent.fractionCompleted)
        XCTAssertEqual(parent.completedUnitCount, 0)
        XCTAssertEqual(mount.node.fileSummary, fresh.node.fileSummary)
        XCTAssertEqual(mount.node.summary(of: PhotosSkipped.self), 0)
        XCTAssertEqual(parent.summary(of: PhotosSkipped.self), freshParent.summary(of: PhotosSkipped.self))
        XCTAssertEqual(mount.node.localizedAdditionalDescription, fresh.node.localizedAdditionalDescription)
        XCTAssertEqual(mount.diagnostics.finishedWhileAway, 0)
        fresh.close()
        XCTAssertTrue(fresh.waitUntilEnded(timeout: .seconds(10)))

        // The same run again after a drop is a reconnection: nothing is lost, B's photo stays the node it is.
        let photo = try XCTUnwrap(mount.node.children.first)
        let connections = server.eventRequests.count
        server.drop()
        wait("a reconnection to run B") { server.eventRequests.count == connections + 1 }
        server.send(EventText.event(line(2, parent: 1, completed: 4, total: 8), id: 2))
        wait("B's photo moves") { photo.completedUnitCount == 4 }
        XCTAssertTrue(mount.node.children.first === photo)
        XCTAssertFalse(photo.isFinished || photo.isFailed || photo.isCancelled)
        XCTAssertEqual(mount.diagnostics.reconnections, 2)
        XCTAssertEqual(mount.diagnostics.finishedWhileAway, 0)
        XCTAssertEqual(mount.node.descendantOutcomes, ProgressNode.DescendantOutcomes())
        server.send(EventText.event(line(1, completed: 4, total: 4, state: .finished), id: 3))
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(mount.node.isFinished)
        XCTAssertEqual(parent.completedUnitCount, 1)
    }

    func test_what_the_run_before_reported_stays_counted_and_a_paused_mirror_runs_the_new_run() throws {
        // Run A reported a failed photo (it happened), and its root is paused; run B runs.
        let first =
            runEvent("a") + EventText.event(line(1, completed: 0, total: 3, state: .paused), id: 5)
            + EventText.event(line(2, parent: 1, completed: 0, total: 2, state: .paused), id: 5)
            + EventText.event(line(3, parent: 1, completed: 1, total: 2, state: .paused), id: 5) + EventText.synced(5)
        let second =
            runEvent("b") + EventText.event(line(1, completed: 1, total: 3), id: 1)
            + EventText.event(line(2, parent: 1, completed: 0, total: 8), id: 1) + EventText.synced(1)
        let server = try server(snapshots: [first, second])
        defer { server.stop() }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 1, name: "farm")
        wait("run A mirrored") { mount.node.children.count == 2 && mount.node.isPaused }
        var failed = ProgressWireRecord(
            id: 3, parentID: 1, pendingUnitCount: 1, totalUnitCount: 2, completedUnitCount: 1)
        failed.state = .failed
        failed.failureReason = "IMG_0003.jpg: the camera stopped answering"
        server.send(EventText.event(failed.line, id: 6))
        wait("A's failure") { mount.node.descendantOutcomes.failedCount == 1 }
        let lost = try XCTUnwrap(mount.node.children.first)
        server.drop()
        wait("run B mirrored") { mount.node.children.map(\.totalUnitCount) == [8] && !mount.node.isPaused }
        XCTAssertTrue(lost.isFinished)
        XCTAssertFalse(lost.isFailed || lost.isCancelled)
        XCTAssertEqual(mount.node.completedUnitCount, 1)
        // The failed photo keeps its share at failure (1/2 of its unit) in the mounted node, by the model's
        // rule for a failed child (Docs/Mounting.md says so): (1 + 1/2) / 3.
        XCTAssertEqual(mount.node.fractionCompleted, 0.5)
        XCTAssertEqual(
            mount.node.descendantOutcomes,
            ProgressNode.DescendantOutcomes(
                failedCount: 1, firstFailureDescription: "IMG_0003.jpg: the camera stopped answering"))
        XCTAssertEqual(server.commands, [], "leaving the pause of run A sends nothing")
        mount.close()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
    }

    func test_a_server_that_is_gone_fails_the_mount_with_the_reason_within_the_limit() throws {
        let server = try server(snapshots: [EventText.event(line(1, completed: 0, total: 1), id: 1)])
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        var options = ProgressMount.Options()
        options.reconnectionLimit = .milliseconds(600)
        let mount = try parent.mountConnection(url: server.url(), pendingUnitCount: 1, options: options)
        wait("the root's line") { mount.node.totalUnitCount == 1 }
        let gone = ContinuousClock.now
        server.stop()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertLessThan(ContinuousClock.now - gone, .seconds(3))
        XCTAssertEqual(
            (mount.node.failure as? ProgressMount.Failure)?.reason,
            "http://127.0.0.1:\(server.port)/events: connection refused for 0.6 s")
        XCTAssertEqual(parent.descendantOutcomes.failedCount, 1)
    }

    func test_an_answer_other_than_200_fails_the_mount_with_the_status() throws {
        let server = try server(eventsStatus: "404 Not Found", snapshots: [])
        defer { server.stop() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1)
            .mountConnection(url: server.url(), pendingUnitCount: 1)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual(
            (mount.node.failure as? ProgressMount.Failure)?.reason,
            "http://127.0.0.1:\(server.port)/events answered 404 Not Found")
        XCTAssertEqual(server.eventRequests.count, 1)
    }

    func test_https_is_refused_with_the_way_to_go_on() {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        XCTAssertThrowsError(try parent.mountConnection(url: "https://build.example/events", pendingUnitCount: 1)) {
            XCTAssertEqual(
                "\($0)",
                "https://build.example/events: https is not supported by ProgressTreeStreaming, which has no TLS: "
                    + "reach the server through a TLS-terminating tunnel (stunnel, ssh -L, a local reverse proxy) "
                    + "and mount its http:// URL")
        }
        XCTAssertTrue(parent.children.isEmpty)
    }

    // MARK: Commands

    func served(token: String?) throws -> TestEventServer {
        try server(
            token: token,
            snapshots: [
                EventText.event(line(1, completed: 0, total: 2), id: 1)
                    + EventText.event(line(2, parent: 1, completed: 0, total: 2), id: 1) + EventText.synced(1)
            ])
    }

    func test_a_cancel_on_the_mirror_is_posted_with_the_servers_token_in_order() throws {
        let server = try served(token: "0123456789abcdef0123456789abcdef")
        defer { server.stop() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1)
            .mountConnection(url: server.url(), pendingUnitCount: 1)
        wait("the child") { mount.node.children.count == 1 }
        mount.node.children[0].pause()
        mount.node.children[0].cancel()
        wait("two commands") { server.commands.count == 2 }
        XCTAssertEqual(
            server.commands.map(\.body),
            [#"{"v":1,"command":"pause","id":2}"#, #"{"v":1,"command":"cancel","id":2}"#])
        XCTAssertEqual(server.commands.map(\.path), ["/commands", "/commands"])
        XCTAssertEqual(
            server.commands.map { $0.fields["progresstree-token"] },
            Array(repeating: "0123456789abcdef0123456789abcdef", count: 2))
        XCTAssertEqual(server.requests.filter { $0.path == "/token" }.count, 1)  // asked once
        XCTAssertEqual(mount.diagnostics.failedCommands, 0)
        mount.close()
    }

    func test_a_token_given_is_used_and_a_refused_command_is_counted() throws {
        let server = try served(token: "0123456789abcdef0123456789abcdef")
        defer { server.stop() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1)
            .mountConnection(url: server.url(), pendingUnitCount: 1, token: "wrong")
        wait("the child") { mount.node.children.count == 1 }
        mount.node.children[0].cancel()
        wait("the refusal counted") { mount.diagnostics.failedCommands == 1 }
        XCTAssertEqual(server.commands.map { $0.fields["progresstree-token"] }, ["wrong"])
        XCTAssertEqual(server.requests.filter { $0.path == "/token" }.count, 0)
        mount.close()
    }

    func test_a_node_that_appears_below_a_mirror_paused_here_stays_paused() throws {
        // Read-only: the pause is never sent, so no line of the publisher's ever says paused.
        let server = try served(token: nil)
        defer { server.stop() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1)
            .mountConnection(url: server.url(), pendingUnitCount: 1)
        wait("the child") { mount.node.children.count == 1 }
        let child = mount.node.children[0]
        child.pause()
        server.send(EventText.event(line(3, parent: 2, completed: 0, total: 1), id: 2))
        wait("the grandchild's line applied") { mount.diagnostics.acceptedLines == 3 }
        XCTAssertEqual(child.children.map(\.isPaused), [true])  // its line says running, written before
        XCTAssertTrue(child.isPaused)
        mount.close()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
    }

    func test_a_read_only_server_gets_no_commands() throws {
        let server = try served(token: nil)
        defer { server.stop() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1)
            .mountConnection(url: server.url(), pendingUnitCount: 1)
        wait("the child") { mount.node.children.count == 1 }
        mount.node.children[0].pause()
        wait("the command not sent") { mount.diagnostics.unsentCommands == 1 }
        mount.node.children[0].resume()
        wait("the second not sent") { mount.diagnostics.unsentCommands == 2 }
        XCTAssertEqual(server.commands, [])
        XCTAssertEqual(server.requests.filter { $0.path == "/token" }.count, 1)
        XCTAssertEqual(mount.diagnostics.failedCommands, 0)
        mount.close()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual(
            (mount.node.failure as? ProgressMount.Failure)?.reason, "127.0.0.1:\(server.port) was closed before the end"
        )
    }
}
