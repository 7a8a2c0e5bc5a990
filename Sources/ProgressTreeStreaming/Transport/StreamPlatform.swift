#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ProgressTreeStreaming needs a POSIX C library (Glibc, Musl or Darwin)")
#endif
import CProgressTreeStreaming
import Dispatch
import Synchronization

/// The C library calls of publishing and mounting, and the only file of this module that imports the C
/// library (the pattern of `ProgressTreeTerminal`'s `Platform`): descriptors, sockets, processes, and the
/// calls Swift cannot make itself, in `CProgressTreeStreaming` (`fork` and `prctl`, epoll, peer
/// credentials).
///
/// Invariants: every descriptor this file creates is close-on-exec, so that a process started by another
/// thread never inherits it by accident; only `spawn` hands some on, under numbers of its choosing.
enum StreamPlatform {
    /// Writes all of `bytes` (retrying `EINTR` and partial writes, waiting while a non-blocking
    /// descriptor is full); `false` once the descriptor fails (the reader went away). Sockets are written
    /// with `MSG_NOSIGNAL`, so a closed peer is an error, not a `SIGPIPE`; for pipes,
    /// `ignoreBrokenPipeSignal()` must have been called.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            switch write(descriptor, bytes, from: offset, blocking: true) {
            case .wrote(let count): offset += count
            case .full: _ = waitReady(descriptor, writable: true, milliseconds: 100)
            case .failed: return false
            }
        }
        return true
    }

    /// What one attempt to write gave.
    enum WriteResult: Equatable {
        /// This many bytes (at least one) were taken.
        case wrote(Int)
        /// None could be taken now (the reader is behind).
        case full
        /// The descriptor failed: the reader went away.
        case failed(Int32)
    }

    /// One attempt to write `bytes` from `offset`. Unless `blocking`, it never waits: sockets are written
    /// with `MSG_DONTWAIT`; other descriptors (pipes) only when `poll` says there is room, and at most
    /// `PIPE_BUF` bytes at a time, which a pipe with room takes without waiting.
    static func write(_ descriptor: Int32, _ bytes: [UInt8], from offset: Int, blocking: Bool) -> WriteResult {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, offset < buffer.count else { return .wrote(0) }
            while true {
                var flags: Int32 = 0
                #if !canImport(Darwin)
                flags |= Int32(MSG_NOSIGNAL)
                #endif
                if !blocking { flags |= Int32(MSG_DONTWAIT) }
                var written = send(descriptor, base + offset, buffer.count - offset, flags)
                if written < 0 && errno == ENOTSOCK {
                    if !blocking && !waitReady(descriptor, writable: true, milliseconds: 0) { return .full }
                    let length = blocking ? buffer.count - offset : min(buffer.count - offset, 4096)
                    written = Glibc_write(descriptor, base + offset, length)
                }
                if written > 0 { return .wrote(written) }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .full
                default: return .failed(errno)
                }
            }
        }
    }

    private static func Glibc_write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
        #elseif canImport(Darwin)
        Darwin.write(descriptor, buffer, count)
        #endif
    }

    /// Reads once into `buffer`: the count, 0 at the end, -1 on an error other than `EINTR` (`errno`
    /// says which; `EAGAIN` when a non-blocking descriptor has nothing).
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            #if canImport(Glibc)
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            #elseif canImport(Musl)
            let count = Musl.read(descriptor, buffer.baseAddress, buffer.count)
            #elseif canImport(Darwin)
            let count = Darwin.read(descriptor, buffer.baseAddress, buffer.count)
            #endif
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Reads once into `buffer` (see `read(_:into:)`).
    static func read(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { read(descriptor, into: $0) }
    }

    /// Waits until `descriptor` is readable (or writable), has hung up, or `milliseconds` pass (-1: no
    /// limit); `true` unless the time ran out.
    static func waitReady(_ descriptor: Int32, writable: Bool = false, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(writable ? POLLOUT : POLLIN), revents: 0)
        while true {
            let result = poll(&entry, 1, milliseconds)
            if result < 0 && errno == EINTR { continue }
            return result != 0
        }
    }

    /// Whether `first` and `second` hold the same bytes (`memcmp`).
    @inline(__always)
    static func sameBytes(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        guard first.count == second.count else { return false }
        guard let a = first.baseAddress, let b = second.baseAddress else { return true }
        return memcmp(a, b, first.count) == 0
    }

    /// The index of the first `byte` in `bytes` at or after `start`, if any (`memchr`).
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return nil }
        return UnsafeRawPointer(found) - base
    }

    /// Waits `milliseconds` (no descriptor).
    static func sleep(milliseconds: Int32) {
        var none = pollfd(fd: -1, events: 0, revents: 0)
        _ = poll(&none, 1, milliseconds)
    }

    static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #elseif canImport(Musl)
        _ = Musl.close(descriptor)
        #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
        #endif
    }

    /// Shuts a socket down both ways, so that a thread blocked reading it returns; harmless on a pipe.
    static func shutdownBoth(_ descriptor: Int32) {
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Whether `descriptor` is open.
    static func isOpen(_ descriptor: Int32) -> Bool {
        fcntl(descriptor, F_GETFD) != -1
    }

    static func setCloseOnExec(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFD)
        if flags != -1 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Makes reads and writes of `descriptor` return at once instead of waiting (`O_NONBLOCK`, which
    /// belongs to the open file: only for descriptors this library owns).
    static func setNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags != -1 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Whether `ignoreBrokenPipeSignal()` set `SIGPIPE` to be ignored: programs started then get the
    /// default action back.
    private static let ignoredBrokenPipe = Atomic<Bool>(false)

    /// Sets `SIGPIPE` to be ignored if it has its default action (which would end the process when a pipe's
    /// reader goes away); a handler the program installed is kept.
    static func ignoreBrokenPipeSignal() {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        #if canImport(Darwin)
        let isDefault = current.__sigaction_u.__sa_handler == nil
        #else
        let isDefault = current.__sigaction_handler.sa_handler == nil
        #endif
        if isDefault {
            _ = signal(SIGPIPE, SIG_IGN)
            ignoredBrokenPipe.store(true, ordering: .relaxed)
        }
    }

    /// A connected pair of stream sockets, both close-on-exec.
    static func socketPair() throws(StreamSetupError) -> (Int32, Int32) {
        var descriptors: [Int32] = [-1, -1]
        #if canImport(Darwin)
        guard socketpair(AF_UNIX, SOCK_STREAM, 0, &descriptors) == 0 else { throw .system("socketpair", errno) }
        setCloseOnExec(descriptors[0])
        setCloseOnExec(descriptors[1])
        #else
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0
        else { throw .system("socketpair", errno) }
        #endif
        return (descriptors[0], descriptors[1])
    }

    /// A pipe, both ends close-on-exec: (read end, write end).
    static func pipe() throws(StreamSetupError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        let result = progresstree_pipe(&descriptors)
        guard result == 0 else { throw .system("pipe", result) }
        return (descriptors[0], descriptors[1])
    }

    // MARK: Processes

    /// The signal a program started by `spawn` gets when this process ends (Linux).
    static let parentDeathSignal = SIGTERM

    /// Starts `path` with `arguments` (without argv[0]) and `environment` ("NAME=value"). Each
    /// `(source, target)` of `handOn` becomes descriptor `target` in the new process (a source of -1:
    /// /dev/null); the other descriptors of this process stay out (they are close-on-exec where this
    /// library made them). On Linux the program gets `parentDeathSignal` when the thread that starts it
    /// ends: `StreamReactor` starts every program from its own thread, which lasts as long as the process.
    static func spawn(
        path: String, arguments: [String], environment: [String], handOn: [(source: Int32, target: Int32)]
    ) throws(StreamSetupError) -> Int32 {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let sources = handOn.map(\.source)
        let targets = handOn.map(\.target)
        var pid: pid_t = 0
        let result = progresstree_spawn(
            path, argv, envp, sources, targets, Int32(handOn.count), parentDeathSignal,
            ignoredBrokenPipe.load(ordering: .relaxed) ? 1 : 0, &pid)
        guard result == 0 else { throw .system("cannot start \(path)", result) }
        return pid
    }

    /// How a process ended.
    enum ExitStatus: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Waits for process `pid` to end (retrying `EINTR`); with `blocking: false`, `nil` while it runs.
    static func waitForExit(_ pid: Int32, blocking: Bool = true) -> ExitStatus? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == 0 { return nil }
            if result == -1 {
                if errno == EINTR { continue }
                return .exited(-1)
            }
            break
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// A descriptor that becomes readable when child `pid` ends (Linux 5.3 or later), or `nil`.
    static func processDescriptor(_ pid: Int32) -> Int32? {
        let descriptor = progresstree_process_descriptor(pid)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Sends `signal` to `pid`.
    static func sendSignal(_ signal: Int32, to pid: Int32) {
        _ = kill(pid, signal)
    }

    static var processEnvironment: [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }

    static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    static func unsetEnvironment(_ name: String) {
        _ = unsetenv(name)
    }

    // MARK: The reactor's poller

    /// An epoll descriptor (Linux), or `nil` where the reactor polls with `poll`.
    static func makePoller() -> Int32? {
        let descriptor = progresstree_poller_create()
        return descriptor >= 0 ? descriptor : nil
    }

    /// Adds `descriptor` to `poller`: 0, or `errno` (`EPERM`: a regular file, always readable).
    static func pollerAdd(_ poller: Int32, _ descriptor: Int32) -> Int32 {
        progresstree_poller_add(poller, descriptor)
    }

    static func pollerRemove(_ poller: Int32, _ descriptor: Int32) {
        _ = progresstree_poller_remove(poller, descriptor)
    }

    /// Stores the descriptors of `poller` ready within `milliseconds` (-1: no limit) at the start of
    /// `ready`; how many.
    static func pollerWait(_ poller: Int32, into ready: inout [Int32], milliseconds: Int32) -> Int {
        let capacity = Int32(ready.count)
        let count = ready.withUnsafeMutableBufferPointer {
            progresstree_poller_wait(poller, $0.baseAddress, capacity, milliseconds)
        }
        return max(0, Int(count))
    }

    /// Of `descriptors`, those readable or hung up within `milliseconds` (-1: no limit), with `poll`.
    static func pollReadable(_ descriptors: [Int32], milliseconds: Int32) -> [Int32] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&entries, nfds_t(entries.count), milliseconds)
        guard count > 0 else { return [] }
        return entries.filter { $0.revents != 0 }.map(\.fd)
    }

    // MARK: Sockets

    /// `errno` of the last failed call on this thread.
    static var lastError: Int32 { errno }

    /// The `errno` of a read that found nothing on a non-blocking descriptor.
    static let wouldBlock = EAGAIN

    /// Whether a read failed with `error` because the descriptor cannot be read at all (a pipe's write
    /// end, a directory), rather than because its other end went away.
    static func isUnreadable(_ error: Int32) -> Bool {
        error == EBADF || error == EINVAL || error == EISDIR
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// A TCP socket connected to `host` (a numeric IPv4 or IPv6 address, or a name) and `port`.
    static func connect(host: String, port: UInt16) throws(StreamSetupError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "\(port)", &hints, &list)
        guard status == 0, let first = list else { throw .resolve(host, status) }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if descriptor >= 0 {
                setCloseOnExec(descriptor)
                if connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
                lastError = errno
                close(descriptor)
            } else {
                lastError = errno
            }
            entry = info.pointee.ai_next
        }
        throw .system("connect to \(host):\(port)", lastError)
    }

    private static func connect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32
    {
        while true {
            #if canImport(Glibc)
            let result = Glibc.connect(descriptor, address, length)
            #elseif canImport(Musl)
            let result = Musl.connect(descriptor, address, length)
            #elseif canImport(Darwin)
            let result = Darwin.connect(descriptor, address, length)
            #endif
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// A TCP socket listening on the numeric IPv4 or IPv6 address `host` and `port` (0: any free port),
    /// non-blocking, and the port it got.
    static func listen(host: String, port: UInt16, backlog: Int32) throws(StreamSetupError) -> (Int32, UInt16) {
        var address4 = sockaddr_in()
        var address6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &address4.sin_addr) == 1 {
            family = AF_INET
            address4.sin_family = sa_family_t(AF_INET)
            address4.sin_port = port.bigEndian
        } else if inet_pton(AF_INET6, host, &address6.sin6_addr) == 1 {
            family = AF_INET6
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = port.bigEndian
        } else {
            throw .resolve(host, 0)
        }
        let descriptor = try streamSocket(family: family)
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = family == AF_INET ? bind(descriptor, to: address4) : bind(descriptor, to: address6)
        guard bound == 0, listen(descriptor, backlog: backlog) == 0 else {
            let error = errno
            close(descriptor)
            throw .system("listen on \(host):\(port)", error)
        }
        var storage = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        // The port is at the same place in both address structures.
        setNonBlocking(descriptor)
        return (descriptor, UInt16(bigEndian: storage.sin6_port))
    }

    /// Binds `descriptor` to `address` (a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un`).
    private static func bind<Address>(_ descriptor: Int32, to address: Address) -> Int32 {
        withSocketAddress(address) { Glibc_bind(descriptor, $0, $1) }
    }

    /// Calls `body` with `address` (a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un`) seen as a `sockaddr`,
    /// and its length.
    private static func withSocketAddress<Address, Result>(
        _ address: Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    private static func Glibc_bind(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t)
        -> Int32
    {
        #if canImport(Glibc)
        Glibc.bind(descriptor, address, length)
        #elseif canImport(Musl)
        Musl.bind(descriptor, address, length)
        #elseif canImport(Darwin)
        Darwin.bind(descriptor, address, length)
        #endif
    }

    private static func streamSocket(family: Int32) throws(StreamSetupError) -> Int32 {
        #if canImport(Darwin)
        let descriptor = socket(family, SOCK_STREAM, 0)
        if descriptor >= 0 { setCloseOnExec(descriptor) }
        #else
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw .system("socket", errno) }
        return descriptor
    }

    private static func listen(_ descriptor: Int32, backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(descriptor, backlog)
        #elseif canImport(Musl)
        Musl.listen(descriptor, backlog)
        #elseif canImport(Darwin)
        Darwin.listen(descriptor, backlog)
        #endif
    }

    /// Accepts one connection on a listening socket (close-on-exec, blocking); `nil` when none waits on a
    /// non-blocking one.
    static func accept(_ descriptor: Int32) throws(StreamSetupError) -> Int32? {
        while true {
            #if canImport(Glibc)
            let connection = Glibc.accept(descriptor, nil, nil)
            #elseif canImport(Musl)
            let connection = Musl.accept(descriptor, nil, nil)
            #elseif canImport(Darwin)
            let connection = Darwin.accept(descriptor, nil, nil)
            #endif
            if connection >= 0 {
                setCloseOnExec(connection)
                // A socket accepted from a non-blocking one may inherit the flag (BSD): clear it.
                let flags = fcntl(connection, F_GETFL)
                if flags != -1 { _ = fcntl(connection, F_SETFL, flags & ~O_NONBLOCK) }
                return connection
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw .system("accept", errno)
            }
        }
    }

    /// The user id of this process's effective user.
    static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// The user at the other end of a Unix-domain socket, if the system says.
    static func peerUser(_ descriptor: Int32) -> UInt32? {
        var user: uid_t = 0
        return progresstree_peer_user(descriptor, &user) == 0 ? UInt32(user) : nil
    }

    /// The longest path of a Unix-domain socket.
    static var maximumSocketPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    private static func unixAddress(_ path: String) throws(StreamSetupError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumSocketPathLength else {
            throw .unsafePath(path, "longer than \(maximumSocketPathLength) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Checks that only this user can write in the directory of `path`: it is a directory of this user's
    /// with no write permission for anyone else (so nobody else can put a socket of theirs there, or
    /// remove this one).
    static func checkPrivateDirectory(of path: String) throws(StreamSetupError) {
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

    /// A Unix-domain socket listening at `path`, non-blocking, mode 0600, in a directory only this user
    /// can write (`checkPrivateDirectory`). A socket left at `path` by a listener that is gone is replaced;
    /// anything else there is an error.
    static func listen(path: String, backlog: Int32) throws(StreamSetupError) -> Int32 {
        try checkPrivateDirectory(of: path)
        let address = try unixAddress(path)
        var status = stat()
        if lstat(path, &status) == 0 {
            let isOurSocket = status.st_mode & S_IFMT == S_IFSOCK && UInt32(status.st_uid) == effectiveUser
            guard isOurSocket, (try? connect(path: path)).map({ close($0) }) == nil else {
                throw .system("listen at \(path)", EADDRINUSE)
            }
            unlink(path)
        }
        let descriptor = try streamSocket(family: AF_UNIX)
        let bound = bind(descriptor, to: address)
        // The directory keeps everyone else out already; the mode says so on the socket itself.
        guard bound == 0, chmod(path, 0o600) == 0, listen(descriptor, backlog: backlog) == 0 else {
            let error = errno
            close(descriptor)
            if bound == 0 { unlink(path) }
            throw .system("listen at \(path)", error)
        }
        setNonBlocking(descriptor)
        return descriptor
    }

    /// A connection to the Unix-domain socket at `path`, which must belong to this user, in a directory
    /// only this user can write: a tree read from anyone else's socket, or commands sent to it, are not
    /// this user's.
    static func connect(path: String) throws(StreamSetupError) -> Int32 {
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
            close(descriptor)
            throw .system("connect to \(path)", error)
        }
        return descriptor
    }

    static func removeFile(_ path: String) {
        unlink(path)
    }

    /// A directory of this user's that only this user can enter, for sockets: `$XDG_RUNTIME_DIR` (the
    /// per-user runtime directory, mode 700) or, without it, `progresstree-<uid>` in `$TMPDIR` or /tmp,
    /// created with mode 700; checked with `checkPrivateDirectory` either way.
    static func privateDirectory() throws(StreamSetupError) -> String {
        if let runtime = environmentValue("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var status = stat()
            if lstat(runtime, &status) == 0, status.st_mode & S_IFMT == S_IFDIR,
                UInt32(status.st_uid) == effectiveUser, status.st_mode & 0o077 == 0
            {
                return runtime
            }
        }
        var temporary = environmentValue("TMPDIR") ?? "/tmp"
        while temporary.count > 1 && temporary.hasSuffix("/") { temporary.removeLast() }
        let directory = temporary + "/progresstree-\(effectiveUser)"
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .system("cannot create \(directory)", errno) }
        var status = stat()
        guard lstat(directory, &status) == 0 else { throw .system("cannot read \(directory)", errno) }
        guard status.st_mode & S_IFMT == S_IFDIR, UInt32(status.st_uid) == effectiveUser, status.st_mode & 0o077 == 0
        else { throw .unsafePath(directory, "not a directory of this user's with mode 700") }
        return directory
    }
}

/// Why a stream could not be set up (a process not started, a connection not made, a socket refused).
public enum StreamSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed: what was tried and `errno`.
    case system(String, Int32)
    /// A host name or address could not be resolved.
    case resolve(String, Int32)
    /// A Unix-domain socket path that others could replace or reach: the path and why.
    case unsafePath(String, String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .system(let what, let code): "\(what): \(StreamPlatform.errorText(code))"
        case .resolve(let host, _): "cannot resolve \(host)"
        case .unsafePath(let path, let why): "\(path): \(why)"
        }
    }
}

extension StreamPlatform {
    /// The closure a thread started by `detachThread` runs (retained across `pthread_create`).
    private final class ThreadBody: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread of its own: the reactor's loop, and a process's wait where
    /// the system gives no descriptor for it. On a dispatch queue they would hold threads of the shared
    /// pool (which Swift concurrency uses too) for as long as they last.
    static func detachThread(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(
            &thread, nil,
            { context in
                #if canImport(Darwin)
                let body = Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue()
                #else
                let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
                #endif
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            // No thread to be had: run it on the shared pool rather than not at all.
            let body = Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue()
            DispatchQueue.global().async { body.run() }
            return
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
    }

    /// Names the calling thread (at most 15 bytes on Linux), as `top -H` and debuggers show it.
    static func nameCurrentThread(_ name: String) {
        progresstree_name_thread(name)
    }

    /// An identifier of the calling thread, to compare with one taken earlier.
    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
