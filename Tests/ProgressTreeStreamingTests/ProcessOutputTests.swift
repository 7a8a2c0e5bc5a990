#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import TestSupport
import XCTest

@testable import ProgressTreeStreaming
import ProgressTreePlatform

/// A program started by `mountProcess` has its standard output and error read line by line and handed
/// to the mount's output handler, every line of it before the mount ends (Docs/Mounting.md, "Output").
final class ProcessOutputTests: XCTestCase {
    /// The lines handed over, in the order they came.
    private final class Lines: Sendable {
        private let lines = Lock<[ProgressMount.OutputLine]>([])
        func append(_ line: ProgressMount.OutputLine) { lines.withLock { $0.append(line) } }
        var all: [ProgressMount.OutputLine] { lines.withLock { $0 } }
        func texts(from source: ProgressMount.OutputLine.Source) -> [String] {
            all.filter { $0.source == source }.map(\.text)
        }
    }

    private func mountShell(
        _ script: String, under parent: ProgressNode, name: String, lines: Lines? = nil
    ) throws -> ProgressMount {
        var handler: (@Sendable (ProgressMount.OutputLine) -> Void)?
        if let lines { handler = { lines.append($0) } }
        return try parent.mountProcess(
            path: "/bin/sh", arguments: ["-c", script], pendingUnitCount: 1, name: name, outputLines: handler)
    }

    func test_a_programs_output_reaches_the_handler_line_by_line_its_last_line_before_the_mount_ends() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let lines = Lines()
        let mount = try mountShell(
            "echo one; echo two >&2; printf 'three\\r\\n'; printf 'no line break' >&2", under: parent, name: "tool",
            lines: lines)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertEqual(lines.texts(from: .standardOutput), ["one", "three"])
        XCTAssertEqual(lines.texts(from: .standardError), ["two", "no line break"])
        XCTAssertEqual(Set(lines.all.map(\.mountName)), ["tool"])
        XCTAssertEqual((mount.node.failure as? ProgressMount.Failure)?.reason, "tool exited before its work was done")
    }

    /// Without a handler the lines flow to this process's own output, each whole: two programs that write
    /// halves of lines at the same time never mix within a line (they did when the programs shared this
    /// process's standard error).
    func test_without_a_handler_lines_of_two_programs_reach_this_process_whole() throws {
        let capture = try StandardErrorCapture()
        let parent = ProgressNode.discreteProgress(totalUnitCount: 2)
        // Each writes half a line, waits for the other to have written its half, then ends its line.
        let directory = try temporaryDirectory()
        let first = try mountShell(
            "printf 'first: a' >&2; touch \(directory)/a; while [ ! -e \(directory)/b ]; do sleep 0.01; done; echo ' b' >&2",
            under: parent, name: "first")
        let second = try mountShell(
            "while [ ! -e \(directory)/a ]; do sleep 0.01; done; printf 'second: c' >&2; touch \(directory)/b; echo ' d' >&2",
            under: parent, name: "second")
        XCTAssertTrue(first.waitUntilEnded(timeout: .seconds(10)))
        XCTAssertTrue(second.waitUntilEnded(timeout: .seconds(10)))
        let text = capture.finish()
        XCTAssertEqual(Set(text.split(separator: "\n").map(String.init)), ["first: a b", "second: c d"], text)
    }

    func test_a_long_line_is_handed_over_in_pieces_of_at_most_4_KiB_each_cut_between_characters() throws {
        let parent = ProgressNode.discreteProgress(totalUnitCount: 1)
        let lines = Lines()
        // 5,000 two-byte characters (10,000 bytes) on one line, then a short one.
        let mount = try mountShell(
            "i=0; while [ $i -lt 5000 ]; do printf 'é'; i=$((i+1)); done; echo; echo end", under: parent, name: "tool",
            lines: lines)
        XCTAssertTrue(mount.waitUntilEnded(timeout: .seconds(30)))
        let texts = lines.texts(from: .standardOutput)
        XCTAssertEqual(texts.map(\.count), [2048, 2048, 904, 3])
        XCTAssertEqual(texts.dropLast().joined(), String(repeating: "é", count: 5000))
    }

    func test_a_line_splitter_cuts_long_lines_before_a_character_it_would_split() {
        var splitter = LineSplitter(maximumLineLength: 4, longLines: .cut)
        // "ab€cd": € is 3 bytes; the first 4 bytes would end inside it.
        XCTAssertEqual(
            splitter.append(ArraySlice(Array("ab€cd\n".utf8))),
            [.line(Array("ab".utf8)), .line(Array("€c".utf8)), .line(Array("d".utf8))])
        // Bytes that are not UTF-8 are cut anywhere: there is no character to keep whole.
        XCTAssertEqual(splitter.append(ArraySlice([0xFF, 0xFF, 0xFF, 0xFF, 0xFF])), [.line([0xFF, 0xFF, 0xFF, 0xFF])])
        XCTAssertEqual(splitter.remainder(), [0xFF])
    }

    // MARK: Helpers

    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ProcessOutputTests-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}

/// This process's standard error, sent to a pipe and read until `finish()` puts it back.
private final class StandardErrorCapture {
    private let saved: Int32
    private let readEnd: Int32
    private let reading = DispatchGroup()
    private let bytes = Bytes()

    private final class Bytes: Sendable {
        private let storage = Lock<[UInt8]>([])
        func append(_ more: ArraySlice<UInt8>) { storage.withLock { $0 += more } }
        var all: [UInt8] { storage.withLock { $0 } }
    }

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CocoaError(.fileWriteUnknown) }
        saved = fcntl(2, F_DUPFD_CLOEXEC, 3)
        dup2(ends[1], 2)
        close(ends[1])
        readEnd = ends[0]
        let (readEnd, bytes) = (self.readEnd, self.bytes)
        DispatchQueue.global().async(group: reading) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                guard count > 0 else { return }
                bytes.append(buffer[0..<count])
            }
        }
    }

    /// Puts standard error back; what was written to it meanwhile.
    func finish() -> String {
        dup2(saved, 2)  // the pipe's last write end closes: the reader ends
        close(saved)
        reading.wait()
        close(readEnd)
        return String(decoding: bytes.all, as: UTF8.self)
    }
}
