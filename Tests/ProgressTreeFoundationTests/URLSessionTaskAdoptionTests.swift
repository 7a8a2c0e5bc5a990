import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ProgressTree
import ProgressTreePlatform
@testable import ProgressTreeFoundation
import TestSupport
import XCTest

/// `addChild(_: URLSessionTask, withPendingUnitCount:failsOnHTTPStatus:)` against a real HTTP server on
/// 127.0.0.1 that each test starts and stops (`TestHTTPServer`): the bytes, the total from the
/// Content-Length or none, the outcomes, cancellation both ways, and no sampler left running.
final class URLSessionTaskAdoptionTests: XCTestCase {
    private var session: URLSession!

    override func setUp() {
        session = URLSession(configuration: .ephemeral)
    }

    override func tearDown() {
        session.invalidateAndCancel()
        // Every mirror ended with its task or its node, and the timer stopped with the last one.
        ProgressSampler.shared.sampleNow()  // after any tick under way
        XCTAssertEqual(ProgressSampler.shared.status.mirrors, 0, "no adopted task is still followed")
        XCTAssertFalse(ProgressSampler.shared.status.isTimerRunning, "the sampler's timer stopped")
    }

    /// Bytes that differ from one position to the next.
    private func bytes(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    }

    /// Every snapshot of `node` until it is final (finished, cancelled or failed), or `nil` after 30 s.
    private func snapshotsUntilFinal(of node: ProgressNode) -> [ProgressNode.Snapshot]? {
        let seen = Recorded<[ProgressNode.Snapshot]>([])
        let final = DispatchSemaphore(value: 0)
        let observation = node.observe(\.snapshot, options: .initial) { _, change in
            seen.withLock { $0.append(change.newValue) }
            if change.newValue.isFinal { final.signal() }
        }
        defer { observation.invalidate() }
        guard final.wait(timeout: .now() + 30) == .success else { return nil }
        return seen.withLock { $0 }
    }

    /// Waits for `task` to be `.completed` (on Linux it is set just after the completion handler returns).
    private func waitUntilCompleted(_ task: URLSessionTask) {
        XCTAssertTrue(poll(seconds: 30) { task.state == .completed }, "the task completed")
    }

    func test_a_download_with_a_content_length_counts_its_bytes_of_that_total_and_finishes() throws {
        let server = try TestHTTPServer(files: ["big.bin": bytes(5_000_000)], chunkSize: 262_144)
        defer { server.stop() }
        let root = ProgressNode(totalUnitCount: 2)
        let handled = DispatchSemaphore(value: 0)
        let task = session.downloadTask(with: URL(string: server.url("big.bin"))!) { _, _, _ in handled.signal() }
        let node = root.addChild(task, withPendingUnitCount: 1)
        XCTAssertTrue(node.isIndeterminate, "no length known before the response")
        task.resume()
        let snapshots = try XCTUnwrap(snapshotsUntilFinal(of: node))
        let last = try XCTUnwrap(snapshots.last)
        XCTAssertTrue(last.isFinished)
        XCTAssertEqual(last.totalUnitCount, 5_000_000)
        XCTAssertEqual(last.completedUnitCount, 5_000_000)
        XCTAssertEqual(node.totalUnitCount, 5_000_000)
        XCTAssertEqual(node.completedUnitCount, 5_000_000)
        ProgressSampler.shared.sampleNow()  // after the tick that finished the node and credited the parent
        XCTAssertEqual(root.completedUnitCount, 1, "the parent credited its one unit")
        for snapshot in snapshots.dropLast() {
            XCTAssertTrue([-1, 5_000_000].contains(snapshot.totalUnitCount), "\(snapshot)")
            XCTAssertFalse(snapshot.isFinished, "finished only when the task completed")
        }
        XCTAssertEqual(handled.wait(timeout: .now() + 30), .success)
        waitUntilCompleted(task)
    }

