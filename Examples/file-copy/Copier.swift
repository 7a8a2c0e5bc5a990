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
    /// Called when a file starts, with its position (1-based), its path relative to SOURCE (built when
    /// called) and its size.
    let onFileStart: @Sendable (_ number: Int, _ path: () -> String, _ size: Int64) -> Void
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
        /// The system's words for what went wrong ("Permission denied").
        let reason: String
        var description: String { "\(path): \(reason)" }

        /// A failed system call's `errno`.
        init(path: String, code: Int32) {
            self.path = path
            reason = String(cString: strerror(code))
        }

        init(path: String, underlying: any Error) {
            self.path = path
            reason = "\(underlying)"
        }
    }

    /// Copies everything into `root`, whose units are the plan's bytes, in DEST, which `FileCopy` created
    /// (empty, for its owner only) and opened on `destinationFolder`. Returns when done, cancelled
    /// (`root.cancel()`) or stopped by an error.
    ///
    /// Every entry is reached through the descriptors of its folders in SOURCE and DEST (`openat`,
    /// `mkdirat`, `renameat2`...), opened once per folder: a path is never looked up again from the root.
    func copy(into root: ProgressNode, destinationFolder: Int32) async -> Outcome {
        var outcome = Outcome()
        var fileNumber = 0
        // The entry being copied, for the messages: its path is built only when one needs it.
        var current: CopyPlan.Location?
        // The owner and group entries get in DEST without a chown: the process's, or DEST's group when DEST
        // has the set-group-ID bit (inherited from its parent folder, and passed on to the folders in it).
        var destinationStatus = stat()
        var newEntriesGet = FileMetadata.Owner(owner: geteuid(), group: getegid())
        if fstat(destinationFolder, &destinationStatus) == 0, destinationStatus.st_mode & S_ISGID != 0 {
            newEntriesGet.group = destinationStatus.st_gid
        }
        // Created directories and what they get once their contents are in: their own permissions (a
        // private folder stays private: it is created for its owner only) and times (adding entries
        // changes a directory's modification time).
        var directories: [(path: String, metadata: FileMetadata)] = []
        var folders: FolderPair?
        var mover = DataMover()
        do {
            let folderPair = try FolderPair(plan: plan, destination: destinationFolder)
            folders = folderPair
            for entry in plan.entries {
                try await root.checkpoint()  // waits while paused, throws when cancelled
                let location = entry.location
                current = location
                let folder = try folderPair.descriptors(of: location.folder)
                switch entry {
                case .directory(_, let metadata):
                    if mkdirat(folder.destination, location.name, 0o700) != 0 {
                        throw Failure(path: folder.destinationPath + location.name, code: errno)
                    }
                    directories.append((plan.path(of: location), metadata))
                case .symbolicLink(_, let target, let metadata):
                    if symlinkat(target, folder.destination, location.name) != 0 {
                        throw Failure(path: folder.destinationPath + location.name, code: errno)
                    }
                    metadata.apply(
                        to: location.name, in: folder.destination, isSymbolicLink: true, newEntriesGet: newEntriesGet)
                case .hardLink(_, let target):
                    if linkat(destinationFolder, target, folder.destination, location.name, 0) != 0 {
                        throw Failure(path: folder.destinationPath + location.name, code: errno)
                    }
                    outcome.filesCopied += 1
                    root.fileCompletedCount = outcome.filesCopied
                case .file(_, let size, let metadata, let mayHaveHoles):
                    fileNumber += 1
                    onFileStart(fileNumber, { plan.path(of: location) }, size)
                    try await copyFile(
                        location.name, in: folder, size: size, metadata: metadata, mayHaveHoles: mayHaveHoles,
                        newEntriesGet: newEntriesGet, into: root, mover: &mover, bytesBefore: outcome.bytesCopied)
                    outcome.filesCopied += 1
                    outcome.bytesCopied += size
                    root.fileCompletedCount = outcome.filesCopied
                }
                current = nil
            }
        } catch is CancellationError {
            outcome.isCancelled = true
        } catch {
            let path = current.map { plan.destination + "/" + plan.path(of: $0) } ?? plan.destination
            let failure = (error as? Failure) ?? Failure(path: path, underlying: error)
            outcome.error = failure
            // Files are copied one at a time, so the root's only attached child is the file being copied
            // (finished ones are detached): it failed, with the error. (An empty file, a folder or a link
            // has no node: then only the root fails, in main.)
            root.children.first?.fail(failure)
        }
        // Nothing partial stays behind, whatever happened.
        if partialFile.remove() { outcome.interruptedFile = current.map(plan.path(of:)) }
        folders?.end()
        // Deepest first, DEST last: setting a directory's times never disturbs its parent's.
        for directory in directories.reversed() {
            directory.metadata.apply(to: directory.path, in: destinationFolder, newEntriesGet: newEntriesGet)
        }
        if let metadata = plan.rootMetadata {
            metadata.apply(to: ".", in: destinationFolder, newEntriesGet: newEntriesGet)
        }
        return outcome
    }

    /// Copies the file `name` of `folder`, under a temporary name renamed to `name` once complete.
    private func copyFile(
        _ name: String, in folder: FolderPair.Folder, size: Int64, metadata: FileMetadata, mayHaveHoles: Bool,
        newEntriesGet: FileMetadata.Owner, into root: ProgressNode, mover: inout DataMover, bytesBefore: Int64
    ) async throws {
        // One node per file, its units the file's bytes. An empty file has no bytes to show (a node of
        // 0 units would never finish), so it gets no node; the root still counts it.
        let node: ProgressNode?
        if size > 0 {
            let file = ProgressNode(totalUnitCount: size, parent: root, pendingUnitCount: size)
            file.kind = .file
            file.fileOperationKind = .copying
            // Absolute and known to be a file: no look-up of the working directory or of the path.
            file.fileURL = URL(fileURLWithPath: folder.absoluteSourcePath + name, isDirectory: false)
            node = file
        } else {
            node = nil
        }

        let input = openat(folder.source, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw Failure(path: folder.sourcePath + name, code: errno) }
        defer { close(input) }
        let output = try partialFile.create(for: name, in: folder.destination, folderPath: folder.destinationPath)

        // Only the stretches of data are copied: the holes of a sparse file stay holes (skipped over, they
        // count as copied). A file without holes is one stretch, to its end wherever that is now (a file
        // that grew since the search is copied whole, as `cp -a` does).
        var written: Int64 = 0
        var position: Int64 = 0
        var stretch: (start: Int64, end: Int64)? = mayHaveHoles ? SparseRegions.nextData(in: input, from: 0) : (0, .max)
        copying: while let data = stretch {
            node?.advance(by: data.start - position)
            position = data.start
            while position < data.end {
                try await (node ?? root).checkpoint()  // waits while paused, throws when cancelled
                let chunkStart = ContinuousClock.now
                let wanted = Int(min(Int64(chunkSize), data.end - position))
                if let failAfterBytes, bytesBefore + written + Int64(wanted) > failAfterBytes {
                    throw Failure(path: folder.sourcePath + name, code: EIO)  // the test hook
                }
                let copied: Int
                do {
                    copied = try mover.copy(from: input, to: output, at: position, length: wanted)
                } catch {
                    throw Failure(
                        path: (error.writing ? folder.destinationPath : folder.sourcePath) + name, code: error.code)
                }
                if copied == 0 { break copying }  // the end of the file (it shrank, or the stretch is "to the end")
                position += Int64(copied)
                written += Int64(copied)
                node?.advance(by: Int64(copied))
                if let limit {  // --limit: each chunk takes at least its share of a second
                    try? await Task.sleep(until: chunkStart + .seconds(Double(copied) / Double(limit)))
                }
                // The test hook: pause once, in the chunk that crosses the given total.
                let total = bytesBefore + written
                if let pauseAfterBytes, total - Int64(copied) < pauseAfterBytes, total >= pauseAfterBytes {
                    root.pause()
                    FileHandle.standardError.write(Data("file-copy: paused after \(total) bytes\n".utf8))
                }
            }
            stretch = mayHaveHoles ? SparseRegions.nextData(in: input, from: position) : nil
        }
        if mayHaveHoles {
            // A hole at the end is made by the length alone.
            var status = stat()
            if fstat(input, &status) == 0, Int64(status.st_size) > position,
                ftruncate(output, off_t(status.st_size)) != 0
            {
                throw Failure(path: folder.destinationPath + name, code: errno)
            }
        }

        // Keep the source's owner, permissions and times, then give the file its real name.
        metadata.apply(toDescriptor: output, newEntriesGet: newEntriesGet)
        try partialFile.complete()
        // A file that shrank while it was copied ends short of its size: it is complete all the same.
        if let node, !node.isFinished { node.completedUnitCount = node.totalUnitCount }
    }
}

