import ProgressTreePlatform

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
        case .system(let what, let code): "\(what): \(ErrorNumber.text(code))"
        case .resolve(let host, _): "cannot resolve \(host)"
        case .unsafePath(let path, let why): "\(path): \(why)"
        }
    }
}

extension StreamSetupError {
    /// The platform module's failure, case for case.
    init(_ error: PlatformError) {
        switch error {
        case .system(let what, let code): self = .system(what, code)
        case .resolve(let host, let status): self = .resolve(host, status)
        case .unsafePath(let path, let why): self = .unsafePath(path, why)
        }
    }

    /// The value of `call`, which sets something up through the platform module; its failure thrown as a
    /// `StreamSetupError`.
    static func rethrowing<Value>(_ call: @autoclosure () throws(PlatformError) -> Value) throws(StreamSetupError)
        -> Value
    {
        do {
            return try call()
        } catch {
            throw StreamSetupError(error)
        }
    }
}
