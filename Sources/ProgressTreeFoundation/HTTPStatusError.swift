import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why the node of an adopted `URLSessionTask` failed when it was adopted with `failsOnHTTPStatus: true`
/// and the server answered with a status of 400 or more: the task itself succeeded (an HTTP error is a
/// response, not a transport error), the work did not.
///
/// Its description names the status and the words HTTP has for it: "HTTP 404 (Not Found)" on Linux;
/// Apple's Foundation spells the words in lowercase ("not found").
public struct HTTPStatusError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The response's status code, such as 404.
    public let statusCode: Int

    /// An error for `statusCode`.
    public init(statusCode: Int) {
        self.statusCode = statusCode
    }

    /// "HTTP 404 (Not Found)": what the failed node shows.
    public var description: String {
        "HTTP \(statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: statusCode)))"
    }
}
