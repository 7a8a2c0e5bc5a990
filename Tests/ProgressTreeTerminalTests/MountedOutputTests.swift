#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import ProgressTreeStreaming
import TestSupport
import XCTest

@testable import ProgressTreeTerminal

/// What a mounted program writes reaches the screen through the renderer (`outputLines: renderer.print`):
/// above the live area, after the mount's name, cleaned, whole and all of it; and a failed mount's line
/// says what it knows (Docs/Mounting.md, Docs/Terminal.md).
final class MountedOutputTests: XCTestCase {
    private func mountShell(
        _ script: String, under parent: ProgressNode, name: String, renderer: TerminalRenderer
    ) throws -> ProgressMount {
        try parent.mountProcess(
            path: "/bin/sh", arguments: ["-c", script], pendingUnitCount: 1, name: name, outputLines: renderer.print)
    }

    func test_a_mounted_programs_lines_show_above_the_live_area_after_its_name_cleaned_and_all_of_them() throws {
        let terminal = VirtualTerminal(columns: 70, rows: 12)
        let album = makeRoot("Album", total: 2)
        let done = makeChild("local", total: 1, parent: album)
        let renderer = makeTestRenderer(album, output: terminal)
        renderer.drawFrame()
        let mount = try mountShell(
            "echo 'first line' >&2; printf 'red \\033[31mtext\\n' >&2; printf 'last, no line break' >&2",
            under: album, name: "tool", renderer: renderer)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        done.completedUnitCount = 1
        renderer.drawFrame()
        renderer.stop()
        // Every line, in order, above the final frame, and nothing of an earlier frame between them.
        XCTAssertEqual(
            terminal.allLines,
            [
                "[tool] first line",
                "[tool] red  [31mtext",
                "[tool] last, no line break",
                // Steady columns: the plan of the first frame, made while the root ran, keeps room for its
                // throughput and time remaining at the end of the line, blank in the final frame.
                "• Album · 1 failed  ██████████░░░░░░░░░░  50% 1 of 2",
                "  ✓ local           ████████████████████ 100% 1 of 1",
                "! 1 failed: tool exited before its work was done",
            ])
        XCTAssertFalse(terminal.writes.joined().contains("\u{1B}[31m"), "no colour change reaches the terminal")
    }

    func test_in_plain_mode_a_mounted_programs_lines_are_printed_after_its_name_and_a_failed_mount_shows_no_count()
        throws
    {
        let output = VirtualTerminal(columns: 100, rows: 100, isTerminal: false)
        let album = makeRoot("Album", total: 2)
        let renderer = makeTestRenderer(album, mode: .plain, output: output)
        renderer.drawFrame()
        let mount = try mountShell("echo hello; exit 3", under: album, name: "worker 1", renderer: renderer)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Album: started, 0 of 2",
                "[worker 1] hello",
                // Never "0 of -1": the mount never learned how much work there was.
                "[   %] Album › worker 1: failed: worker 1 exited with status 3",
                "1 failed: worker 1 exited with status 3",
            ])
    }

    /// A worker that is itself mounted (its renderer publishes) writes what it prints to its output as
    /// lines, where its own parent reads them: the lines of a chain of mounts reach the top.
    func test_a_publishing_renderer_writes_what_it_prints_to_its_output_as_lines() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        defer { ends.forEach { close($0) } }
        let output = VirtualTerminal(columns: 80, rows: 24, isTerminal: false)
        let root = makeRoot("Worker", total: 1)
        let renderer = makeTestRenderer(root, output: output, environment: ["PROGRESSTREE_FD": "\(ends[0])"])
        XCTAssertTrue(renderer.isPublishing)
        renderer.print("saved\nIMG_0001.jpg")
        renderer.print(ProgressMount.OutputLine(source: .standardError, text: "no date\u{7}", mountName: "sub 2"))
        XCTAssertEqual(output.writes, ["saved\nIMG_0001.jpg\n", "[sub 2] no date \n"])
    }
}
