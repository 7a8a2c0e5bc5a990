import ProgressTree
import ProgressTreePlatform
@testable import ProgressTreeStreaming
import TestSupport
import XCTest

/// The chunk a task received, read by the test that polls for it.
private final class ReceivedChunk: Sendable {
    private let value = Lock<[UInt8]?>(nil)

    var chunk: [UInt8]? { value.withLock { $0 } }

    func set(_ chunk: [UInt8]?) {
        value.withLock { $0 = chunk ?? [] }
    }
}

/// `ProgressEventStream`: the event stream of `Docs/WireFormat.md`, "Over HTTP (Server-Sent Events)", as
/// bytes, walked by hand (`publishesOnTimer = false`) with its events numbered from 101.
final class EventStreamTests: XCTestCase {
    private func makeStream(
        _ root: ProgressNode, maximumBufferedBytes: Int = 32 * 1024, keepAlive: Duration = .seconds(15)
    ) -> ProgressEventStream {
        var options = ProgressEventStream.Options()
        options.publisher.publishesOnTimer = false
        options.firstEventID = 100
        options.maximumBufferedBytes = maximumBufferedBytes
        options.keepAliveInterval = keepAlive
        return ProgressEventStream(root, options: options)
    }

    private func album(total: Int64) -> ProgressNode {
        let root = ProgressNode.discreteProgress(totalUnitCount: total)
        root.localizedDescription = "Album"
        return root
    }

    /// The events of a chunk, one string each: "id W: id parent state name" for a progress line,
    /// "synced W" (its id, its data's number), "retry N", ": comment".
    private func events(_ chunk: [UInt8]?, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        guard let chunk else { return ["end"] }
        let text = String(decoding: chunk, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("\n\n"), "a chunk ends an event: \(text)", file: file, line: line)
        return text.split(separator: "\n\n", omittingEmptySubsequences: true).map { block in
            let fields = block.split(separator: "\n").map(String.init)
            if fields == ["retry: 1000"] || fields.first?.hasPrefix(":") == true { return fields.joined() }
            if fields.first == "event: run" {
                // `{"v":1,"run":"…"}`: the stream's run, 32 hexadecimal digits.
                let run = fields.count == 2 ? fields[1].wholeMatch(of: /data: \{"v":1,"run":"([0-9a-f]{32})"\}/) : nil
                XCTAssertNotNil(run, block.description, file: file, line: line)
                return "run"
            }
            if fields.first == "event: synced" {
                XCTAssertEqual(fields.count, 3, block.description, file: file, line: line)
                let walk = fields[1].dropFirst("id: ".count)
                XCTAssertEqual(fields[2], "data: {\"v\":1,\"synced\":\(walk)}", file: file, line: line)
                return "synced \(walk)"
            }
            guard fields.count == 2, fields[0].hasPrefix("id: "), fields[1].hasPrefix("data: "),
                let record = try? ProgressWireRecord(line: Array(fields[1].dropFirst("data: ".count).utf8))
            else {
                XCTFail("not an event of one wire line: \(block)", file: file, line: line)
                return String(block)
            }
            let parent = record.parentID.map(String.init) ?? "-"
            let reason = record.failureReason.map { " (\($0))" } ?? ""
            return "\(fields[0]): \(record.id) \(parent) \(record.state.rawValue) \(record.label ?? "")\(reason)"
        }
    }

