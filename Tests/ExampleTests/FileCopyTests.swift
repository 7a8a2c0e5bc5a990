#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import XCTest

/// Drives the built `file-copy` executable on a temporary tree: nested folders, an empty folder, an empty
/// file, a symbolic link, small files and a 50 MB file.
final class FileCopyTests: XCTestCase {
    private var root: URL!
    private var source: URL { root.appendingPathComponent("source") }
    private var destination: URL { root.appendingPathComponent("copy") }
    private let bigFile = "media/video/big.bin"

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("file-copy-tests-\(UUID().uuidString)")
        let fileManager = FileManager.default
        for folder in ["docs/notes/2024", "media/video", "empty-folder"] {
            try fileManager.createDirectory(
                at: source.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data().write(to: source.appendingPathComponent("docs/empty.txt"))
        try Data("hello\n".utf8).write(to: source.appendingPathComponent("docs/hello.txt"))
        for index in 1...5 {
            try Data(repeating: UInt8(index), count: index * 1_000)
                .write(to: source.appendingPathComponent("docs/notes/2024/note\(index).txt"))
        }
        try fileManager.createSymbolicLink(
            atPath: source.appendingPathComponent("latest").path, withDestinationPath: "docs/hello.txt")
        // 50 MB of random bytes: a copy that loses, repeats or reorders a chunk cannot match.
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        let bytes = try XCTUnwrap(random.read(upToCount: 50_000_000))
        try random.close()
        XCTAssertEqual(bytes.count, 50_000_000)
        try bytes.write(to: source.appendingPathComponent(bigFile))
    }

    override func tearDownWithError() throws {
        if let root {
            // Restore permissions changed by a test, so that everything can be removed.
            _ = chmod(root.path, 0o755)
            try? FileManager.default.removeItem(at: root)
        }
    }

    // MARK: Copying

    func test_copies_a_tree_byte_for_byte() throws {
        let result = try run(source.path, destination.path, "--progress", "plain")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.hasPrefix("Copied 8 files (50 MB) to "), result.standardOutput)
        XCTAssertFalse(result.standardError.contains("\u{1B}"), "plain mode writes no escape codes")
        try assertSameTree(source, destination)
        XCTAssertEqual(
            try FileManager.default.destinationOfSymbolicLink(atPath: destination.path + "/latest"), "docs/hello.txt")
        XCTAssertEqual(try size(of: destination.appendingPathComponent("docs/empty.txt")), 0)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: destination.path + "/empty-folder").isEmpty)
    }

    /// A log names every file, in order, none skipped, each before its own "started" line: "3/8 …" is
    /// printed as the file starts, before its node exists.
    func test_plain_mode_names_every_file_in_order_before_its_started_line() throws {
        // At 100 MB a second the big file takes half a second: frames see it start.
        let result = try run(source.path, destination.path, "--progress", "plain", "--limit", "100M")
        XCTAssertEqual(result.status, 0, result.standardError)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        let numbered = lines.compactMap { line in line.firstMatch(of: /^ *(\d+)\/8\s\s/).map { Int($0.1)! } }
        XCTAssertEqual(numbered, Array(1...8), result.standardError)
        let big = try XCTUnwrap(
            lines.firstIndex { $0.hasSuffix("/8  media/video/big.bin  (50 MB)") }, result.standardError)
        let started = try XCTUnwrap(lines.firstIndex { $0.contains("“big.bin”…: started") }, result.standardError)
        XCTAssertLessThan(big, started)
    }

    // MARK: Cancelling

    /// Ctrl-C in the middle of the 50 MB file: the files already copied stay (complete), the big file's
    /// partial copy is removed, the exit status is 130.
    func test_cancelling_leaves_no_partial_file() throws {
        let process = Process()
        process.executableURL = try executable()
        // The hidden test hook pauses the copy once 10 MB are copied (all within the 50 MB file: the other
        // files hold 21 kB) and says so on standard error.
        process.arguments = [source.path, destination.path, "--progress", "none", "--pause-after-bytes", "10000000"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()

        // Wait for the hook's line: no sleeping, the copy waits for us.
        let saidText = FileCopyProcess.read(errors, until: "paused after")
        XCTAssertTrue(saidText.contains("paused after"), saidText)
        // The copy of the big file is under way, under its temporary name.
        let partial = destination.appendingPathComponent("media/video/.big.bin.file-copy-partial")
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path))
        XCTAssertGreaterThanOrEqual(try size(of: partial), 10_000_000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path + "/" + bigFile))

        process.interrupt()  // SIGINT, as Ctrl-C
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 130)

        let left = try allPaths(in: destination)
        XCTAssertEqual(left.filter { $0.contains("file-copy-partial") }, [], "no partial file is left behind")
        XCTAssertFalse(left.contains(bigFile))
        // What was copied is complete: the small files, byte for byte.
        for path in left where try isRegularFile(destination.appendingPathComponent(path)) {
            XCTAssertEqual(
                try Data(contentsOf: destination.appendingPathComponent(path)),
                try Data(contentsOf: source.appendingPathComponent(path)), path)
        }
        XCTAssertTrue(left.contains("docs/notes/2024/note5.txt"), "the files before the big one were copied")
    }

    /// SIGTERM and SIGHUP (the terminal closed) in the middle of the 50 MB file end the copy at once,
    /// with 143 and 129, and leave no partial file, as a second Ctrl-C does.
    func test_sigterm_and_sighup_leave_no_partial_file_and_exit_143_and_129() throws {
        for (signalNumber, status) in [(SIGTERM, Int32(143)), (SIGHUP, Int32(129))] {
            try? FileManager.default.removeItem(at: destination)
            let child = try ExampleProcess(
                "file-copy", [source.path, destination.path, "--progress", "none", "--pause-after-bytes", "10000000"])
            XCTAssertTrue(child.waitForOutput(containing: "paused after"), child.outputText)
            let partial = destination.appendingPathComponent("media/video/.big.bin.file-copy-partial")
            XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path))
            child.send(signalNumber)
            let exit = child.waitForExit()
            XCTAssertEqual(exit?.reason, .exit)
            XCTAssertEqual(exit?.status, status)
            let left = try allPaths(in: destination)
            XCTAssertEqual(left.filter { $0.contains("file-copy-partial") }, [], "signal \(signalNumber)")
            XCTAssertTrue(left.contains("docs/notes/2024/note5.txt"), "the files before the big one stay")
        }
    }

    // MARK: Errors: exit status 1, nothing deleted, nothing created

    func test_a_missing_source_is_an_error() throws {
        let result = try run(root.appendingPathComponent("no-such-folder").path, destination.path)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.standardError.contains("no such file or directory"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func test_an_existing_destination_is_an_error_and_is_left_alone() throws {
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: destination.appendingPathComponent("keep.txt"))
        let result = try run(source.path, destination.path)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.standardError.contains("already exists"), result.standardError)
        XCTAssertEqual(try allPaths(in: destination), ["keep.txt"])
        XCTAssertEqual(try Data(contentsOf: destination.appendingPathComponent("keep.txt")), Data("mine".utf8))
        // An existing file is refused the same way.
        let file = root.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        XCTAssertEqual(try run(source.path, file.path).status, 1)
        XCTAssertEqual(try Data(contentsOf: file), Data("x".utf8))
    }

    func test_a_destination_that_cannot_be_created_is_an_error() throws {
        let target: String
        var locked: URL?
        if geteuid() == 0 {
            // Permissions do not stop root; sysfs refuses new folders to everyone.
            #if os(Linux)
            target = "/sys/file-copy-test-\(getpid())"
            #else
            throw XCTSkip("runs as root: no unwritable folder to try")
            #endif
        } else {
            let folder = root.appendingPathComponent("locked")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            XCTAssertEqual(chmod(folder.path, 0o555), 0)
            locked = folder
            target = folder.appendingPathComponent("copy").path
        }
        defer { if let locked { _ = chmod(locked.path, 0o755) } }
        let result = try run(source.path, target)
        XCTAssertEqual(result.status, 1)
        let message = result.standardError.lowercased()
        XCTAssertTrue(message.contains("permission denied") || message.contains("not permitted"), message)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))
    }

    func test_an_unreadable_source_file_is_an_error_before_anything_is_copied() throws {
        guard geteuid() != 0 else { throw XCTSkip("runs as root: every file is readable") }
        let secret = source.appendingPathComponent("docs/secret.txt")
        try Data("secret".utf8).write(to: secret)
        XCTAssertEqual(chmod(secret.path, 0o000), 0)
        defer { _ = chmod(secret.path, 0o644) }
        let result = try run(source.path, destination.path)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.standardError.contains("permission denied"), result.standardError)
        XCTAssertTrue(result.standardError.contains("secret.txt"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "nothing is created")
    }

    func test_bad_arguments_exit_with_status_2() throws {
        XCTAssertEqual(try run(source.path).status, 2)
        XCTAssertEqual(try run(source.path, destination.path, "--progress", "fancy").status, 2)
        let help = try run("--help")
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.standardOutput.hasPrefix("usage: file-copy SOURCE DEST"), help.standardOutput)
    }

    // MARK: Helpers

    private func executable() throws -> URL { try FileCopyProcess.executable() }

    private func run(_ arguments: String...) throws -> FileCopyProcess.Result { try FileCopyProcess.run(arguments) }

    private func allPaths(in folder: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: folder.path).sorted()
    }

    private func size(of url: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? -1
    }

    private func isRegularFile(_ url: URL) throws -> Bool {
        try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType == .typeRegular
    }

    /// The same paths, the same kinds of entries, the same bytes, the same symbolic links.
    private func assertSameTree(
        _ expected: URL, _ actual: URL, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let paths = try allPaths(in: expected)
        XCTAssertEqual(try allPaths(in: actual), paths, file: file, line: line)
        for path in paths {
            let one = expected.appendingPathComponent(path)
            let other = actual.appendingPathComponent(path)
            let kind = try FileManager.default.attributesOfItem(atPath: one.path)[.type] as? FileAttributeType
            XCTAssertEqual(
                try FileManager.default.attributesOfItem(atPath: other.path)[.type] as? FileAttributeType, kind, path,
                file: file, line: line)
            if kind == .typeRegular {
                let same = try Data(contentsOf: one) == Data(contentsOf: other)
                XCTAssertTrue(same, "\(path) differs", file: file, line: line)
            }
        }
    }
}
