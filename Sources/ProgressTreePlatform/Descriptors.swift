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

/// Reading and writing descriptors, and their flags: the terminal's output and keys, and the streams of
/// publishing and mounting (sockets and pipes).
///
/// Every descriptor this module makes is close-on-exec (`pipe()` here, the sockets of `Sockets`, the
/// pollers of `Polling`), so that a process started by another thread never inherits one by accident;
/// only `ChildProcess.spawn` hands some on, under numbers of its choosing.
///
/// The functions marked async-signal-safe call only functions that POSIX lists as such (signal-safety(7)),
/// so signal handlers may use them.
package enum FileDescriptor {
    /// Writes all of `bytes` with `write(2)`, retrying `EINTR` and partial writes; `false`, the rest
    /// dropped, when the descriptor fails otherwise (the reader went away, it is closed) or, non-blocking,
    /// is full. Async-signal-safe.
    @discardableResult
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            guard case .wrote(let count) = write(descriptor, base + offset, bytes.count - offset) else {
                return false
            }
            offset += count
        }
        return true
    }

    /// One `write(2)` of at most `count` bytes, made again on `EINTR`. Async-signal-safe.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> WriteResult {
        while true {
            if let result = WriteResult(returned: systemWrite(descriptor, bytes, count)) { return result }
        }
    }

    /// Writes all of `bytes` to a stream (a socket or a pipe), retrying `EINTR` and partial writes, and
    /// waiting while a non-blocking descriptor is full; `false` once the descriptor fails (the reader went
    /// away). Sockets are written with `MSG_NOSIGNAL` where the system has it (not Darwin), so that a
    /// closed peer is an error, not a `SIGPIPE`; for pipes, and sockets on Darwin,
    /// `Signals.ignoreBrokenPipe()` must have been called.
    package static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            switch send(descriptor, bytes, from: offset, blocking: true) {
            case .wrote(let count): offset += count
            case .full: _ = Polling.waitReady(descriptor, writable: true, milliseconds: 100)
            case .failed: return false
            }
        }
        return true
    }

    /// One attempt to write `bytes` from `offset` to a stream (see `sendAll`). Unless `blocking`, it never
    /// waits: sockets are written with `MSG_DONTWAIT`; other descriptors (pipes) only when `poll` says
    /// there is room, and at most 4,096 bytes at a time (`PIPE_BUF` on Linux), which a pipe with room takes
    /// without waiting.
    package static func send(_ descriptor: Int32, _ bytes: [UInt8], from offset: Int, blocking: Bool) -> WriteResult {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, offset < buffer.count else { return .wrote(0) }
            let start = base + offset
            let count = buffer.count - offset
            let flags = blocking ? noBrokenPipeSignal : noBrokenPipeSignal | Int32(MSG_DONTWAIT)
            while true {
                let sent = systemSend(descriptor, start, count, flags)
                if sent < 0 && errno == ENOTSOCK {
                    if !blocking && !Polling.waitReady(descriptor, writable: true, milliseconds: 0) { return .full }
                    return write(descriptor, start, blocking ? count : min(count, 4096))
                }
                if let result = WriteResult(returned: sent) { return result }
            }
        }
    }

    /// Reads once into `buffer`, made again on `EINTR`: the count, 0 at the end, -1 on another error
    /// (`errno` says which; `EAGAIN` when a non-blocking descriptor has nothing).
    package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Reads once into `buffer` (see `read(_:into:)`).
    package static func read(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { read(descriptor, into: $0) }
    }

    package static func close(_ descriptor: Int32) {
        _ = systemClose(descriptor)
    }

    /// A pipe, both ends close-on-exec: (read end, write end).
    package static func pipe() throws(PlatformError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        let result = progresstree_pipe(&descriptors)
        guard result == 0 else { throw .system("pipe", result) }
        return (descriptors[0], descriptors[1])
    }

    /// Whether `descriptor` is open.
    package static func isOpen(_ descriptor: Int32) -> Bool {
        fcntl(descriptor, F_GETFD) != -1
    }

    package static func setCloseOnExec(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFD)
        if flags != -1 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Makes reads and writes of `descriptor` return at once instead of waiting (`O_NONBLOCK`, which
    /// belongs to the open file: only for descriptors the package owns).
    package static func setNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags != -1 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }
}

/// What one attempt to write gave.
package enum WriteResult: Equatable {
    /// This many bytes (at least one) were taken.
    case wrote(Int)
    /// None could be taken now (the reader is behind).
    case full
    /// The descriptor failed: the reader went away.
    case failed(Int32)

    /// What a `write` or `send` that returned `count` gave, reading `errno` when it is negative; `nil`
    /// for `EINTR`: nothing was written, and the call is to be made again. Async-signal-safe.
    init?(returned count: Int) {
        if count > 0 {
            self = .wrote(count)
            return
        }
        // 0 is no error, but nothing taken of a count above 0: the descriptor takes no more.
        let code = count < 0 ? errno : 0
        switch code {
        case EINTR: return nil
        case EAGAIN, EWOULDBLOCK: self = .full
        default: self = .failed(code)
        }
    }
}

#if canImport(Darwin)
/// Darwin has no `MSG_NOSIGNAL`: writing to a socket whose peer is gone raises `SIGPIPE` there, as
/// writing to a pipe does everywhere.
private let noBrokenPipeSignal: Int32 = 0
#else
private let noBrokenPipeSignal = Int32(MSG_NOSIGNAL)
#endif

// The C library's calls themselves, outside `FileDescriptor`, whose `write`, `read` and `close` hide
// them inside it. The one `write(2)` of the package's libraries: the imports above choose the C library.

private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

private func systemSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    send(descriptor, bytes, count, flags)
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

/// The process's standard error, where the library's own diagnostics go.
package enum StandardError {
    /// Writes `text` whole to standard error (descriptor 2); a failed write is dropped: a diagnostic never
    /// stops the program.
    package static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = FileDescriptor.writeAll(2, UnsafeRawBufferPointer($0)) }
    }
}