/// Moves a file's bytes: in the kernel (`copy_file_range`: no copy through this process, and shared blocks
/// where the file system can clone) until the kernel refuses it for these file systems, then through a
/// buffer (`pread`, `pwrite`) for the rest of the run. Owned by one copy.
struct DataMover: ~Copyable {
    /// A failed move: the system's error, and whether writing (else reading) failed.
    struct Failure: Error {
        var code: Int32
        var writing: Bool
    }

    private var kernelCopyRefused = false
    private var buffer: [UInt8] = []

    /// Copies up to `length` bytes at `offset` of `input` to the same offset of `output`; returns how many
    /// (0 at the end of the input).
    mutating func copy(from input: Int32, to output: Int32, at offset: Int64, length: Int) throws(Failure) -> Int {
        if !kernelCopyRefused {
            var inputOffset = offset
            var outputOffset = offset
            let copied = SystemCalls.copyFileRange(
                from: input, at: &inputOffset, to: output, at: &outputOffset, length: length)
            if copied >= 0 { return copied }
            let code = errno
            guard SystemCalls.copyFileRangeIsUnsupported(code) else {
                throw Failure(code: code, writing: code == ENOSPC || code == EDQUOT || code == EFBIG || code == EROFS)
            }
            kernelCopyRefused = true  // nothing was copied: the same chunk goes through the buffer
        }
        if buffer.count < length { buffer = [UInt8](repeating: 0, count: length) }
        let result = buffer.withUnsafeMutableBytes { bytes -> Result<Int, Failure> in
            let count = pread(input, bytes.baseAddress, length, off_t(offset))
            guard count >= 0 else { return .failure(Failure(code: errno, writing: false)) }
            var done = 0
            while done < count {
                let wrote = pwrite(output, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                guard wrote > 0 else { return .failure(Failure(code: wrote < 0 ? errno : EIO, writing: true)) }
                done += wrote
            }
            return .success(count)
        }
        return try result.get()
    }
}

/// The descriptors of one folder in SOURCE and the same folder in DEST, opened when the copy reaches its
/// entries (which come one after the other) and closed when it moves on, with the folder's paths for the
/// messages and the files' URLs. Owned by one copy.
final class FolderPair {
    /// One folder, open in SOURCE and in DEST. Each path ends with "/", ready for an entry's name.
    struct Folder {
        var source: Int32
        var destination: Int32
        var sourcePath: String
        var destinationPath: String
        var absoluteSourcePath: String
    }

