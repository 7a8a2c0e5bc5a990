import Foundation
import ProgressTree
import Synchronization

/// Copies the entries of a plan, one file at a time, in chunks, reporting bytes to a node per file.
///
/// A file is written under a temporary name in its destination folder and renamed to its real name only
/// once complete, so DEST never holds a partially written file: a cancellation or an error removes the
/// temporary file, and the files already copied stay (they are complete).
struct Copier: Sendable {
    let plan: CopyPlan
    let partialFile: PartialFile
    /// Called when a file starts, with its position (1-based) and its path relative to SOURCE.
    let onFileStart: @Sendable (_ number: Int, _ path: String, _ size: Int64) -> Void
    /// The most bytes per second to copy (`--limit`), or `nil`.
    let limit: Int64?
    let pauseAfterBytes: Int64?
    /// The test hook `--fail-after-bytes`: see `Options.failAfterBytes`.
    var failAfterBytes: Int64? = nil

    /// 1 MiB, or less under a low `--limit`, so that a chunk never takes more than a tenth of a second and
    /// Ctrl-C stays prompt.
    var chunkSize: Int {
        guard let limit else { return 1 << 20 }
        return Int(max(4096, min(1 << 20, limit / 10)))
    }

    /// How far the copy got.
    struct Outcome: Sendable {
        var filesCopied = 0
        var bytesCopied: Int64 = 0
        /// The file being copied when the copy stopped, whose partial copy was removed.
        var interruptedFile: String?
        var error: (any Error)?
        var isCancelled = false
    }

    /// A failure while copying, with the path it concerns.
    struct Failure: Error, CustomStringConvertible {
        let path: String
        let underlying: any Error
        var description: String { "\(path): \(Self.reason(underlying))" }

