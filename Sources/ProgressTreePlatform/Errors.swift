#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// `errno`: the code of the calling thread's last failed call, and what it says.
package enum ErrorNumber {
    /// `errno` of the last failed call on this thread.
    package static var last: Int32 { errno }

    /// The `errno` of a read that found nothing on a non-blocking descriptor.
    package static let wouldBlock = EAGAIN

    /// Whether a read failed with `code` because the descriptor cannot be read at all (a pipe's write
    /// end, a directory), rather than because its other end went away.
    package static func isUnreadable(_ code: Int32) -> Bool {
        code == EBADF || code == EINVAL || code == EISDIR
    }

    /// What `code` means, in `strerror`'s words.
    package static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Runs `body`, then gives `errno` back the value it had: a signal handler must leave it as the code
    /// it interrupted had it. Async-signal-safe.
    package static func preserving(_ body: () -> Void) {
        let saved = errno
        body()
        errno = saved
    }
}

/// Why this module could not set something up (a socket, a pipe, a process). The streaming module throws
/// it on as its public `StreamSetupError`, case for case.
package enum PlatformError: Error, Sendable, Equatable {
    /// A system call failed: what was tried and `errno`.
    case system(String, Int32)
    /// A host name or address could not be resolved: the host and `getaddrinfo`'s status.
    case resolve(String, Int32)
    /// A Unix-domain socket path that others could replace or reach: the path and why.
    case unsafePath(String, String)
}
