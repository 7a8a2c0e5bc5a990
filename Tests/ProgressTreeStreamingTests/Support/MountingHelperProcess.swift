#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import ProgressTreePlatform
import ProgressTreeStreaming
import TestSupport
import XCTest

/// What a mounting helper writes on its output once its program runs, before the program's process id.
private let mountedPrefix = "mounted: "

extension XCTestCase {
    /// Starts this test binary again as a helper process that runs only `test` (`Target.Class/test_name`, a
    /// test that calls `mountAndWaitToBeKilled(_:)`), with `environment` added to this process's; reads the
    /// helper's output (at most 30 s) up to its line `mounted: PID`, and returns the helper and that process
    /// id, for the tests of what becomes of a mounted program when the process that mounted it is killed.
    ///
    /// Nothing outlives the test: when it ends, whatever its outcome, the mounted program is killed if it
    /// still runs, the helper too, and the helper is reaped (a failure if it is not within 10 s).
    func startMountingHelper(
        running test: String, environment: [String: String], file: StaticString = #filePath, line: UInt = #line
    ) throws -> (helper: Process, mounted: Int32) {
        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        helper.arguments = [test]
        helper.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        helper.standardOutput = output
        helper.standardError = FileHandle.nullDevice
        try helper.run()
        addTeardownBlock {
            if helper.isRunning { kill(helper.processIdentifier, SIGKILL) }
            // Foundation reaps the helper (and then says it no longer runs) once its end is seen.
            if !poll(seconds: 10, until: { !helper.isRunning }) {
                XCTFail("the helper running \(test) was not reaped", file: file, line: line)
            }
        }
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains(mountedPrefix), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        let said = try XCTUnwrap(
            text.split(separator: "\n").first { $0.hasPrefix(mountedPrefix) }, text, file: file, line: line)
        let mounted = try XCTUnwrap(Int32(said.dropFirst(mountedPrefix.count)), file: file, line: line)
        // Runs before the block above (the last added runs first). Not above 0, no process: kill would
        // signal a whole group.
        addTeardownBlock { if mounted > 0 && isRunning(mounted) { kill(mounted, SIGKILL) } }
        return (helper, mounted)
    }

    /// The helper's side of `startMountingHelper(running:environment:)`: mounts a program with `mount`,
    /// under a new parent, writes `mounted: PID` (the program's process id, 0 for none) on the output, and
    /// waits to be killed (at most 60 s).
    func mountAndWaitToBeKilled(_ mount: (ProgressNode) throws -> ProgressMount) rethrows {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mounted = try mount(parent)
        _ = FileDescriptor.sendAll(1, Array("\(mountedPrefix)\(mounted.processIdentifier ?? 0)\n".utf8))
        mounted.waitUntilEnded(timeout: .seconds(60))
    }
}

/// Whether `pid` runs (and is no zombie), from /proc.
func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    return !stat.contains(") Z ")
}