        /// The system's words for the error ("Permission denied"), without Foundation's wrapping.
        static func reason(_ error: any Error) -> String {
            let nsError = error as NSError
            if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
                return String(cString: strerror(Int32(posix.code)))
            }
            if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
            if let cocoa = error as? CocoaError {
                switch cocoa.code {
                case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
                case .fileReadNoSuchFile, .fileNoSuchFile: return String(cString: strerror(ENOENT))
                case .fileWriteFileExists: return String(cString: strerror(EEXIST))
                case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
                case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
                default: break
                }
            }
            return nsError.localizedDescription
        }
    }

    /// Copies everything into `root`, whose units are the plan's bytes. Returns when done, cancelled
    /// (`root.cancel()`) or stopped by an error.
    func copy(into root: ProgressNode) async -> Outcome {
        var outcome = Outcome()
        var fileNumber = 0
        var current: String?
        // Created directories and what they get once their contents are in: their own permissions (a
        // private folder stays private: it is created for its owner only) and times (adding entries
        // changes a directory's modification time).
        var directories: [(path: String, metadata: FileMetadata)] = []
        do {
            for entry in plan.entries {
                try await root.checkpoint()  // waits while paused, throws when cancelled
                switch entry {
                case .directory(let path, let metadata):
                    current = path
                    try FileManager.default.createDirectory(
                        atPath: plan.destination + "/" + path, withIntermediateDirectories: false,
                        attributes: [.posixPermissions: 0o700])
                    directories.append((path, metadata))
                case .symbolicLink(let path, let target, let metadata):
                    current = path
                    try FileManager.default.createSymbolicLink(
                        atPath: plan.destination + "/" + path, withDestinationPath: target)
                    metadata?.apply(to: plan.destination + "/" + path, isSymbolicLink: true)
                case .hardLink(let path, let target):
                    current = path
                    if link(plan.destination + "/" + target, plan.destination + "/" + path) != 0 {
                        throw Failure(
                            path: plan.destination + "/" + path,
                            underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
                    }
                    outcome.filesCopied += 1
                    root.fileCompletedCount = outcome.filesCopied
                case .file(let path, let size, let metadata):
                    current = path
                    fileNumber += 1
                    onFileStart(fileNumber, path, size)
                    try await copyFile(path, size: size, metadata: metadata, into: root, bytesBefore: outcome.bytesCopied)
                    outcome.filesCopied += 1
                    outcome.bytesCopied += size
                    root.fileCompletedCount = outcome.filesCopied
                }
                current = nil
            }
        } catch is CancellationError {
            outcome.isCancelled = true
        } catch {
            let path = current.map { plan.destination + "/" + $0 } ?? plan.destination
            let failure = (error as? Failure) ?? Failure(path: path, underlying: error)
            outcome.error = failure
            // Files are copied one at a time, so the root's only attached child is the file being copied
            // (finished ones are detached): it failed, with the error. (An empty file, a folder or a link
            // has no node: then only the root fails, in main.)
            root.children.first?.fail(failure)
        }
        // Nothing partial stays behind, whatever happened.
        if partialFile.remove() { outcome.interruptedFile = current }
        // Deepest first, DEST last: setting a directory's times never disturbs its parent's.
        for directory in directories.reversed() {
            directory.metadata.apply(to: plan.destination + "/" + directory.path)
        }
        plan.rootMetadata?.apply(to: plan.destination)
        return outcome
    }

    private func copyFile(
        _ path: String, size: Int64, metadata: FileMetadata, into root: ProgressNode, bytesBefore: Int64
    ) async throws {
        let sourcePath = plan.source + "/" + path
        let finalPath = plan.destination + "/" + path
        let folder = (finalPath as NSString).deletingLastPathComponent

        // One node per file, its units the file's bytes. An empty file has no bytes to show (a node of
        // 0 units would never finish), so it gets no node; the root still counts it.
        let node: ProgressNode?
        if size > 0 {
            let file = ProgressNode(totalUnitCount: size, parent: root, pendingUnitCount: size)
            file.kind = .file
            file.fileOperationKind = .copying
            file.fileURL = URL(fileURLWithPath: sourcePath)
            node = file
        } else {
            node = nil
        }

        let input: FileHandle
        do { input = try FileHandle(forReadingFrom: URL(fileURLWithPath: sourcePath)) } catch {
            throw Failure(path: sourcePath, underlying: error)
        }
        defer { try? input.close() }
        let temporaryPath = try partialFile.create(in: folder, for: (path as NSString).lastPathComponent)
        let output: FileHandle
        do { output = try FileHandle(forWritingTo: URL(fileURLWithPath: temporaryPath)) } catch {
            throw Failure(path: temporaryPath, underlying: error)
        }
        defer { try? output.close() }

        // Blocking reads and writes of 1 MiB between checkpoints: fine for a tool that copies one file at
        // a time (a server would hand the I/O to a thread of its own). Only the stretches of data are
        // copied: the holes of a sparse file stay holes (skipped over, they count as copied).
        var written: Int64 = 0
        var position: Int64 = 0
        copying: while let data = SparseRegions.nextData(in: input.fileDescriptor, from: position) {
            node?.advance(by: data.start - position)
            do {
                try input.seek(toOffset: UInt64(data.start))
                try output.seek(toOffset: UInt64(data.start))
            } catch {
                throw Failure(path: sourcePath, underlying: error)
            }
            position = data.start
            while position < data.end {
                try await (node ?? root).checkpoint()  // waits while paused, throws when cancelled
                let chunkStart = ContinuousClock.now
                let chunk: Data?
                do {
                    chunk = try input.read(upToCount: Int(min(Int64(chunkSize), data.end - position)))
                    if let failAfterBytes, bytesBefore + written + Int64(chunk?.count ?? 0) > failAfterBytes {
                        throw NSError(domain: NSPOSIXErrorDomain, code: Int(EIO))  // the test hook
                    }
                } catch {
                    throw Failure(path: sourcePath, underlying: error)
                }
                guard let chunk, !chunk.isEmpty else { break copying }  // the file shrank
                do { try output.write(contentsOf: chunk) } catch { throw Failure(path: finalPath, underlying: error) }
                position += Int64(chunk.count)
                written += Int64(chunk.count)
                node?.advance(by: Int64(chunk.count))
                if let limit {  // --limit: each chunk takes at least its share of a second
                    try? await Task.sleep(until: chunkStart + .seconds(Double(chunk.count) / Double(limit)))
                }
                // The test hook: pause once, in the chunk that crosses the given total.
                let total = bytesBefore + written
                if let pauseAfterBytes, total - Int64(chunk.count) < pauseAfterBytes, total >= pauseAfterBytes {
                    root.pause()
                    FileHandle.standardError.write(Data("file-copy: paused after \(total) bytes\n".utf8))
                }
            }
        }
        do {
            // A hole at the end is made by the length alone.
            var status = stat()
            if fstat(input.fileDescriptor, &status) == 0, Int64(status.st_size) > position {
                try output.truncate(atOffset: UInt64(status.st_size))
            }
            try output.close()
        } catch {
            throw Failure(path: finalPath, underlying: error)
        }

        // Keep the source's permissions and times, then give the file its real name.
        metadata.apply(to: temporaryPath)
        try partialFile.complete(as: finalPath)
        // A file that shrank while it was copied ends short of its size: it is complete all the same.
        if let node, !node.isFinished { node.completedUnitCount = node.totalUnitCount }
    }
}

