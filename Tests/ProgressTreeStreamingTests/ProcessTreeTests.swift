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

/// The whole process tree of a mounted program ends with it: on a cancel, at the mount's end, and when
/// the process that mounted it dies, `kill -9` included (Docs/Mounting.md, "The program's whole tree").
/// Real processes: `/bin/sh` starting `sleep`s, found in /proc by an argument no other process has.
final class ProcessTreeTests: XCTestCase {
    /// The longest a descendant may outlive what ended its tree (the goal of Docs/Mounting.md).
    private static let limit = 2.0

    /// A `sleep` argument no other process has (300 s and a fraction), to find the sleeps by.
    private func uniqueDuration() -> String {
        "300.\(UInt32.random(in: 100_000...999_999))\(getpid() % 1000)"
    }

    /// The live processes whose command line is `sleep <duration>` (zombies have none: not counted).
    private func sleeps(_ duration: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard arguments.count == 2, arguments[0].hasSuffix("sleep"), arguments[1] == duration else { return nil }
            return pid
        }
    }

    /// Ends every sleep of `duration` still running, whatever the test's outcome.
    private func killSleeps(_ duration: String) {
        for pid in sleeps(duration) { kill(pid, SIGKILL) }
    }

    private func mountShell(_ script: String, under parent: ProgressNode) throws -> ProgressMount {
        try parent.mountProcess(
            path: "/bin/sh", arguments: ["-c", script], pendingUnitCount: 1, name: "tool", outputLines: { _ in })
    }

    func test_cancelling_a_mount_ends_the_programs_descendants_within_two_seconds() throws {
        #if !os(Linux)
        throw XCTSkip("the sleeps are found in /proc")
        #else
        let duration = uniqueDuration()
        defer { killSleeps(duration) }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try mountShell("sleep \(duration) & sleep \(duration); wait", under: parent)
        let program = try XCTUnwrap(mount.processIdentifier)
        defer { if mount.exitDescription == nil { kill(program, SIGKILL) } }  // not reaped yet: still its pid
        wait("both sleeps run") { sleeps(duration).count == 2 }
        XCTAssertEqual(getpgid(program), program, "the program leads a process group of its own")
        for pid in sleeps(duration) { XCTAssertEqual(getpgid(pid), program, "a sleep is in the program's group") }
        parent.cancel()
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after the cancel")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(5)))
        XCTAssertTrue(mount.node.isCancelled)
        #endif
    }

    /// A tool whose background child outlives it: the child ends with the mount, which then ends at
    /// once instead of waiting for the streams the child held.
    func test_a_programs_descendant_that_outlives_it_ends_when_the_mount_ends() throws {
        #if !os(Linux)
        throw XCTSkip("the sleeps are found in /proc")
        #else
        let duration = uniqueDuration()
        defer { killSleeps(duration) }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        // The sleep holds the tool's output and channel: before, the mount closed them a second after the
        // tool's exit and the sleep ran on.
        let mount = try mountShell("sleep \(duration) & echo started", under: parent)
        let program = try XCTUnwrap(mount.processIdentifier)
        defer { if mount.exitDescription == nil { kill(program, SIGKILL) } }  // not reaped yet: still its pid
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after the mount ended")
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "tool exited before its work was done")
        #endif
    }

    /// The watcher of a program's group (a child of this process) is reaped once its work is done: the
    /// mount leaves neither a process nor a zombie behind.
    func test_the_watcher_of_a_programs_group_is_reaped_after_the_group_ended() throws {
        #if !os(Linux)
        throw XCTSkip("the watcher is found in /proc")
        #else
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try mountShell("exit 0", under: parent)
        let group = try XCTUnwrap(mount.processIdentifier)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        // The watcher waits its grace (1 s) before its SIGKILL; then the mount reaps it.
        XCTAssertTrue(
            poll(seconds: 3) { childrenOfThisProcess(inGroup: group).isEmpty },
            "children of this process in the ended group: \(childrenOfThisProcess(inGroup: group))")
        #endif
    }

    /// The children of this process (zombies included) whose process group is `group`, with their names.
    private func childrenOfThisProcess(inGroup group: Int32) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard Int32(entry) != nil,
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the name: state, parent, group.
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == getpid(), Int32(fields[2]) == group else { return nil }
            return "\(entry) \(stat[..<close]))"
        }
    }

    // MARK: The parent killed

    /// The role this test binary plays when started by
    /// `test_a_programs_descendants_end_when_the_process_that_mounted_it_is_killed`.
    private static let parentRoleVariable = "PROGRESSTREE_TEST_TREE_MOUNTING_PARENT"

    /// Run as a helper process only: mounts a shell that starts two sleeps of the duration in its
    /// environment, says the shell's process id, and waits to be killed.
    func test_helper_mounting_a_tree() throws {
        guard let duration = ProcessInfo.processInfo.environment[Self.parentRoleVariable] else {
            throw XCTSkip("a helper for another test")
        }
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try mountShell("sleep \(duration) & sleep \(duration); wait", under: parent)
        _ = FileDescriptor.sendAll(1, Array("mounted: \(mount.processIdentifier ?? 0)\n".utf8))
        mount.waitUntilEnded(timeout: .seconds(60))
    }

    /// `kill -9` of the process that mounted a shell: the shell and both its sleeps end (the sleeps were
    /// re-parented to init and ran on).
    func test_a_programs_descendants_end_when_the_process_that_mounted_it_is_killed() throws {
        #if !os(Linux)
        throw XCTSkip("the sleeps are found in /proc")
        #else
        let duration = uniqueDuration()
        defer { killSleeps(duration) }
        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        helper.arguments = ["ProgressTreeStreamingTests.ProcessTreeTests/test_helper_mounting_a_tree"]
        helper.environment = ProcessInfo.processInfo.environment.merging([Self.parentRoleVariable: duration]) { $1 }
        let output = Pipe()
        helper.standardOutput = output
        helper.standardError = FileHandle.nullDevice
        try helper.run()
        defer { if helper.isRunning { kill(helper.processIdentifier, SIGKILL) } }
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("mounted: "), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("mounted: ") }, text)
        let shell = try XCTUnwrap(Int32(line.dropFirst("mounted: ".count)))
        XCTAssertGreaterThan(shell, 0)
        wait("both sleeps run") { sleeps(duration).count == 2 }
        kill(helper.processIdentifier, SIGKILL)
        // From /proc rather than `waitUntilExit()`, which need not return while a descendant holds what
        // Foundation watches the helper by (it did not, before the sleeps ended with the helper).
        wait("the helper ended") { !isRunning(helper.processIdentifier) }
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty && !isRunning(shell) },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after their mounting process was killed")
        #endif
    }

    /// Whether `pid` runs (and is no zombie), from /proc.
    private func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !stat.contains(") Z ")
    }
}
