import Foundation

/// What file-copy keeps of an entry besides its contents, as `cp -a` does: the permission bits, the access
/// and modification times to the nanosecond, and the owner and group where the process may set them (root,
/// or a group the user belongs to).
struct FileMetadata: Sendable {
    /// Permission bits, with set-user-ID, set-group-ID and sticky (`st_mode & 0o7777`).
    let permissions: mode_t
    let accessTime: timespec
    let modificationTime: timespec
    let owner: uid_t
    let group: gid_t

    init(_ status: stat) {
        permissions = status.st_mode & 0o7777
        accessTime = status.st_atim
        modificationTime = status.st_mtim
        owner = status.st_uid
        group = status.st_gid
    }

    /// The owner and group that new entries in DEST get without a `chown`: the process's user, and its
    /// group or, in a folder with the set-group-ID bit, the folder's (`Copier.copy(into:)` reads DEST's).
    struct Owner: Sendable {
        var owner: uid_t
        var group: gid_t
    }

    /// Gives the file open for writing on `descriptor` this owner (when new entries get another),
    /// permissions and times; `chown` comes first, since it clears the set-user-ID and set-group-ID bits.
    /// A refused `chown` (not root) is ignored, as `cp -a` does; returns whether the rest could be set.
    @discardableResult
    func apply(toDescriptor descriptor: Int32, newEntriesGet defaults: Owner) -> Bool {
        if owner != defaults.owner || group != defaults.group { _ = fchown(descriptor, owner, group) }
        let permitted = fchmod(descriptor, permissions) == 0
        return withTimes { futimens(descriptor, $0) == 0 } && permitted
    }

    /// Gives the entry `path`, relative to the folder open on `folder`, this owner, permissions and times;
    /// a symbolic link itself (never what it points to) gets its owner and times only.
    @discardableResult
    func apply(to path: String, in folder: Int32, isSymbolicLink: Bool = false, newEntriesGet defaults: Owner) -> Bool {
        let noFollow = isSymbolicLink ? AT_SYMLINK_NOFOLLOW : 0
        if owner != defaults.owner || group != defaults.group { _ = fchownat(folder, path, owner, group, noFollow) }
        if isSymbolicLink { return withTimes { utimensat(folder, path, $0, noFollow) == 0 } }
        let permitted = fchmodat(folder, path, permissions, 0) == 0
        return withTimes { utimensat(folder, path, $0, 0) == 0 } && permitted
    }

    /// The access and modification times as the two `timespec`s `futimens` and `utimensat` take, without
    /// allocating.
    private func withTimes(_ body: (UnsafePointer<timespec>) -> Bool) -> Bool {
        let times = (accessTime, modificationTime)
        return withUnsafePointer(to: times) { body(UnsafeRawPointer($0).assumingMemoryBound(to: timespec.self)) }
    }
}

/// A file's device and inode: two paths with the same identity are hard links to one file.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        // `st_dev` is signed on some systems: its bits are the identity.
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(status.st_ino)
    }
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

    /// Whether a file with this status may have holes: fewer blocks allocated than its size needs. Only
    /// such a file is searched for its data; any other is copied from start to end.
    static func mayHaveHoles(_ status: stat) -> Bool {
        Int64(status.st_blocks) * 512 < Int64(status.st_size)
    }

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
