#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import XCTest

/// file-copy keeps what `cp -a` keeps, checked with `stat` of source and copy: permissions and times of
/// files and directories, owners (as root), the holes of sparse files (allocated blocks), hard links (link
/// counts).
final class FileCopyFidelityTests: XCTestCase {
    private var root: URL!
    private var source: URL { root.appendingPathComponent("source") }
    private var destination: URL { root.appendingPathComponent("copy") }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("file-copy-fidelity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        guard let root else { return }
        for folder in [source, destination] {
            for path in (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? [] {
                _ = chmod(folder.appendingPathComponent(path).path, 0o755)
            }
        }
        try? FileManager.default.removeItem(at: root)
    }

    private func status(of url: URL) throws -> stat {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return status
    }

    private func setTimes(_ url: URL, seconds: Int, nanoseconds: Int) {
        var times = [
            timespec(tv_sec: seconds - 1000, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds),
        ]
        XCTAssertEqual(utimensat(AT_FDCWD, url.path, &times, 0), 0)
    }

    private func copy() throws {
        let child = try ExampleProcess("file-copy", [source.path, destination.path, "--progress", "none"])
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.status, 0, child.outputText)
    }

    func test_directories_keep_their_permissions_and_times_set_after_their_contents() throws {
        let privateFolder = source.appendingPathComponent("private")
        let readOnly = source.appendingPathComponent("read-only")
        for folder in [privateFolder, readOnly] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try Data("inside\n".utf8).write(to: folder.appendingPathComponent("file.txt"))
        }
        XCTAssertEqual(chmod(privateFolder.path, 0o700), 0)
        XCTAssertEqual(chmod(readOnly.path, 0o555), 0)
        XCTAssertEqual(chmod(source.path, 0o750), 0)
        setTimes(privateFolder, seconds: 1_500_000_000, nanoseconds: 123_456_789)
        setTimes(readOnly, seconds: 1_400_000_000, nanoseconds: 987_654_321)
        setTimes(source, seconds: 1_300_000_000, nanoseconds: 5)
        let before = try [privateFolder, readOnly, source].map(status(of:))

        try copy()

