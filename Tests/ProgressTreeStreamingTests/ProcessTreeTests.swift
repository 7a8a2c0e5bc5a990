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

    /// The test's `sleep` argument, which no other process has (300 s and a fraction), to find its sleeps by.
    private var duration = ""

    /// Every test here finds its processes in /proc. Each has a duration of its own; its sleeps still running
    /// when it ends are killed, whatever its outcome.
    override func setUpWithError() throws {
        #if !os(Linux)
        throw XCTSkip("the processes are found in /proc")
        #else
        let duration = "300.\(UInt32.random(in: 100_000...999_999))\(getpid() % 1000)"
        self.duration = duration
        addTeardownBlock { [self] in killSleeps(duration) }
        #endif
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

    /// Ends every sleep of `duration` still running.
    private func killSleeps(_ duration: String) {
        for pid in sleeps(duration) { kill(pid, SIGKILL) }
    }

    /// Mounts a shell running `script` under `parent`. When the test ends, the shell is killed if the mount
    /// has not reaped it yet (until then its process id is still the shell's).
    private func mountShell(_ script: String, under parent: ProgressNode) throws -> ProgressMount {
        let mount = try parent.mountProcess(
            path: "/bin/sh", arguments: ["-c", script], pendingUnitCount: 1, name: "tool", outputLines: { _ in })
        let program = try XCTUnwrap(mount.processIdentifier)
        addTeardownBlock { if mount.exitDescription == nil { kill(program, SIGKILL) } }
        return mount
    }

    func test_cancelling_a_mount_ends_the_programs_descendants_within_two_seconds() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try mountShell("sleep \(duration) & sleep \(duration); wait", under: parent)
        let program = try XCTUnwrap(mount.processIdentifier)
        wait("both sleeps run") { sleeps(duration).count == 2 }
        XCTAssertEqual(getpgid(program), program, "the program leads a process group of its own")
        for pid in sleeps(duration) { XCTAssertEqual(getpgid(pid), program, "a sleep is in the program's group") }
        parent.cancel()
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after the cancel")
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(5)))
        XCTAssertTrue(mount.node.isCancelled)
    }

    /// A tool whose background child outlives it: the child ends with the mount, which then ends at
    /// once instead of waiting for the streams the child held.
    func test_a_programs_descendant_that_outlives_it_ends_when_the_mount_ends() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        // The sleep holds the tool's output and channel: before, the mount closed them a second after the
        // tool's exit and the sleep ran on.
        let mount = try mountShell("sleep \(duration) & echo started", under: parent)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after the mount ended")
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "tool exited before its work was done")
    }

    /// The watcher of a program's group (a child of this process) is reaped once its work is done: the
    /// mount leaves neither a process nor a zombie behind.
    func test_the_watcher_of_a_programs_group_is_reaped_after_the_group_ended() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = try mountShell("exit 0", under: parent)
        let group = try XCTUnwrap(mount.processIdentifier)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        // The watcher waits its grace (1 s) before its SIGKILL; then the mount reaps it.
        XCTAssertTrue(
            poll(seconds: 3) { childrenOfThisProcess(inGroup: group).isEmpty },
            "children of this process in the ended group: \(childrenOfThisProcess(inGroup: group))")
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
        try mountAndWaitToBeKilled { parent in
            try mountShell("sleep \(duration) & sleep \(duration); wait", under: parent)
        }
    }

    /// `kill -9` of the process that mounted a shell: the shell and both its sleeps end (the sleeps were
    /// re-parented to init and ran on).
    func test_a_programs_descendants_end_when_the_process_that_mounted_it_is_killed() throws {
        let (helper, shell) = try startMountingHelper(
            running: "ProgressTreeStreamingTests.ProcessTreeTests/test_helper_mounting_a_tree",
            environment: [Self.parentRoleVariable: duration])
        XCTAssertGreaterThan(shell, 0)
        wait("both sleeps run") { sleeps(duration).count == 2 }
        kill(helper.processIdentifier, SIGKILL)
        // From /proc rather than `waitUntilExit()`, which need not return while a descendant holds what
        // Foundation watches the helper by (it did not, before the sleeps ended with the helper).
        wait("the helper ended") { !isRunning(helper.processIdentifier) }
        XCTAssertTrue(
            poll(seconds: Self.limit) { sleeps(duration).isEmpty && !isRunning(shell) },
            "sleeps \(sleeps(duration)) still run \(Self.limit) s after their mounting process was killed")
    }
}