    private let plan: CopyPlan
    private var sourceRoot: Int32
    private let root: Folder
    private var current: (index: Int, folder: Folder)?

    init(plan: CopyPlan, destination: Int32) throws(Copier.Failure) {
        self.plan = plan
        sourceRoot = open(plan.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard sourceRoot >= 0 else { throw Copier.Failure(path: plan.source, code: errno) }
        root = Folder(
            source: sourceRoot, destination: destination, sourcePath: plan.source + "/",
            destinationPath: plan.destination + "/", absoluteSourcePath: plan.absoluteSource + "/")
    }

    deinit {
        end()
    }

    /// The folder at `index` in the plan's folders, open.
    func descriptors(of index: Int) throws(Copier.Failure) -> Folder {
        if let current, current.index == index { return current.folder }
        closeCurrent()
        if index == 0 { return root }
        let path = plan.folders[index]
        let source = openat(sourceRoot, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard source >= 0 else { throw Copier.Failure(path: root.sourcePath + path, code: errno) }
        let destination = openat(root.destination, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard destination >= 0 else {
            let code = errno
            close(source)
            throw Copier.Failure(path: root.destinationPath + path, code: code)
        }
        let folder = Folder(
            source: source, destination: destination, sourcePath: root.sourcePath + path + "/",
            destinationPath: root.destinationPath + path + "/", absoluteSourcePath: root.absoluteSourcePath + path + "/"
        )
        current = (index, folder)
        return folder
    }

    /// Closes the folder open last (not the roots).
    private func closeCurrent() {
        guard let current else { return }
        close(current.folder.source)
        close(current.folder.destination)
        self.current = nil
    }

    /// Closes every descriptor it opened (DEST's is the caller's); nothing can be opened afterwards.
    func end() {
        closeCurrent()
        if sourceRoot >= 0 { close(sourceRoot) }
        sourceRoot = -1
    }
}

/// The temporary file being written, if any, behind a lock: the copy creates, renames and removes it,
/// and a second Ctrl-C removes it for good before the program exits at once.
final class PartialFile: Sendable {
    /// The file open for writing: its name in the folder open on `folder`, whose path is `folderPath`
    /// (ending with "/"), and its descriptor.
    private struct Open {
        var folder: Int32
        var folderPath: String
        var name: String
        var finalName: String
        var descriptor: Int32
    }

    private let file = Mutex<Open?>(nil)
    /// Set by `removeForGood()`: no temporary file is created any more.
    private let isClosed = Mutex(false)

    /// The longest file name, in bytes of UTF-8, that the file systems file-copy meets accept (`NAME_MAX`).
    static let longestName = 255

    /// Creates a new, empty temporary file for the file `name` in the folder open on `folder`, whose path is
    /// `folderPath` (ending with "/"), remembers it and returns its descriptor, open for writing.
    ///
    /// Its name is ".NAME.file-copy-partial" — NAME shortened (whole characters) when the whole would be
    /// longer than `longestName`, so that a file with a long but legal name can still be copied — and
    /// ".NAME.file-copy-partial-2", "-3"… when that name is taken: the source may hold a file of that name,
    /// already copied, which must not be overwritten. The file is created exclusively (`O_EXCL`), so an
    /// existing file is never truncated.
    func create(for name: String, in folder: Int32, folderPath: String) throws(Copier.Failure) -> Int32 {
        try file.withLock { (file) throws(Copier.Failure) -> Int32 in
            // The program is exiting: nothing new may appear in DEST.
            if isClosed.withLock({ $0 }) { throw Copier.Failure(path: folderPath + name, code: ECANCELED) }
            for attempt in 1...1_000 {
                let temporaryName = Self.temporaryName(for: name, attempt: attempt)
                let descriptor = openat(folder, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if descriptor >= 0 {
                    file = Open(
                        folder: folder, folderPath: folderPath, name: temporaryName, finalName: name,
                        descriptor: descriptor)
                    return descriptor
                }
                let code = errno
                if code != EEXIST { throw Copier.Failure(path: folderPath + temporaryName, code: code) }
            }
            throw Copier.Failure(path: folderPath + Self.temporaryName(for: name, attempt: 1), code: EEXIST)
        }
    }

    /// ".NAME.file-copy-partial" for the first attempt, ".NAME.file-copy-partial-N" for attempt N, with NAME
    /// cut (at a character boundary) so that the result has at most `longestName` bytes.
    static func temporaryName(for name: String, attempt: Int) -> String {
        if attempt == 1 && name.utf8.count <= longestName - 19 { return "." + name + ".file-copy-partial" }
        let suffix = ".file-copy-partial" + (attempt > 1 ? "-\(attempt)" : "")
        var stem = Substring(name)
        while 1 + stem.utf8.count + suffix.utf8.count > longestName, !stem.isEmpty { stem.removeLast() }
        return "." + stem + suffix
    }

    /// Closes the temporary file and renames it to its final name, which must not exist (never replaced,
    /// even by a race), and forgets it. On a failure it stays, for `remove()`.
    func complete() throws(Copier.Failure) {
        try file.withLock { (file) throws(Copier.Failure) in
            guard var open = file else { return }
            if open.descriptor >= 0 {
                let closed = close(open.descriptor)
                open.descriptor = -1
                file = open
                // A file system that writes late (NFS) reports a failed write here.
                if closed != 0 { throw Copier.Failure(path: open.folderPath + open.finalName, code: errno) }
            }
            if SystemCalls.renameWithoutReplacing(open.name, to: open.finalName, in: open.folder) != 0 {
                throw Copier.Failure(path: open.folderPath + open.finalName, code: errno)
            }
            file = nil
        }
    }

    /// Closes and removes the temporary file, if there is one; returns whether there was one.
    @discardableResult
    func remove() -> Bool {
        file.withLock { file in
            defer { file = nil }
            guard let open = file else { return false }
            if open.descriptor >= 0 { close(open.descriptor) }
            unlinkat(open.folder, open.name, 0)
            return true
        }
    }

    /// Removes the temporary file, and lets no new one be created: what a second Ctrl-C, `SIGTERM` or
    /// `SIGHUP` does before the program exits at once (the copy's thread may still be running).
    func removeForGood() {
        file.withLock { file in
            isClosed.withLock { $0 = true }
            // By its path: the copy's thread may have closed its folder by now.
            if let open = file { unlink(open.folderPath + open.name) }
            file = nil
        }
    }
}
