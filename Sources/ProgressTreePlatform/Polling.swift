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

/// Waiting for descriptors: `poll` for one or a few, and the poller of the streaming module's reactor,
/// which waits for all of a process's streams (epoll on Linux).
package enum Polling {
    /// Waits until `descriptor` is readable (or writable), has hung up, or `milliseconds` pass (-1: no
    /// limit); `true` unless the time ran out.
    package static func waitReady(_ descriptor: Int32, writable: Bool = false, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(writable ? POLLOUT : POLLIN), revents: 0)
        while true {
            let result = poll(&entry, 1, milliseconds)
            if result < 0 && errno == EINTR { continue }
            return result != 0
        }
    }

    /// Of `descriptors`, those readable or hung up within `milliseconds` (-1: no limit), with `poll`.
    package static func pollReadable(_ descriptors: [Int32], milliseconds: Int32) -> [Int32] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&entries, nfds_t(entries.count), milliseconds)
        guard count > 0 else { return [] }
        return entries.filter { $0.revents != 0 }.map(\.fd)
    }

    /// Waits `milliseconds` (no descriptor).
    package static func sleep(milliseconds: Int32) {
        var none = pollfd(fd: -1, events: 0, revents: 0)
        _ = poll(&none, 1, milliseconds)
    }

    // MARK: The reactor's poller

    /// An epoll descriptor (Linux), close-on-exec, or `nil` where the reactor polls with `poll`.
    package static func makePoller() -> Int32? {
        let descriptor = progresstree_poller_create()
        return descriptor >= 0 ? descriptor : nil
    }

    /// Adds `descriptor` to `poller`: 0, or `errno` (`EPERM`: a regular file, always readable).
    package static func pollerAdd(_ poller: Int32, _ descriptor: Int32) -> Int32 {
        progresstree_poller_add(poller, descriptor)
    }

    package static func pollerRemove(_ poller: Int32, _ descriptor: Int32) {
        _ = progresstree_poller_remove(poller, descriptor)
    }

    /// Stores the descriptors of `poller` ready within `milliseconds` (-1: no limit) at the start of
    /// `ready`; how many.
    package static func pollerWait(_ poller: Int32, into ready: inout [Int32], milliseconds: Int32) -> Int {
        let capacity = Int32(ready.count)
        let count = ready.withUnsafeMutableBufferPointer {
            progresstree_poller_wait(poller, $0.baseAddress, capacity, milliseconds)
        }
        return max(0, Int(count))
    }
}
