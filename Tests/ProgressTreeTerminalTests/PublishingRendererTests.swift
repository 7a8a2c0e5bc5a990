#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import TestSupport
import XCTest

@testable import ProgressTreeTerminal

/// A renderer started with `PROGRESSTREE_FD` publishes to that descriptor instead of drawing (Docs/Mounting.md).
final class PublishingRendererTests: XCTestCase {
    func test_a_renderer_with_progresstree_fd_publishes_instead_of_drawing_and_takes_commands() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let (child, parentEnd) = (ends[0], ends[1])
        let output = VirtualTerminal(columns: 80, rows: 24, isTerminal: true)
        let (root, first, _) = makeSyncTree()
        let renderer = makeTestRenderer(
            root, mode: .live, output: output, environment: ["NO_COLOR": "1", "PROGRESSTREE_FD": "\(child)"])
        XCTAssertTrue(renderer.isPublishing)
        XCTAssertEqual(renderer.mode, .none)
        let album = ProgressNode.discreteProgress(totalUnitCount: 2)
        let mount = album.mount(
            fileDescriptor: parentEnd, commandDescriptor: parentEnd, pendingUnitCount: 2, name: "child")
        renderer.start()
        first.completedUnitCount = 5
        renderer.drawFrame()
        // The mount reads on its own thread: each wait has a deadline of its own, long enough for a
        // sanitized run on a loaded machine, and says when it ran out.
        XCTAssertTrue(poll(seconds: 60) { mount.node.children.first?.completedUnitCount == 5 }, "the line of 5")
        XCTAssertEqual(mount.node.localizedDescription, "child: Sync")
        XCTAssertEqual(mount.node.children.map(\.localizedDescription), ["a.txt", "b.txt"])
        XCTAssertEqual(album.fractionCompleted, 0.25)  // 2 × (1 × 0.5) / 2 / 2
        album.cancel()  // back to the child's tree, through the renderer's publisher
        XCTAssertTrue(poll(seconds: 60) { root.isCancelled }, "the cancel command applied")
        renderer.stop()
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(60)))
        XCTAssertTrue(output.writes.isEmpty, "nothing drawn: \(output.writes)")
        close(child)
    }
}

/// The publisher's count of the property values it could not write is the renderer's too (issue 49, item
/// 5: it could not be reached from `TerminalRenderer`).
final class PublishingDiagnosticsTests: XCTestCase {
    private enum Rate: WireProgressProperty {
        static let wireName = "rate"
        static var defaultValue: Double { 0 }
        static var defaultSummary: Double { 0 }
        static func reduce(into summary: inout Double, value: Double) { summary += value }
        static func merge(_ a: Double, _ b: Double) -> Double { a + b }
    }

    func test_a_publishing_renderer_reports_the_values_its_publisher_left_out() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let output = VirtualTerminal(columns: 80, rows: 24, isTerminal: true)
        let (root, first, _) = makeSyncTree()
        first[Rate.self] = .nan
        let renderer = makeTestRenderer(
            root, mode: .live, output: output, environment: ["NO_COLOR": "1", "PROGRESSTREE_FD": "\(ends[0])"])
        XCTAssertTrue(renderer.isPublishing)
        renderer.start()
        renderer.drawFrame()
        renderer.stop()
        XCTAssertGreaterThanOrEqual(renderer.diagnostics.skippedProperties, 1)
    }
}
