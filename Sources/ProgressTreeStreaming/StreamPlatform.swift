#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ProgressTreeStreaming needs a POSIX C library (Glibc, Musl or Darwin)")
#endif
import Dispatch
import ProgressTree

/// The C library calls of publishing and mounting, and the only file of this module that imports the
/// C library (the pattern of `ProgressTreeTerminal`'s `Platform`): descriptors, sockets, processes.
///
/// Invariants: every descriptor this file creates is close-on-exec, so that a process started by another
/// thread never inherits it by accident; only `spawn` hands one on, under a number of its choosing.
enum StreamPlatform {
    /// Writes all of `bytes` (retrying `EINTR` and partial writes); `false` once the descriptor fails (the
    /// reader went away). Sockets are written with `MSG_NOSIGNAL`, so a closed peer is an error, not a
    /// `SIGPIPE`; for pipes, `ignoreBrokenPipeSignal()` must have been called.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            var useSend = true
            while offset < buffer.count {
                var written: Int
                if useSend {
                    #if canImport(Darwin)
                    written = send(descriptor, base + offset, buffer.count - offset, 0)
                    #else
                    written = send(descriptor, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    #endif
                    if written < 0 && errno == ENOTSOCK {
                        useSend = false
                        continue
                    }
                } else {
                    written = write(descriptor, base + offset, buffer.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && (errno == EINTR || errno == EAGAIN) {
                    if errno == EAGAIN { _ = waitReadable(descriptor, writable: true, milliseconds: 100) }
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }

    /// Reads once into `buffer`: the count, 0 at the end, -1 on an error other than `EINTR`.
    static func read(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc_read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    private static func Glibc_read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.read(descriptor, buffer, count)
        #elseif canImport(Darwin)
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// Waits until `descriptor` is readable (or writable), has hung up, or `milliseconds` pass; `true`
    /// unless the time ran out.
    static func waitReadable(_ descriptor: Int32, writable: Bool = false, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(writable ? POLLOUT : POLLIN), revents: 0)
        let result = poll(&entry, 1, milliseconds)
        return result != 0
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
        if isDefault { _ = signal(SIGPIPE, SIG_IGN) }
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

    // MARK: Processes

    /// Starts `path` with `arguments` (without argv[0]) and `environment` ("NAME=value"), with `handOn`
    /// duplicated to descriptor `as` in the child and standard input from /dev/null; the other descriptors
    /// of this process stay out (they are close-on-exec where this library made them).
    static func spawn(
        path: String, arguments: [String], environment: [String], handOn: Int32, as target: Int32
    ) throws(StreamSetupError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, handOn, target)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw .system("posix_spawn \(path)", result) }
        return pid
    }

    /// How a process ended.
    enum ExitStatus: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Waits for process `pid` to end (retrying `EINTR`).
    static func waitForExit(_ pid: Int32) -> ExitStatus {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return .exited(-1) }
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
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

    // MARK: TCP

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
                if Glibc_connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
                lastError = errno
                close(descriptor)
            } else {
                lastError = errno
            }
            entry = info.pointee.ai_next
        }
        throw .system("connect to \(host):\(port)", lastError)
    }

    private static func Glibc_connect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
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

    /// A TCP socket listening on the IPv4 address `host` (numeric) and `port` (0: any free port), and the
    /// port it got.
    static func listen(host: String, port: UInt16) throws(StreamSetupError) -> (Int32, UInt16) {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw .system("socket", errno) }
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw .resolve(host, 0)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc_listen(descriptor) == 0 else {
            let error = errno
            close(descriptor)
            throw .system("bind/listen \(host):\(port)", error)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    private static func Glibc_listen(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(descriptor, 16)
        #elseif canImport(Musl)
        Musl.listen(descriptor, 16)
        #elseif canImport(Darwin)
        Darwin.listen(descriptor, 16)
        #endif
    }

    /// Accepts one connection on a listening socket (close-on-exec).
    static func accept(_ descriptor: Int32) throws(StreamSetupError) -> Int32 {
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
                return connection
            }
            if errno != EINTR { throw .system("accept", errno) }
        }
    }

    /// `errno` of the last failed call on this thread.
    static var lastError: Int32 { errno }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// Why a stream could not be set up (a process not started, a connection not made).
public enum StreamSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed: what was tried and `errno`.
    case system(String, Int32)
    /// A host name or address could not be resolved.
    case resolve(String, Int32)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .system(let what, let code): "\(what): \(StreamPlatform.errorText(code))"
        case .resolve(let host, _): "cannot resolve \(host)"
        }
    }
}

/// TCP helpers for publishing and mounting across machines (`Docs/Mounting.md`, "TCP"): a listening
/// socket, accepting on it, and closing. `ProgressNode.mountConnection(host:port:…)` connects.
/// Every descriptor made here is close-on-exec.
public enum ProgressSocket {
    /// A TCP socket listening on the numeric IPv4 address `host` (by default the loopback interface) and
    /// `port` (0: a free port), and the port it got.
    public static func listen(host: String = "127.0.0.1", port: UInt16 = 0) throws(StreamSetupError) -> (
        descriptor: Int32, port: UInt16
    ) {
        let (descriptor, bound) = try StreamPlatform.listen(host: host, port: port)
        return (descriptor, bound)
    }

    /// Waits for one connection on a listening socket and returns it.
    public static func accept(_ listening: Int32) throws(StreamSetupError) -> Int32 {
        try StreamPlatform.accept(listening)
    }

    /// A TCP connection to `host`:`port`.
    public static func connect(host: String, port: UInt16) throws(StreamSetupError) -> Int32 {
        try StreamPlatform.connect(host: host, port: port)
    }

    /// Closes a descriptor made here (shutting a connection down first, so a blocked reader wakes).
    public static func close(_ descriptor: Int32) {
        StreamPlatform.shutdownBoth(descriptor)
        StreamPlatform.close(descriptor)
    }
}

extension StreamPlatform {
    /// The closure a thread started by `detachThread` runs (retained across `pthread_create`).
    private final class ThreadBody: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread of its own. Used for loops that block in `poll` and `read`:
    /// on a dispatch queue they would hold threads of the shared pool (which Swift concurrency uses too)
    /// for as long as a stream lasts.
    static func detachThread(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, nil, { context in
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
}