        for (original, path) in zip(before, ["private", "read-only", ""]) {
            let copied = try status(of: path.isEmpty ? destination : destination.appendingPathComponent(path))
            XCTAssertEqual(copied.st_mode, original.st_mode, "mode of '\(path)'")
            XCTAssertEqual(copied.st_mtim.tv_sec, original.st_mtim.tv_sec, "modified '\(path)'")
            XCTAssertEqual(copied.st_mtim.tv_nsec, original.st_mtim.tv_nsec, "modified '\(path)'")
            XCTAssertEqual(copied.st_atim.tv_sec, original.st_atim.tv_sec, "accessed '\(path)'")
        }
        XCTAssertEqual(try status(of: destination.appendingPathComponent("private")).st_mode & 0o777, 0o700)
    }

    func test_files_keep_their_permissions_and_times_to_the_nanosecond() throws {
        let file = source.appendingPathComponent("script.sh")
        try Data("#!/bin/sh\n".utf8).write(to: file)
        XCTAssertEqual(chmod(file.path, 0o4751), 0)
        setTimes(file, seconds: 1_600_000_000, nanoseconds: 999_999_999)
        let original = try status(of: file)

        try copy()

        let copied = try status(of: destination.appendingPathComponent("script.sh"))
        XCTAssertEqual(copied.st_mode, original.st_mode)
        XCTAssertEqual(copied.st_mtim.tv_sec, 1_600_000_000)
        XCTAssertEqual(copied.st_mtim.tv_nsec, 999_999_999)
        XCTAssertEqual(copied.st_atim.tv_sec, original.st_atim.tv_sec)
        XCTAssertEqual(copied.st_atim.tv_nsec, original.st_atim.tv_nsec)
    }

    func test_a_sparse_file_keeps_its_holes() throws {
        let file = source.appendingPathComponent("disk.img")
        let descriptor = open(file.path, O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(ftruncate(descriptor, 64 << 20), 0)  // 64 MiB, all hole
        let data = [UInt8](repeating: 0xAB, count: 8192)
        for offset in [1 << 20, 40 << 20] {
            XCTAssertEqual(pwrite(descriptor, data, data.count, off_t(offset)), data.count)
        }
        close(descriptor)
        let original = try status(of: file)
        XCTAssertLessThan(original.st_blocks, 1024, "the source is sparse (blocks of 512 bytes)")

        try copy()

        let copiedFile = destination.appendingPathComponent("disk.img")
        let copied = try status(of: copiedFile)
        XCTAssertEqual(copied.st_size, 64 << 20)
        XCTAssertEqual(copied.st_blocks, original.st_blocks, "the same blocks allocated: the holes stay holes")
        XCTAssertEqual(try Data(contentsOf: copiedFile), try Data(contentsOf: file))
    }

    /// As root, `cp -a` keeps who owns each entry: so does file-copy, for files (set-user-ID bit
    /// included, which a change of owner clears), folders and symbolic links themselves.
    func test_files_folders_and_links_keep_their_owner_and_group() throws {
        guard geteuid() == 0 else { throw XCTSkip("not root: only root may give entries to another user") }
        let folder = source.appendingPathComponent("theirs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let file = folder.appendingPathComponent("tool")
        try Data("#!/bin/sh\n".utf8).write(to: file)
        let link = source.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "theirs/tool")
        XCTAssertEqual(lchown(file.path, 12_345, 23_456), 0)
        XCTAssertEqual(chmod(file.path, 0o4755), 0)
        XCTAssertEqual(lchown(folder.path, 12_346, 23_457), 0)
        XCTAssertEqual(lchown(link.path, 12_347, 23_458), 0)
        XCTAssertEqual(lchown(source.path, 12_348, 23_459), 0)

        try copy()

        for (path, owner, group) in [
            ("theirs/tool", 12_345, 23_456), ("theirs", 12_346, 23_457), ("link", 12_347, 23_458), ("", 12_348, 23_459),
        ] {
            let copied = try status(of: path.isEmpty ? destination : destination.appendingPathComponent(path))
            XCTAssertEqual(Int(copied.st_uid), owner, "owner of '\(path)'")
            XCTAssertEqual(Int(copied.st_gid), group, "group of '\(path)'")
        }
        XCTAssertEqual(try status(of: destination.appendingPathComponent("theirs/tool")).st_mode & 0o7777, 0o4755)
    }

    func test_hard_links_within_the_tree_stay_hard_links() throws {
        let first = source.appendingPathComponent("a.txt")
        try Data("linked\n".utf8).write(to: first)
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent("sub"), withIntermediateDirectories: false)
        XCTAssertEqual(link(first.path, source.appendingPathComponent("sub/b.txt").path), 0)
        XCTAssertEqual(link(first.path, source.appendingPathComponent("z.txt").path), 0)
        try Data("alone\n".utf8).write(to: source.appendingPathComponent("single.txt"))

        try copy()

        let copies = try ["a.txt", "sub/b.txt", "z.txt"].map { try status(of: destination.appendingPathComponent($0)) }
        XCTAssertEqual(copies.map { Int($0.st_nlink) }, [3, 3, 3])
        XCTAssertEqual(Set(copies.map { $0.st_ino }).count, 1, "one file, three names")
        XCTAssertEqual(try status(of: destination.appendingPathComponent("single.txt")).st_nlink, 1)
        XCTAssertEqual(try Data(contentsOf: destination.appendingPathComponent("sub/b.txt")), Data("linked\n".utf8))
    }
}

#if !os(Linux)
/// The Linux names of the times, on systems that call them `st_atimespec` and `st_mtimespec`.
extension stat {
    var st_atim: timespec { st_atimespec }
    var st_mtim: timespec { st_mtimespec }
}
#endif
