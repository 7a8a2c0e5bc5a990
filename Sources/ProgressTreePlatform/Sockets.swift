#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import CProgressTreePlatform

/// Stream sockets: pairs, TCP connections and listeners, accepted connections, the user at the other end.
/// Every socket made here is close-on-exec (`progresstree_socket`); those at a path are in
/// `Sockets+Paths.swift`. Written to them with `FileDescriptor.send`.
package enum Sockets {
    /// A connected pair of stream sockets.
    package static func pair() throws(PlatformError) -> (Int32, Int32) {
        var descriptors: [Int32] = [-1, -1]
        let result = progresstree_socket_pair(&descriptors)
        guard result == 0 else { throw .system("socketpair", result) }
        return (descriptors[0], descriptors[1])
    }

    /// A TCP socket connected to `host` (a numeric IPv4 or IPv6 address, or a name) and `port`.
    package static func connect(host: String, port: UInt16) throws(PlatformError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "\(port)", &hints, &list)
        guard status == 0, let first = list else { throw .resolve(host, status) }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let descriptor = progresstree_socket(
                info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if descriptor >= 0 {
                if connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
                lastError = errno
                FileDescriptor.close(descriptor)
            } else {
                lastError = errno
            }
            entry = info.pointee.ai_next
        }
        throw .system("connect to \(host):\(port)", lastError)
    }

    /// A TCP socket connected to `host` and `port` within `milliseconds` (each address tried in turn, all
    /// within that time), non-blocking: read it after `Polling.waitReady`. Fails with `ETIMEDOUT` when no
    /// address answered in time. Name resolution (`getaddrinfo`) is not bounded by the time.
    package static func connect(host: String, port: UInt16, milliseconds: Int) throws(PlatformError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "\(port)", &hints, &list)
        guard status == 0, let first = list else { throw .resolve(host, status) }
        defer { freeaddrinfo(list) }
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        var lastError: Int32 = ETIMEDOUT
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry, ContinuousClock.now < deadline {
            entry = info.pointee.ai_next
            let descriptor = progresstree_socket(
                info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastError = errno
                continue
            }
            FileDescriptor.setNonBlocking(descriptor)
            if connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
            lastError = errno
            if lastError == EINPROGRESS {
                let wait = (deadline - ContinuousClock.now).pollMilliseconds
                if Polling.waitReady(descriptor, writable: true, milliseconds: wait) {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0 {
                        return descriptor
                    }
                    lastError = error == 0 ? errno : error
                } else {
                    lastError = ETIMEDOUT
                }
            }
            FileDescriptor.close(descriptor)
        }
        throw .system("connect to \(host):\(port)", lastError)
    }

    /// Whether `code` (an `errno` of `connect`) says that no time was given: `ETIMEDOUT`.
    package static func isTimeout(_ code: Int32) -> Bool { code == ETIMEDOUT }

    /// A TCP socket listening on the numeric IPv4 or IPv6 address `host` and `port` (0: any free port),
    /// non-blocking, and the port it got.
    package static func listen(host: String, port: UInt16, backlog: Int32) throws(PlatformError) -> (Int32, UInt16) {
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
            FileDescriptor.close(descriptor)
            throw .system("listen on \(host):\(port)", error)
        }
        var storage = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        // The port is at the same place in both address structures.
        FileDescriptor.setNonBlocking(descriptor)
        return (descriptor, UInt16(bigEndian: storage.sin6_port))
    }

    /// Accepts one connection on a listening socket (close-on-exec, blocking); `nil` when none waits on a
    /// non-blocking one.
    package static func accept(_ descriptor: Int32) throws(PlatformError) -> Int32? {
        while true {
            let connection = systemAccept(descriptor)
            if connection >= 0 {
                FileDescriptor.setCloseOnExec(connection)
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

    /// Shuts a socket down both ways, so that a thread blocked reading it returns; harmless on a pipe.
    package static func shutdownBoth(_ descriptor: Int32) {
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// The user id of this process's effective user.
    package static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// The user at the other end of a Unix-domain socket, if the system says.
    package static func peerUser(_ descriptor: Int32) -> UInt32? {
        var user: uid_t = 0
        return progresstree_peer_user(descriptor, &user) == 0 ? UInt32(user) : nil
    }

    // MARK: For this file and Sockets+Paths.swift

    /// A new stream socket of `family` (close-on-exec).
    static func streamSocket(family: Int32) throws(PlatformError) -> Int32 {
        let descriptor = progresstree_socket(family, streamType, 0)
        guard descriptor >= 0 else { throw .system("socket", errno) }
        return descriptor
    }

    /// Binds `descriptor` to `address` (a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un`).
    static func bind<Address>(_ descriptor: Int32, to address: Address) -> Int32 {
        withSocketAddress(address) { systemBind(descriptor, $0, $1) }
    }

    /// Connects `descriptor` to `address`, retrying `EINTR`: 0, or -1 and `errno`.
    static func connect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
        while true {
            let result = systemConnect(descriptor, address, length)
            if result == 0 || errno != EINTR { return result }
        }
    }

    static func listen(_ descriptor: Int32, backlog: Int32) -> Int32 {
        systemListen(descriptor, backlog)
    }

    /// Calls `body` with `address` (a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un`) seen as a `sockaddr`,
    /// and its length.
    static func withSocketAddress<Address, Result>(
        _ address: Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }
}

#if canImport(Glibc)
/// `SOCK_STREAM`: a case of an enumeration in Glibc, a number in the other C libraries.
private let streamType = Int32(SOCK_STREAM.rawValue)
#else
private let streamType = SOCK_STREAM
#endif

// The C library's calls themselves, outside `Sockets`, whose `connect`, `bind`, `listen` and `accept`
// hide them inside it.

private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}

private func systemBind(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    bind(descriptor, address, length)
}

private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    listen(descriptor, backlog)
}

private func systemAccept(_ descriptor: Int32) -> Int32 {
    accept(descriptor, nil, nil)
}
