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

/// `photo-import --workers N` (Docs/Mounting.md): worker processes of the same binary, mounted as one tree.
final class WorkerExampleTests: XCTestCase {
    /// The worker processes of `parent` (from /proc: Linux only), by their `--worker I/N` argument.
    private func workers(of parent: Int32) -> [String: Int32] {
        var result: [String: Int32] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? []
        for task in tasks {
            let children = (try? String(contentsOfFile: "/proc/\(parent)/task/\(task)/children", encoding: .utf8)) ?? ""
            for pid in children.split(separator: " ").compactMap({ Int32($0) }) {
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
                let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                if let index = arguments.firstIndex(of: "--worker"), index + 1 < arguments.count {
                    result[arguments[index + 1]] = pid
                }
            }
        }
        return result
    }

    /// Waits (at most 15 s) until `parent` has `count` workers.
    private func waitForWorkers(_ count: Int, of parent: Int32) -> [String: Int32] {
        let deadline = Date().addingTimeInterval(15)
        var pids = workers(of: parent)
        while pids.count < count && Date() < deadline {
            usleep(5_000)
            pids = workers(of: parent)
        }
        return pids
    }

    private func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !stat.contains(") Z ")
    }

    func test_workers_import_their_slices_into_one_tree_in_the_wire_format() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "3", "--photos", "6", "--speed", "20", "--progress", "json"])
        let exit = child.waitForExit(timeout: 30)
        XCTAssertEqual(exit?.status, 0, child.outputText)
        XCTAssertTrue(child.outputText.contains("Imported 6 photos with 3 workers"), child.outputText)
        var last: [Int: [String: Any]] = [:]
        for line in child.outputText.split(separator: "\n") where line.hasPrefix("{") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["v"] as? Int, 1)
            last[try XCTUnwrap(object["id"] as? Int)] = object
        }
        XCTAssertEqual(last[1]?["state"] as? String, "finished")
        let workers = last.values.filter { ($0["parent"] as? Int) == 1 }
        XCTAssertEqual(
            Set(workers.compactMap { $0["name"] as? String }),
            ["worker 1: Importing 2 photos", "worker 2: Importing 2 photos", "worker 3: Importing 2 photos"])
        XCTAssertEqual(workers.map { $0["pending"] as? Int }, [2, 2, 2])
        XCTAssertTrue(workers.allSatisfy { $0["state"] as? String == "finished" })
    }

    func test_kill_9_on_one_worker_fails_it_while_the_others_go_on() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "3", "--photos", "9", "--speed", "1", "--progress", "plain"])
        let pids = waitForWorkers(3, of: child.process.processIdentifier)
        let second = try XCTUnwrap(pids["1/3"], "\(pids)")
        kill(second, SIGKILL)
        let exit = child.waitForExit(timeout: 30)
        let text = child.outputText
        XCTAssertEqual(exit?.status, 1, text)
        XCTAssertTrue(text.contains("failed: worker 2 exited with signal 9"), text)
        XCTAssertTrue(text.contains("worker 1: Importing 3 photos: done, 3 of 3"), text)
        XCTAssertTrue(text.contains("worker 3: Importing 3 photos: done, 3 of 3"), text)
        XCTAssertTrue(text.contains(" of 9 photos with 3 workers in "), text)
        XCTAssertTrue(text.contains(" s; 1 worker failed"), text)
        // The photos the dead worker's failure cancelled are part of that failure: nobody cancelled them.
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("1 failed: worker 2 exited with signal 9"), text)
        XCTAssertFalse(lines.contains { $0.hasPrefix("1 failed,") }, text)
    }

    func test_ctrl_c_on_the_parent_cancels_every_worker_and_exits_130() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "2", "--photos", "100", "--speed", "0.5", "--progress", "plain"])
        let pids = waitForWorkers(2, of: child.process.processIdentifier)
        XCTAssertEqual(pids.count, 2, "\(pids)")
        XCTAssertTrue(child.waitForOutput(containing: "worker 2: Importing 50 photos"), child.outputText)
        child.send(SIGINT)  // the parent only: the cancellation reaches the workers as commands
        let exit = child.waitForExit(timeout: 30)
        XCTAssertEqual(exit?.status, 130, child.outputText)
        XCTAssertTrue(child.outputText.contains("worker 1: Importing 50 photos: cancelled"), child.outputText)
        XCTAssertTrue(child.outputText.contains("worker 2: Importing 50 photos: cancelled"), child.outputText)
        for pid in pids.values { XCTAssertFalse(isAlive(pid), "worker \(pid) still running") }
    }

    func test_keys_p_and_c_in_the_parent_reach_the_workers() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "2", "--photos", "40", "--speed", "0.5"], terminal: true, columns: 120,
            rows: 40)
        let pids = waitForWorkers(2, of: child.process.processIdentifier)
        XCTAssertEqual(pids.count, 2, "\(pids)")
        XCTAssertTrue(child.waitForOutput(containing: "worker 2: Importing 20 photos"), child.outputText)
        let before = child.outputData.count
        child.type("p")
        XCTAssertTrue(
            child.waitForOutput(containing: "‖ worker 1: Importing 20 photos", after: before),
            child.output(after: before))
        XCTAssertTrue(
            child.waitForOutput(containing: "‖ worker 2: Importing 20 photos", after: before),
            child.output(after: before))
        child.type("c")
        let exit = child.waitForExit(timeout: 30)
        XCTAssertEqual(exit?.status, 3, "cancelled with c: no signal, not 130; " + child.outputText)
        XCTAssertTrue(child.outputText.contains("Cancelled at"), child.outputText)
        for pid in pids.values { XCTAssertFalse(isAlive(pid), "worker \(pid) still running") }
    }

    /// A directory for `--destination`, removed after the test.
    private func destination() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("photos-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// `kill -9` of the parent: every worker ends within 2 s (its reader went away, and on Linux it gets
    /// SIGTERM), and none leaves a partial photo behind. (They went on running, reparented to init.)
    func test_kill_9_on_the_parent_ends_every_worker_within_2_seconds_leaving_no_partial_photo() throws {
        let directory = try destination()
        let child = try ExampleProcess(
            "photo-import",
            ["--workers", "3", "--photos", "60", "--speed", "1", "--destination", directory, "--progress", "plain"])
        let pids = waitForWorkers(3, of: child.process.processIdentifier)
        XCTAssertEqual(pids.count, 3, "\(pids)")
        defer { for pid in pids.values { kill(pid, SIGKILL) } }
        let partial = {
            (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".part") } ?? []
        }
        XCTAssertTrue(child.wait(timeout: 15) { partial().count >= 3 }, "photos being written")
        child.send(SIGKILL)
        let killed = Date()
        var running = Array(pids.values)
        while !running.isEmpty && Date().timeIntervalSince(killed) < 2 {
            usleep(10_000)
            running = running.filter(isAlive)
        }
        XCTAssertEqual(running, [], "workers still running 2 s after the parent was killed")
        XCTAssertEqual(partial(), [])
    }

    /// What a worker prints (here the photos it saved) shows above the parent's live area after the
    /// worker's name, and no line of an earlier frame is left behind above the final one.
    func test_what_a_worker_prints_shows_above_the_parents_live_area_after_its_name() throws {
        let directory = try destination()
        let child = try ExampleProcess(
            "photo-import", ["--workers", "2", "--photos", "4", "--speed", "20", "--destination", directory],
            terminal: true, columns: 120, rows: 30)
        XCTAssertEqual(child.waitForExit(timeout: 30)?.status, 0, child.outputText)
        let screen = VirtualTerminal(columns: 120, rows: 30)
        screen.write(child.outputText)
        let lines = screen.allLines
        let printed = lines.prefix { !$0.contains("Importing 4 photos") }
        XCTAssertEqual(
            Set(printed),
            Set([(1, 1), (1, 3), (2, 2), (2, 4)].map { "[worker \($0.0)] Saved IMG_000\($0.1).jpg in \(directory)" }),
            lines.joined(separator: "\n"))
        XCTAssertEqual(printed.count, 4, lines.joined(separator: "\n"))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
            ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0003.jpg", "IMG_0004.jpg"])
    }

    /// The album's count says how many photos the workers imported so far, frame after frame (a mount
    /// credits its photos to the album only when its worker ends: the album's own count read "0 of 12"
    /// while the workers' lines said "3 of 4"), and it only grows.
    func test_the_albums_count_adds_up_the_photos_the_workers_imported_in_every_frame() throws {
        let child = try ExampleProcess(
            "photo-import", ["--workers", "3", "--photos", "12", "--speed", "10"], terminal: true, columns: 100,
            rows: 30)
        XCTAssertEqual(child.waitForExit(timeout: 30)?.status, 0, child.outputText)
        let screen = VirtualTerminal(columns: 100, rows: 30)
        var albumCounts: [Int] = []
        var workersBefore = 0
        for frame in child.outputText.split(separator: "\u{1B}[?2026l") {
            screen.write(String(frame))
            let lines = screen.visibleLines
            guard let album = lines.first(where: { $0.contains("Importing 12 photos") }),
                let count = album.firstMatch(of: /% (\d+) of 12/).map({ Int($0.1)! })
            else { continue }
            // Counted as the workers' lines change, it may be a frame behind them, never more.
            XCTAssertGreaterThanOrEqual(count, workersBefore, lines.joined(separator: "\n"))
            workersBefore = lines.compactMap {
                $0.firstMatch(of: /worker \d: Importing 4 photos .*% (\d) of 4/).map { Int($0.1)! }
            }.reduce(0, +)
            albumCounts.append(count)
        }
        XCTAssertEqual(albumCounts.last, 12, child.outputText)
        XCTAssertEqual(albumCounts, albumCounts.sorted(), "\(albumCounts)")
        XCTAssertTrue(albumCounts.contains { $0 > 0 && $0 < 12 }, "\(albumCounts)")
    }

    /// The ssh recipe of Docs/Mounting.md without ssh: the program publishes on its standard output and
    /// takes commands on its standard input (`PROGRESSTREE_FD=1,0`); the parent mounts the two pipes.
    func test_a_program_publishing_on_its_standard_streams_is_mounted_and_cancelled_through_them() throws {
        let process = Process()
        process.executableURL = FileCopyProcess.productsDirectory.appendingPathComponent("photo-import")
        process.arguments = ["--photos", "40", "--speed", "0.5"]
        var environment = ProcessInfo.processInfo.environment
        environment["PROGRESSTREE_FD"] = "1,0"
        process.environment = environment
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let album = ProgressNode.discreteProgress(totalUnitCount: 1)
        let mount = album.mount(
            fileDescriptor: dup(output.fileHandleForReading.fileDescriptor),
            commandDescriptor: dup(input.fileHandleForWriting.fileDescriptor), pendingUnitCount: 1, name: "remote")
        try output.fileHandleForReading.close()
        try input.fileHandleForWriting.close()
        // The program's first lines, its root's before its children's: awaited, and said when they never came.
        let deadline = Date().addingTimeInterval(60)
        while mount.node.children.isEmpty && Date() < deadline { usleep(5_000) }
        XCTAssertFalse(mount.node.children.isEmpty, "no child mirrored within 60 s")
        XCTAssertEqual(mount.node.totalUnitCount, 40)
        XCTAssertEqual(mount.node.localizedDescription, "remote: Importing 40 photos")
        album.cancel()  // travels on the program's standard input
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(60)))
        XCTAssertTrue(mount.node.isCancelled)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 3, "cancelled by the parent's command, not by a signal")
        XCTAssertEqual(mount.diagnostics.ignoredLines, 0)
    }
}
