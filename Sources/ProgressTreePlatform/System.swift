#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

// What the model calls from the C library besides threads (`Threads.swift`): the process's symbols and
// the elementary functions. What it calls on a hot path is `public` and `@inlinable` (see `Lock` for why
// not `package`).

/// Symbols of the running process (the Swift runtime's entry points, ThreadSanitizer's annotations).
package enum ProcessSymbols {
    /// The address of the symbol `name` in the running process, or `nil` where it is not exported.
    package static func address(of name: String) -> UnsafeMutableRawPointer? {
        guard let process = dlopen(nil, RTLD_LAZY) else { return nil }
        return dlsym(process, name)
    }
}

/// eˣ, from the C library (the toolchain's modules have no elementary functions of their own).
@inlinable
public func exponential(_ x: Double) -> Double {
    exp(x)
}

/// eˣ − 1, exact near 0, from the C library.
@inlinable
public func exponentialMinusOne(_ x: Double) -> Double {
    expm1(x)
}
