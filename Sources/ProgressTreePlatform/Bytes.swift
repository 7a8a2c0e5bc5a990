#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Searching bytes with the C library's `memchr`, for the wire format's reader (a line's end).
package enum Bytes {
    /// The index of the first `byte` in `bytes` at or after `start`, if any (`memchr`).
    package static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