    /// With a session delegate, where swift-corelibs-foundation counts the bytes received (Apple's always does).
    func test_a_download_shows_its_bytes_received_while_it_runs() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(1_000_000)], chunkSize: 65_536, pause: .milliseconds(20))
        defer { server.stop() }
        let counting = URLSession(configuration: .ephemeral, delegate: DownloadDelegate(), delegateQueue: nil)
        defer { counting.invalidateAndCancel() }
        let task = counting.downloadTask(with: URL(string: server.url("big.bin"))!)
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        let snapshots = try XCTUnwrap(snapshotsUntilFinal(of: node))
        let partial = snapshots.filter { $0.completedUnitCount > 0 && !$0.isFinal }
        XCTAssertFalse(partial.isEmpty, "bytes shown before the end: \(snapshots.map(\.completedUnitCount))")
        XCTAssertTrue(partial.allSatisfy { $0.totalUnitCount == 1_000_000 && $0.completedUnitCount < 1_000_000 })
        XCTAssertEqual(snapshots.last?.isFinished, true)
        XCTAssertEqual(snapshots.last?.completedUnitCount, 1_000_000)
        waitUntilCompleted(task)
    }

    func test_a_chunked_download_with_no_length_is_indeterminate_until_it_finishes() throws {
        let server = try TestHTTPServer(
            files: ["stream.bin": bytes(600_000)], chunked: ["stream.bin"], chunkSize: 65_536,
            pause: .milliseconds(20))
        defer { server.stop() }
        let counting = URLSession(configuration: .ephemeral, delegate: DownloadDelegate(), delegateQueue: nil)
        defer { counting.invalidateAndCancel() }
        let task = counting.downloadTask(with: URL(string: server.url("stream.bin"))!)
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        let snapshots = try XCTUnwrap(snapshotsUntilFinal(of: node))
        let running = snapshots.dropLast()
        XCTAssertTrue(running.allSatisfy(\.isIndeterminate), "\(running)")
        XCTAssertTrue(running.contains { $0.completedUnitCount > 0 }, "bytes counted while indeterminate: \(running)")
        let last = try XCTUnwrap(snapshots.last)
        XCTAssertTrue(last.isFinished)
        XCTAssertEqual(last.completedUnitCount, 600_000)
        XCTAssertEqual(last.totalUnitCount, 600_000)
        ProgressSampler.shared.sampleNow()  // after the tick that finished the node and credited the parent
        XCTAssertEqual(root.fractionCompleted, 1)
        waitUntilCompleted(task)
    }

    func test_a_404_fails_the_node_with_the_status_when_asked() throws {
        let server = try TestHTTPServer(files: [:])
        defer { server.stop() }
        let task = session.dataTask(with: URL(string: server.url("missing.jpg"))!)
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1, failsOnHTTPStatus: true)
        task.resume()
        let last = try XCTUnwrap(snapshotsUntilFinal(of: node)?.last)
        XCTAssertTrue(last.isFailed)
        XCTAssertEqual(last.failureDescription?.lowercased(), "http 404 (not found)")
        XCTAssertEqual(task.error == nil, true, "the task itself succeeded")
        waitUntilCompleted(task)
    }

    func test_a_404_finishes_the_node_without_the_option_the_task_succeeded() throws {
        let server = try TestHTTPServer(files: [:])
        defer { server.stop() }
        let task = session.dataTask(with: URL(string: server.url("missing.jpg"))!)
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        let last = try XCTUnwrap(snapshotsUntilFinal(of: node)?.last)
        XCTAssertTrue(last.isFinished)
        XCTAssertFalse(last.isFailed)
        XCTAssertEqual(last.completedUnitCount, 9, "the error page's bytes: \"not here\\n\"")
        waitUntilCompleted(task)
    }

    func test_a_refused_connection_fails_the_node_with_the_tasks_error() throws {
        let url = URL(string: "http://127.0.0.1:\(try TestHTTPServer.refusingPort())/a.bin")!
        let failed = DispatchSemaphore(value: 0)
        let reported = Recorded<String?>(nil)
        let task = session.dataTask(with: url) { _, _, error in
            reported.withLock { $0 = error?.localizedDescription }
            failed.signal()
        }
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        let last = try XCTUnwrap(snapshotsUntilFinal(of: node)?.last)
        XCTAssertEqual(failed.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(last.isFailed)
        XCTAssertNotNil(reported.withLock { $0 })
        XCTAssertEqual(last.failureDescription, reported.withLock { $0 }, "the task's own error")
        waitUntilCompleted(task)
    }

    func test_cancelling_the_tree_cancels_the_task_and_closes_its_connection() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(5_000_000)], chunkSize: 32_768, pause: .milliseconds(20))
        defer { server.stop() }
        let ended = DispatchSemaphore(value: 0)
        let code = Recorded<Int?>(nil)
        let task = session.dataTask(with: URL(string: server.url("big.bin"))!) { _, _, error in
            code.withLock { $0 = (error as? URLError)?.code.rawValue }
            ended.signal()
        }
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        XCTAssertTrue(poll(seconds: 30) { server.hasSent(131_072, of: "big.bin") }, "the transfer began")
        root.cancel()
        XCTAssertTrue(node.isCancelled)
        XCTAssertEqual(ended.wait(timeout: .now() + 30), .success, "the completion handler ran")
        XCTAssertEqual(code.withLock { $0 }, NSURLErrorCancelled)
        waitUntilCompleted(task)
        XCTAssertEqual((task.error as? URLError)?.code, .cancelled)
        XCTAssertTrue(poll(seconds: 30) { server.served.first?.closedByClient == true }, "the server saw it closed")
    }

    func test_a_task_cancelled_from_outside_cancels_its_node() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(5_000_000)], chunkSize: 32_768, pause: .milliseconds(20))
        defer { server.stop() }
        let task = session.dataTask(with: URL(string: server.url("big.bin"))!)
        let root = ProgressNode(totalUnitCount: 2)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        XCTAssertTrue(poll(seconds: 30) { server.hasSent(131_072, of: "big.bin") }, "the transfer began")
        task.cancel()
        let last = try XCTUnwrap(snapshotsUntilFinal(of: node)?.last)
        XCTAssertTrue(last.isCancelled)
        XCTAssertFalse(last.isFailed)
        XCTAssertFalse(root.isCancelled, "cancellation goes down the tree, never up")
    }

    func test_failing_the_node_cancels_the_task_and_stops_following_it() throws {
        let server = try TestHTTPServer(
            files: ["big.bin": bytes(5_000_000)], chunkSize: 32_768, pause: .milliseconds(20))
        defer { server.stop() }
        let ended = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: URL(string: server.url("big.bin"))!) { _, _, _ in ended.signal() }
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        XCTAssertTrue(poll(seconds: 30) { server.hasSent(131_072, of: "big.bin") }, "the transfer began")
        node.fail(CancellationError())
        ProgressSampler.shared.sampleNow()  // the next tick sees the node failed
        XCTAssertEqual(ProgressSampler.shared.status.mirrors, 0, "no longer followed")
        XCTAssertFalse(ProgressSampler.shared.status.isTimerRunning, "the timer stopped with the node")
        XCTAssertEqual(ended.wait(timeout: .now() + 30), .success, "the completion handler ran")
        waitUntilCompleted(task)
        XCTAssertEqual((task.error as? URLError)?.code, .cancelled, "a failed node's work stops")
        XCTAssertTrue(node.isFailed, "still failed, not cancelled over it")
    }

    func test_an_upload_task_counts_the_bytes_it_sends() throws {
        let server = try TestHTTPServer(files: [:])
        defer { server.stop() }
        var request = URLRequest(url: URL(string: server.url("upload"))!)
        request.httpMethod = "POST"
        let answered = DispatchSemaphore(value: 0)
        let task = session.uploadTask(with: request, from: bytes(1_000_000)) { _, _, _ in answered.signal() }
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        task.resume()
        let snapshots = try XCTUnwrap(snapshotsUntilFinal(of: node))
        let last = try XCTUnwrap(snapshots.last)
        XCTAssertTrue(last.isFinished)
        XCTAssertEqual(last.completedUnitCount, 1_000_000, "the bytes sent, not the 7 of the answer")
        XCTAssertEqual(last.totalUnitCount, 1_000_000)
        XCTAssertEqual(answered.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(server.served.map(\.bytesReceived), [1_000_000])
        waitUntilCompleted(task)
    }

    func test_a_task_completed_before_it_is_adopted_ends_its_node_at_once() throws {
        let server = try TestHTTPServer(files: ["a.txt": Data("hello\n".utf8)])
        defer { server.stop() }
        let task = session.dataTask(with: URL(string: server.url("a.txt"))!)
        task.resume()
        waitUntilCompleted(task)
        let root = ProgressNode(totalUnitCount: 1)
        let node = root.addChild(task, withPendingUnitCount: 1)
        XCTAssertTrue(node.isFinished)
        XCTAssertEqual(node.completedUnitCount, 6)
        XCTAssertEqual(ProgressSampler.shared.status.mirrors, 0, "never handed to the sampler")
    }
}

/// A value the threads of a test share.
private final class Recorded<Value: Sendable>: Sendable {
    private let lock: Lock<Value>
    init(_ value: Value) { lock = Lock(value) }
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&$0) } }
}

/// A session delegate for download tasks that keeps nothing: with one, swift-corelibs-foundation counts a
/// download's bytes as they arrive.
private final class DownloadDelegate: NSObject, URLSessionDownloadDelegate, Sendable {
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        try? FileManager.default.removeItem(at: location)
    }
}
