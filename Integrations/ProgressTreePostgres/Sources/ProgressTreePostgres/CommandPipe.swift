#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The command channel of a published job: a pipe whose read end the job's `ProgressPublisher` reads
/// commands from (applying each to its tree, in order, on its own thread), and whose write end the store
/// writes the commands it takes from PostgreSQL to. The one place this package makes system calls.
///
/// Thread safety: every member may be called from any thread; writes are one at a time (a lock), so the
/// lines of two writes never mix.
final class CommandPipe: Sendable {
    /// The end the publisher reads.
    let readDescriptor: Int32
    private let writeDescriptor: Mutex<Int32?>

    /// A new pipe; `nil` when the system has no descriptor left.
    init?() {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return nil }
        readDescriptor = descriptors[0]
        writeDescriptor = Mutex(descriptors[1])
    }

    /// Writes `line` and a newline, whole (a command line is at most 4 KiB, under the pipe's atomic size
    /// and its buffer, which the publisher empties as it reads). `false` once closed, or when it failed.
    @discardableResult
    func write(line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        return writeDescriptor.withLock { descriptor in
            guard let descriptor else { return false }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { buffer in
                    systemWrite(descriptor, buffer.baseAddress, buffer.count)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Closes both ends: the publisher was finished first, so nothing reads the channel any more.
    func close() {
        writeDescriptor.withLock { descriptor in
            if let open = descriptor { _ = systemClose(open) }
            descriptor = nil
        }
        _ = systemClose(readDescriptor)
    }
}

private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    Darwin.write(descriptor, bytes, count)
    #elseif canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Musl.write(descriptor, bytes, count)
    #endif
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    Darwin.close(descriptor)
    #elseif canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Musl.close(descriptor)
    #endif
}
