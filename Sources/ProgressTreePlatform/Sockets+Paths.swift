#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Unix-domain sockets at a path, kept to this user: a socket is made or reached only in a directory
/// that only this user can write.
extension Sockets {
    /// The longest path of a Unix-domain socket.
    private static var maximumPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// A Unix-domain socket listening at `path`, non-blocking, mode 0600, in a directory only this user
    /// can write (`checkPrivateDirectory`). A socket left at `path` by a listener that is gone is replaced;
    /// anything else there is an error.
    package static func listen(path: String, backlog: Int32) throws(PlatformError) -> Int32 {
        try checkPrivateDirectory(of: path)
        let address = try unixAddress(path)
        var status = stat()
        if lstat(path, &status) == 0 {
            let isOurSocket = status.st_mode & S_IFMT == S_IFSOCK && UInt32(status.st_uid) == effectiveUser
            guard isOurSocket, (try? connect(path: path)).map({ FileDescriptor.close($0) }) == nil else {
                throw .system("listen at \(path)", EADDRINUSE)
            }
            unlink(path)
        }
        let descriptor = try streamSocket(family: AF_UNIX)
        let bound = bind(descriptor, to: address)
        // The directory keeps everyone else out already; the mode says so on the socket itself.
        guard bound == 0, chmod(path, 0o600) == 0, listen(descriptor, backlog: backlog) == 0 else {
            let error = errno
            FileDescriptor.close(descriptor)
            if bound == 0 { unlink(path) }
            throw .system("listen at \(path)", error)
        }
        FileDescriptor.setNonBlocking(descriptor)
        return descriptor
    }

    /// A connection to the Unix-domain socket at `path`, which must belong to this user, in a directory
    /// only this user can write: a tree read from anyone else's socket, or commands sent to it, are not
    /// this user's.
    package static func connect(path: String) throws(PlatformError) -> Int32 {
        try checkPrivateDirectory(of: path)
        var status = stat()
        guard lstat(path, &status) == 0 else { throw .system("connect to \(path)", errno) }
        guard status.st_mode & S_IFMT == S_IFSOCK, UInt32(status.st_uid) == effectiveUser else {
            throw .unsafePath(path, "not a socket of this user's")
        }
        let address = try unixAddress(path)
        let descriptor = try streamSocket(family: AF_UNIX)
        let result = withSocketAddress(address) { connect(descriptor, $0, $1) }
        guard result == 0 else {
            let error = errno
            FileDescriptor.close(descriptor)
            throw .system("connect to \(path)", error)
        }
        return descriptor
    }

    /// Removes the socket (or any file) at `path`.
    package static func remove(path: String) {
        unlink(path)
    }

    /// Checks that only this user can write in the directory of `path`: it is a directory of this user's
    /// with no write permission for anyone else (so nobody else can put a socket of theirs there, or
    /// remove this one).
    private static func checkPrivateDirectory(of path: String) throws(PlatformError) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        var status = stat()
        guard lstat(directory, &status) == 0 else { throw .system("cannot read \(directory)", errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .unsafePath(path, "\(directory) is not a directory") }
        guard UInt32(status.st_uid) == effectiveUser else {
            throw .unsafePath(path, "\(directory) belongs to another user")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw .unsafePath(path, "others may write in \(directory) (it needs mode 700 or 755)")
        }
    }

    /// A directory of this user's that only this user can enter, for sockets: `$XDG_RUNTIME_DIR` (the
    /// per-user runtime directory, mode 700) or, without it, `progresstree-<uid>` in `$TMPDIR` or /tmp,
    /// created with mode 700; checked with `checkPrivateDirectory` either way.
    package static func privateDirectory() throws(PlatformError) -> String {
        if let runtime = ProcessEnvironment.value("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var status = stat()
            if lstat(runtime, &status) == 0, status.st_mode & S_IFMT == S_IFDIR,
                UInt32(status.st_uid) == effectiveUser, status.st_mode & 0o077 == 0
            {
                return runtime
            }
        }
        var temporary = ProcessEnvironment.value("TMPDIR") ?? "/tmp"
        while temporary.count > 1 && temporary.hasSuffix("/") { temporary.removeLast() }
        let directory = temporary + "/progresstree-\(effectiveUser)"
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .system("cannot create \(directory)", errno) }
        var status = stat()
        guard lstat(directory, &status) == 0 else { throw .system("cannot read \(directory)", errno) }
        guard status.st_mode & S_IFMT == S_IFDIR, UInt32(status.st_uid) == effectiveUser, status.st_mode & 0o077 == 0
        else { throw .unsafePath(directory, "not a directory of this user's with mode 700") }
        return directory
    }

    private static func unixAddress(_ path: String) throws(PlatformError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumPathLength else {
            throw .unsafePath(path, "longer than \(maximumPathLength) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}
