import Foundation

/// What the node of an adopted `URLSessionTask` fails with when the task completes with an error: the
/// error's `localizedDescription` ("Failed to connect to 127.0.0.1 port 8080 …", "Could not connect to the
/// server."), on every platform. (A node keeps the description of its failure, not the error; swift-corelibs-
/// foundation's `URLError` is no `LocalizedError`, and its `description` is the whole `NSError` dump.)
struct TaskFailure: Error, CustomStringConvertible {
    let description: String

    init(_ error: any Error) {
        description = error.localizedDescription
    }
}