    /// The next chunk of a subscription that has one ready (fails rather than waits when it has none).
    private func ready(_ subscription: ProgressEventStream.Subscription) async -> [UInt8]? {
        let chunk = await withTaskGroup(of: [UInt8]??.self) { group in
            group.addTask { await subscription.next() }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return .some(nil)
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        guard let chunk else {
            XCTFail("no chunk was ready")
            return nil
        }
        return chunk
    }

    /// Takes the next chunk (which must be ready) and compares its events with `expected`.
    private func expectEvents(
        _ subscription: ProgressEventStream.Subscription, _ expected: [String], file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        let chunk = await ready(subscription)
        XCTAssertEqual(events(chunk, file: file, line: line), expected, file: file, line: line)
    }

    /// Takes the next chunk (which must be ready) and counts its events.
    private func expectCount(
        _ subscription: ProgressEventStream.Subscription, _ count: Int, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        let chunk = await ready(subscription)
        XCTAssertEqual(events(chunk, file: file, line: line).count, count, file: file, line: line)
    }

    func test_each_walk_is_one_chunk_of_events_with_the_walks_number_and_one_wire_line_each() async throws {
        let root = album(total: 2)
        let child = makeNamedNode("IMG_0001.jpg", total: 4, parent: root)
        let stream = makeStream(root)
        let subscription = stream.subscribe()
        // Joined before any walk: no line yet, synced at the number before the first walk.
        let first = await ready(subscription)
        XCTAssertEqual(
            first.map { String(decoding: $0, as: UTF8.self) },
            "retry: 1000\n\nevent: run\ndata: {\"v\":1,\"run\":\"\(stream.runID)\"}\n\n"
                + "event: synced\nid: 100\ndata: {\"v\":1,\"synced\":100}\n\n")
        stream.publishChanges()
        let walk = await ready(subscription)
        let text = String(decoding: try XCTUnwrap(walk), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 7, text)
        XCTAssertEqual(lines[0], "id: 101")
        XCTAssertTrue(lines[1].hasPrefix(#"data: {"v":1,"time":null,"id":1,"parent":null,"pending":0,"name":"Album","#))
        XCTAssertEqual(lines[2], "")
        XCTAssertEqual(lines[3], "id: 101")
        XCTAssertTrue(
            lines[4].hasPrefix(#"data: {"v":1,"time":null,"id":2,"parent":1,"pending":1,"name":"IMG_0001.jpg","#))
        XCTAssertEqual(lines[5], "")
        XCTAssertEqual(lines[6], "")
        child.completedUnitCount = 1
        stream.publishChanges()
        stream.publishChanges()  // nothing changed: no walk, no number
        child.completedUnitCount = 2
        stream.publishChanges()
        let firstChange = await ready(subscription)
        let secondChange = await ready(subscription)
        let changes = [firstChange, secondChange]
        XCTAssertEqual(
            changes.flatMap { events($0) },
            [
                "id: 102: 1 - running Album", "id: 102: 2 1 running IMG_0001.jpg",
                "id: 103: 1 - running Album", "id: 103: 2 1 running IMG_0001.jpg",
            ])
        XCTAssertEqual(stream.lastEventID, 103)
    }

    func test_every_subscriber_is_told_the_streams_run_first_and_another_stream_is_another_run() async throws {
        let root = album(total: 1)
        let stream = makeStream(root)
        let again = makeStream(root)
        XCTAssertNotNil(stream.runID.wholeMatch(of: /[0-9a-f]{32}/), stream.runID)
        XCTAssertNotEqual(stream.runID, again.runID)
        stream.publishChanges()
        for lastEventID in [nil, "101"] {
            let chunk = await ready(stream.subscribe(lastEventID: lastEventID))
            let text = String(decoding: try XCTUnwrap(chunk), as: UTF8.self)
            XCTAssertTrue(
                text.hasPrefix("retry: 1000\n\nevent: run\ndata: {\"v\":1,\"run\":\"\(stream.runID)\"}\n\nid: 101\n"),
                text)
        }
        // A reader resynced after falling behind is told no run again: its connection is the same.
        let subscription = stream.subscribe()
        await expectEvents(subscription, ["retry: 1000", "run", "id: 101: 1 - running Album", "synced 101"])
        root.completedUnitCount = 1
        stream.publishChanges()
        await expectEvents(subscription, ["id: 102: 1 - finished Album"])
    }

    func test_a_relay_serves_lines_walked_elsewhere_as_walks_with_its_given_run_and_applies_no_command() async throws {
        // The lines of another process's stream (read back from a store), relayed batch by batch.
        let source = album(total: 2)
        let child = makeNamedNode("IMG_0001.jpg", total: 4, parent: source)
        let written = Lock<[[UInt8]]>([])
        var walking = ProgressPublisher.Options()
        walking.publishesOnTimer = false
        let walker = ProgressPublisher(source, options: walking) { bytes in
            written.withLock { $0.append(bytes) }
            return true
        }
        walker.publishChanges()
        child.completedUnitCount = 4
        walker.publishChanges()
        let lines = written.withLock { $0 }
        var options = ProgressEventStream.Options()
        options.firstEventID = 100
        let relay = ProgressEventStream(relayingRun: "worker-run.1", options: options)
        XCTAssertEqual(relay.runID, "worker-run.1")
        relay.relay(lines[0])
        let joiner = relay.subscribe()
        let chunk = await ready(joiner)
        let first = String(decoding: try XCTUnwrap(chunk), as: UTF8.self)
        XCTAssertTrue(
            first.hasPrefix("retry: 1000\n\nevent: run\ndata: {\"v\":1,\"run\":\"worker-run.1\"}\n\nid: 101\n"), first)
        XCTAssertTrue(first.hasSuffix("event: synced\nid: 101\ndata: {\"v\":1,\"synced\":101}\n\n"), first)
        relay.relay(lines[1])
        await expectEvents(joiner, ["id: 102: 1 - running Album", "id: 102: 2 1 finished IMG_0001.jpg"])
        XCTAssertEqual(relay.applyCommand(Array("{\"v\":1,\"command\":\"cancel\",\"id\":1}".utf8)), .ignored)
        XCTAssertEqual(relay.applyCommand(Array("no command".utf8)), .malformed)
        XCTAssertFalse(source.isCancelled)
        walker.finish()
    }

    func test_a_late_joiner_gets_every_node_still_in_the_tree_and_the_kept_failures_then_synced() async throws {
        let root = album(total: 4)
        let done = makeNamedNode("done.jpg", total: 1, parent: root)
        let broken = makeNamedNode("broken.jpg", total: 10, parent: root)
        let download = makeNamedNode("download", total: 100, parent: broken, pending: 9)
        let running = makeNamedNode("running.jpg", total: 2, parent: root)
        let stream = makeStream(root)
        stream.publishChanges()  // 101: every node named
        done.completedUnitCount = 1  // finishes and leaves: not named to a late joiner
        broken.fail(Numbered(number: 7))  // leaves, failed: kept, with the download its failure cancelled
        stream.publishChanges()  // 102
        let late = makeNamedNode("late.jpg", total: 2, parent: root)  // named by 103
        running.completedUnitCount = 1
        stream.publishChanges()  // 103
        XCTAssertEqual(download.isCancelled, true)
        _ = late

        // Each node after its parent, in the order they were named (a walk names a node's children as it
        // reads the node, so running.jpg, named with its siblings, comes before the download).
        let joiner = stream.subscribe()
        await expectEvents(
            joiner,
            [
                "retry: 1000", "run",
                "id: 103: 1 - running Album",
                "id: 103: 3 1 failed broken.jpg (failure 7)",
                "id: 103: 4 1 running running.jpg",
                "id: 103: 5 3 cancelled download",
                "id: 103: 6 1 running late.jpg",
                "synced 103",
            ])
        running.completedUnitCount = 2
        stream.publishChanges()
        await expectEvents(joiner, ["id: 104: 1 - running Album", "id: 104: 4 1 finished running.jpg"])
    }

    func test_a_reader_reconnecting_with_the_last_id_it_saw_gets_the_live_nodes_and_the_final_lines_after_it()
        async throws
    {
        let root = album(total: 3)
        let first = makeNamedNode("first.jpg", total: 2, parent: root)
        let second = makeNamedNode("second.jpg", total: 2, parent: root)
        let stream = makeStream(root)
        stream.publishChanges()  // 101
        first.fail(Numbered(number: 1))
        stream.publishChanges()  // 102: first's final line
        second.completedUnitCount = 1
        stream.publishChanges()  // 103
        let third = makeNamedNode("third.jpg", total: 2, parent: root)
        third.fail(Numbered(number: 3))
        stream.publishChanges()  // 104: third named failed, from what the album kept

        // Saw everything up to 103: first's failure (102) is known; the live nodes are all sent, so a
        // node not named is one that left; the failure after 103 is sent.
        await expectEvents(
            stream.subscribe(lastEventID: "103"),
            [
                "retry: 1000", "run", "id: 104: 1 - running Album", "id: 104: 3 1 running second.jpg",
                "id: 104: 4 1 failed third.jpg (failure 3)", "synced 104",
            ])
        // A number this stream never wrote, or none, or not a number: everything.
        let everything = [
            "retry: 1000", "run", "id: 104: 1 - running Album", "id: 104: 2 1 failed first.jpg (failure 1)",
            "id: 104: 3 1 running second.jpg", "id: 104: 4 1 failed third.jpg (failure 3)", "synced 104",
        ]
        for lastEventID in ["7", "105", nil, "x"] {
            await expectEvents(stream.subscribe(lastEventID: lastEventID), everything)
        }
        // 104 was the number of the snapshots above: a reader cut off in one has it without every line
        // before it, so it counts as none.
        await expectEvents(stream.subscribe(lastEventID: "104"), everything)
    }

    func test_after_the_roots_final_line_a_joiner_gets_the_final_state_and_the_stream_stays_open() async throws {
        let root = album(total: 2)
        let good = makeNamedNode("good.jpg", total: 1, parent: root)
        let bad = makeNamedNode("bad.jpg", total: 1, parent: root)
        let stream = makeStream(root, keepAlive: .zero)
        let reader = stream.subscribe()
        _ = await ready(reader)
        stream.publishChanges()  // 101
        await expectEvents(
            reader,
            ["id: 101: 1 - running Album", "id: 101: 2 1 running good.jpg", "id: 101: 3 1 running bad.jpg"])
        good.completedUnitCount = 1
        bad.fail(Numbered(number: 2))
        root.cancel()
        stream.publishChanges()  // 102: the end
        await expectEvents(
            reader,
            [
                "id: 102: 2 1 finished good.jpg", "id: 102: 3 1 failed bad.jpg (failure 2)",
                "id: 102: 1 - cancelled Album",
            ])
        stream.publishChanges()
        XCTAssertEqual(stream.lastEventID, 102)

        let joiner = stream.subscribe()
        await expectEvents(
            joiner,
            [
                "retry: 1000", "run", "id: 102: 3 1 failed bad.jpg (failure 2)", "id: 102: 1 - cancelled Album",
                "synced 102",
            ])
        // Open: nothing more but keep-alives. (Sent to a transport waiting for a chunk: asked for until the
        // waiting task has one; awaiting its value is not cancellable, so it is polled.)
        let received = ReceivedChunk()
        let waiting = Task { received.set(await joiner.next()) }
        let start = ContinuousClock.now
        while received.chunk == nil, start.duration(to: .now) < .seconds(10) {
            stream.sendKeepAlives()
            try await Task.sleep(for: .milliseconds(2))
        }
        await waiting.value
        XCTAssertEqual(received.chunk.map { String(decoding: $0, as: UTF8.self) }, ": keep-alive\n\n")
        stream.finish()
        let ended = await joiner.next()
        XCTAssertNil(ended)
    }

    func test_a_subscriber_that_falls_behind_is_resynced_not_buffered_without_bound() async throws {
        let root = album(total: 10)
        let child = makeNamedNode("slow.jpg", total: 10, parent: root)
        // Room for one walk of two lines (about 1 KB), not two.
        let stream = makeStream(root, maximumBufferedBytes: 1500)
        let slow = stream.subscribe()
        let prompt = stream.subscribe()
        _ = await ready(slow)
        _ = await ready(prompt)
        stream.publishChanges()  // 101
        await expectCount(prompt, 2)
        child.completedUnitCount = 1
        stream.publishChanges()  // 102: slow has 101 queued; 102 would pass the bound
        await expectCount(prompt, 2)
        child.completedUnitCount = 2
        stream.publishChanges()  // 103: slow waits for a snapshot
        await expectCount(prompt, 2)
        XCTAssertEqual(stream.diagnostics.resyncs, 1)
        await expectEvents(
            slow,
            ["id: 103: 1 - running Album", "id: 103: 2 1 running slow.jpg", "synced 103"])
        child.completedUnitCount = 3
        stream.publishChanges()  // 104
        await expectEvents(slow, ["id: 104: 1 - running Album", "id: 104: 2 1 running slow.jpg"])
        let diagnostics = stream.diagnostics
        XCTAssertEqual([diagnostics.subscriptions, diagnostics.snapshots, diagnostics.resyncs], [2, 3, 1])
    }

    func test_commands_are_applied_ignored_or_refused_as_an_http_server_answers_them() {
        let root = album(total: 2)
        let child = makeNamedNode("child.jpg", total: 2, parent: root)
        child.isPausable = true
        let stream = makeStream(root)
        stream.publishChanges()
        XCTAssertEqual(stream.applyCommand(Array(#"{"v":1,"command":"pause","id":2}"#.utf8)), .applied)
        XCTAssertTrue(child.isPaused)
        XCTAssertEqual(stream.applyCommand(Array("{\"v\":1,\"command\":\"resume\",\"id\":2}\r\n".utf8)), .applied)
        XCTAssertFalse(child.isPaused)
        XCTAssertEqual(stream.applyCommand(Array(#"{"v":1,"command":"cancel","id":99}"#.utf8)), .applied)
        XCTAssertEqual(stream.applyCommand(Array(#"{"v":1,"command":"rewind","id":2}"#.utf8)), .ignored)
        XCTAssertEqual(stream.applyCommand(Array(#"{"v":1,"command":"interval","seconds":5}"#.utf8)), .ignored)
        for body in [
            "", "cancel", "{}", #"{"v":2,"command":"cancel","id":2}"#, #"{"v":1,"command":"cancel"}"#,
            #"{"v":1,"command":"cancel","id":0}"#, #"{"command":"cancel","id":2}"#, "[1]",
        ] {
            XCTAssertEqual(stream.applyCommand(Array(body.utf8)), .malformed, body)
        }
        let padded = #"{"v":1,"command":"cancel","id":2,"pad":""# + String(repeating: "x", count: 4096) + "\"}"
        XCTAssertEqual(stream.applyCommand(Array(padded.utf8)), .oversized)
        XCTAssertFalse(child.isCancelled)
        XCTAssertEqual(stream.applyCommand(Array(#"{"v":1,"command":"cancel","id":2}"#.utf8)), .applied)
        XCTAssertTrue(child.isCancelled)
    }

    func test_finish_ends_every_subscription_after_what_it_was_given_and_cancel_ends_one() async throws {
        let root = album(total: 1)
        let stream = makeStream(root)
        let kept = stream.subscribe()
        let cancelled = stream.subscribe()
        XCTAssertEqual(stream.subscriberCount, 2)
        cancelled.cancel()
        XCTAssertEqual(stream.subscriberCount, 1)
        let none = await cancelled.next()
        XCTAssertNil(none)
        _ = await ready(kept)
        root.completedUnitCount = 1
        stream.finish()
        await expectEvents(kept, ["id: 101: 1 - finished Album"])
        let end = await kept.next()
        XCTAssertNil(end)
        // Later: the final state, then the end.
        let later = stream.subscribe()
        await expectEvents(later, ["retry: 1000", "run", "id: 101: 1 - finished Album", "synced 101"])
        let laterEnd = await later.next()
        XCTAssertNil(laterEnd)
    }

    func test_a_released_subscription_leaves_the_stream() {
        let stream = makeStream(album(total: 1))
        do {
            let subscription = stream.subscribe()
            XCTAssertEqual(stream.subscriberCount, 1)
            _ = subscription
        }
        XCTAssertEqual(stream.subscriberCount, 0)
    }
}
