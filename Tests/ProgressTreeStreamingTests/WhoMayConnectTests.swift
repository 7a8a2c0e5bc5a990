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

/// Who may connect to a published tree (Docs/Mounting.md, "Who may connect"): a Unix-domain socket of
/// this user's, TCP on loopback unless asked otherwise, a bound on connections, and readers that stall or
/// send oversized commands cut off and counted.
final class WhoMayConnectTests: XCTestCase {
    /// A directory of this user's with `mode`, removed after the test.
    private func directory(mode: mode_t = 0o700) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pt-\(UUID().uuidString.prefix(8))")
            .path
        XCTAssertEqual(mkdir(path, 0o700), 0)
        XCTAssertEqual(chmod(path, mode), 0)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// Reads `descriptor` until it ends or `seconds` pass without a byte; what came.
    private func readAll(_ descriptor: Int32, seconds: Int32 = 5) -> String {
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Polling.waitReady(descriptor, milliseconds: seconds * 1000) {
            let count = FileDescriptor.read(descriptor, &buffer)
            guard count > 0 else { break }
            text += buffer[0..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Reads `descriptor` until its first line has come whole (or it ends, or `seconds` pass without a
    /// byte); what came.
    private func readFirstLine(_ descriptor: Int32, seconds: Int32 = 60) -> String {
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !text.contains(0x0A), Polling.waitReady(descriptor, milliseconds: seconds * 1000) {
            let count = FileDescriptor.read(descriptor, &buffer)
            guard count > 0 else { break }
            text += buffer[0..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes a new socket's send buffer holds (Linux: net.core.wmem_default; at least 212,992 assumed).
    private var socketSendBuffer: Int {
        let text = try? String(contentsOfFile: "/proc/sys/net/core/wmem_default", encoding: .utf8)
        return max(212_992, text.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0)
    }

    private func listenerOptions(maximumConnections: Int = 8, stallTimeout: Duration = .seconds(10))
        -> ProgressListener.Options
    {
        var options = ProgressListener.Options()
        options.maximumConnections = maximumConnections
        options.stallTimeout = stallTimeout
        options.publisher.interval = .milliseconds(10)
        return options
    }

    // MARK: Unix-domain sockets

    func test_a_tree_is_mounted_through_a_unix_socket_of_mode_0600_and_commands_come_back() throws {
        let path = try directory() + "/tree.sock"
        let job = ProgressNode.discreteProgress(totalUnitCount: 10)
        job.localizedDescription = "Rendering"
        let listener = try ProgressListener(job, path: path, options: listenerOptions())
        var status = stat()
        XCTAssertEqual(lstat(path, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFSOCK)
        let album = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try album.mountConnection(path: path, pendingUnitCount: 1, name: "render")
        job.completedUnitCount = 4
        wait("the tree") { mount.node.completedUnitCount == 4 }
        XCTAssertEqual(mount.node.localizedDescription, "render: Rendering")
        XCTAssertEqual(listener.connectionCount, 1)
        album.cancel()
        wait("the job cancelled") { job.isCancelled }
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        listener.finish()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the socket's path is removed")
        XCTAssertEqual(listener.diagnostics.acceptedConnections, 1)
    }

    func test_a_socket_in_a_directory_others_may_write_in_is_refused_on_both_sides() throws {
        let open = try directory(mode: 0o777)
        let job = ProgressNode.discreteProgress(totalUnitCount: 1)
        XCTAssertThrowsError(try ProgressListener(job, path: open + "/tree.sock")) { error in
            guard case .unsafePath(_, let why)? = error as? StreamSetupError else { return XCTFail("\(error)") }
            XCTAssertEqual(why, "others may write in \(open) (it needs mode 700 or 755)")
        }
        // A socket someone could have put there is not connected to either.
        let safe = try directory()
        let listener = try ProgressListener(job, path: safe + "/tree.sock")
        defer { listener.finish() }
        XCTAssertEqual(chmod(safe, 0o777), 0)
        XCTAssertThrowsError(
            try ProgressNode.discreteProgress(totalUnitCount: 1).mountConnection(
                path: safe + "/tree.sock", pendingUnitCount: 1))
        XCTAssertEqual(chmod(safe, 0o700), 0)
    }

    func test_the_private_socket_path_is_in_a_directory_only_this_user_can_enter() throws {
        let path = try ProgressSocket.privateSocketPath(named: "x.sock")
        XCTAssertTrue(path.hasSuffix("/x.sock"))
        var status = stat()
        XCTAssertEqual(lstat(String(path.dropLast("/x.sock".count)), &status), 0)
        XCTAssertEqual(status.st_uid, geteuid())
        XCTAssertEqual(status.st_mode & 0o077, 0)
    }

    // MARK: TCP

    func test_tcp_listens_on_the_loopback_interface_unless_told_otherwise() throws {
        let (loopback, _) = try ProgressSocket.listen()
        defer { ProgressSocket.close(loopback) }
        XCTAssertEqual(boundAddress(loopback), "127.0.0.1")
        let (everywhere, _) = try ProgressSocket.listen(address: .unprotected("0.0.0.0"))
        defer { ProgressSocket.close(everywhere) }
        XCTAssertEqual(boundAddress(everywhere), "0.0.0.0")
        let job = ProgressNode.discreteProgress(totalUnitCount: 4)
        let listener = try ProgressListener(job, options: listenerOptions())
        defer { listener.finish() }
        let mount = try ProgressNode.discreteProgress(totalUnitCount: 1).mountConnection(
            host: "127.0.0.1", port: try XCTUnwrap(listener.port), pendingUnitCount: 1, name: "tcp")
        job.completedUnitCount = 3
        wait("the tree") { mount.node.completedUnitCount == 3 }
    }

    private func boundAddress(_ descriptor: Int32) -> String {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var text = [CChar](repeating: 0, count: 64)
        inet_ntop(AF_INET, &address.sin_addr, &text, 64)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: What no reader can do

    func test_connections_beyond_the_bound_are_closed_at_once_and_counted() throws {
        let path = try directory() + "/tree.sock"
        let job = ProgressNode.discreteProgress(totalUnitCount: 4)
        let listener = try ProgressListener(job, path: path, options: listenerOptions(maximumConnections: 2))
        defer { listener.finish() }
        let first = try ProgressSocket.connect(path: path)
        let second = try ProgressSocket.connect(path: path)
        defer { [first, second].forEach { ProgressSocket.close($0) } }
        wait("two connections") { listener.connectionCount == 2 }
        let third = try ProgressSocket.connect(path: path)
        defer { ProgressSocket.close(third) }
        XCTAssertEqual(readAll(third), "", "closed without a line")
        XCTAssertEqual(listener.diagnostics.refusedConnections, 1)
        XCTAssertEqual(listener.connectionCount, 2)
        // Its publisher was counted before it started: its first line may still be on its way.
        XCTAssertTrue(readFirstLine(first).hasPrefix(#"{"v":1,"#))
    }

    func test_a_reader_that_sends_a_command_line_over_4_KiB_is_cut_off_and_counted() throws {
        let path = try directory() + "/tree.sock"
        let job = ProgressNode.discreteProgress(totalUnitCount: 4)
        let listener = try ProgressListener(job, path: path, options: listenerOptions())
        defer { listener.finish() }
        let hostile = try ProgressSocket.connect(path: path)
        defer { ProgressSocket.close(hostile) }
        wait("the connection") { listener.connectionCount == 1 }
        XCTAssertTrue(FileDescriptor.sendAll(hostile, [UInt8](repeating: 0x7B, count: 5_000)))  // no line break
        wait("cut off") { listener.diagnostics.oversizedCommands == 1 }
        XCTAssertEqual(listener.connectionCount, 0)
        _ = readAll(hostile)  // ends: the listener closed it
        XCTAssertFalse(job.isCancelled)
    }

    /// A reader that takes nothing is cut off after the stall timeout, while another goes on reading.
    ///
    /// The reader that goes on is handed the lines in batches it has room for, each taken before the next
    /// comes: no line ever waits for it, so nothing about it depends on how soon its thread gets to read
    /// (under a sanitizer on a loaded machine, a reader kept busy for longer than the stall timeout could
    /// otherwise be cut off too). The one that reads nothing gets the same lines, more than a socket takes.
    func test_a_reader_that_stalls_is_cut_off_and_counted_while_the_others_go_on() throws {
        let path = try directory() + "/tree.sock"
        let job = ProgressNode.discreteProgress(totalUnitCount: 1_000)
        let listener = try ProgressListener(job, path: path, options: listenerOptions(stallTimeout: .seconds(1)))
        defer { listener.finish() }
        let stalled = try ProgressSocket.connect(path: path)  // never read
        defer { ProgressSocket.close(stalled) }
        let album = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try album.mountConnection(path: path, pendingUnitCount: 1, name: "reader")
        wait("both connections", seconds: 60) { listener.connectionCount == 2 }
        // Batches of 20 lines of 2 KB (40 KB), twice as many bytes in all as a socket's send buffer holds.
        let batchSize = 20
        let batches = 2 * socketSendBuffer / (batchSize * 2_000) + 1
        for batch in 1...batches {
            for _ in 0..<batchSize {
                makeNamedNode(String(repeating: "x", count: 2_000), total: 1_000, parent: job)
            }
            wait("batch \(batch) mounted", seconds: 60) { mount.node.children.count == batch * batchSize }
        }
        wait("the stalled reader cut off", seconds: 60) { listener.diagnostics.stalledConnections != 0 }
        XCTAssertEqual(listener.diagnostics.stalledConnections, 1)
        job.completedUnitCount = 500
        wait("the other reader goes on", seconds: 60) { mount.node.completedUnitCount == 500 }
        XCTAssertEqual(listener.connectionCount, 1)
        XCTAssertFalse(job.isCancelled)
    }
}