/// The temporary file being written, if any, behind a lock: the copy creates, renames and removes it,
/// and a second Ctrl-C removes it before exiting at once.
final class PartialFile: Sendable {
    private let path = Mutex<String?>(nil)

    /// The longest file name, in bytes of UTF-8, that the file systems file-copy meets accept (`NAME_MAX`).
    static let longestName = 255

    /// Creates a new, empty temporary file for the file `name` in `folder`, remembers it and returns its path.
    ///
    /// Its name is ".NAME.file-copy-partial" — NAME shortened (whole characters) when the whole would be
    /// longer than `longestName`, so that a file with a long but legal name can still be copied — and
    /// ".NAME.file-copy-partial-2", "-3"… when that name is taken: the source may hold a file of that name,
    /// already copied, which must not be overwritten. The file is created exclusively (`O_EXCL`), so an
    /// existing file is never truncated.
    func create(in folder: String, for name: String) throws -> String {
        try path.withLock { path in
            for attempt in 1...1_000 {
                let candidate = folder + "/" + Self.temporaryName(for: name, attempt: attempt)
                let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
                if descriptor >= 0 {
                    close(descriptor)
                    path = candidate
                    return candidate
                }
                let code = errno
                if code != EEXIST {
                    throw Copier.Failure(path: candidate, underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(code)))
                }
            }
            throw Copier.Failure(
                path: folder + "/" + Self.temporaryName(for: name, attempt: 1),
                underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(EEXIST)))
        }
    }

    /// ".NAME.file-copy-partial" for the first attempt, ".NAME.file-copy-partial-N" for attempt N, with NAME
    /// cut (at a character boundary) so that the result has at most `longestName` bytes.
    static func temporaryName(for name: String, attempt: Int) -> String {
        let suffix = ".file-copy-partial" + (attempt > 1 ? "-\(attempt)" : "")
        var stem = Substring(name)
        while 1 + stem.utf8.count + suffix.utf8.count > longestName, !stem.isEmpty { stem.removeLast() }
        return "." + stem + suffix
    }

    /// Renames the temporary file to `finalPath` (which must not exist) and forgets it.
    func complete(as finalPath: String) throws {
        try path.withLock { path in
            guard let temporaryPath = path else { return }
            do {
                try FileManager.default.moveItem(atPath: temporaryPath, toPath: finalPath)
            } catch {
                throw Copier.Failure(path: finalPath, underlying: error)
            }
            path = nil
        }
    }

    /// Removes the temporary file, if there is one; returns whether there was one.
    @discardableResult
    func remove() -> Bool {
        path.withLock { path in
            defer { path = nil }
            guard let temporaryPath = path else { return false }
            try? FileManager.default.removeItem(atPath: temporaryPath)
            return true
        }
    }

    /// Removes the temporary file and exits, holding the lock so that no new one can appear meanwhile.
    func removeAndExit(_ status: Int32) -> Never {
        path.withLock { path -> Never in
            if let temporaryPath = path { unlink(temporaryPath) }
            exit(status)
        }
    }
}
