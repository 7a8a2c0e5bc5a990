import Foundation

/// What file-copy keeps of an entry besides its contents, as `cp -a` does: the permission bits and the
/// access and modification times, to the nanosecond.
struct FileMetadata: Sendable {
    /// Permission bits, with set-user-ID, set-group-ID and sticky (`st_mode & 0o7777`).
    let permissions: mode_t
    let accessTime: timespec
    let modificationTime: timespec

    /// The metadata of `path` itself (a symbolic link is not followed), and its link count and identity.
    static func read(_ path: String) -> (metadata: FileMetadata, linkCount: Int, identity: FileIdentity)? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        let metadata = FileMetadata(
            permissions: status.st_mode & 0o7777, accessTime: status.st_atim, modificationTime: status.st_mtim)
        // `st_dev` is signed on some systems: its bits are the identity.
        let device = UInt64(truncatingIfNeeded: status.st_dev)
        return (metadata, Int(status.st_nlink), FileIdentity(device: device, inode: UInt64(status.st_ino)))
    }

    /// Gives `path` these permissions and times (a symbolic link: its times only). Returns whether it could.
    @discardableResult
    func apply(to path: String, isSymbolicLink: Bool = false) -> Bool {
        var times = [accessTime, modificationTime]
        if isSymbolicLink {
            return utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0
        }
        let permitted = chmod(path, permissions) == 0
        return utimensat(AT_FDCWD, path, &times, 0) == 0 && permitted
    }
}

/// A file's device and inode: two paths with the same identity are hard links to one file.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
}

/// The data and holes of a sparse file (`lseek` with `SEEK_DATA` and `SEEK_HOLE`, which Swift does not
/// import).
enum SparseRegions {
    #if os(Linux)
    static let seekData: Int32 = 3
    static let seekHole: Int32 = 4
    #else
    static let seekData: Int32 = SEEK_DATA
    static let seekHole: Int32 = SEEK_HOLE
    #endif

    /// The next stretch of data at or after `offset` in the file open on `descriptor`, as its start and
    /// end, or `nil` when only a hole (or nothing) follows. A file system without hole support reports the
    /// whole rest of the file as data.
    static func nextData(in descriptor: Int32, from offset: Int64) -> (start: Int64, end: Int64)? {
        let start = lseek(descriptor, off_t(offset), seekData)
        if start < 0 {
            if errno == ENXIO { return nil }  // nothing but a hole up to the end
            var status = stat()
            guard fstat(descriptor, &status) == 0, Int64(status.st_size) > offset else { return nil }
            return (offset, Int64(status.st_size))  // no SEEK_DATA here: all data
        }
        let end = lseek(descriptor, start, seekHole)
        guard end > start else { return nil }
        return (Int64(start), Int64(end))
    }
}

#if !os(Linux)
/// The Linux names of the times, on systems that call them `st_atimespec` and `st_mtimespec`.
extension stat {
    var st_atim: timespec { st_atimespec }
    var st_mtim: timespec { st_mtimespec }
}
#endif
