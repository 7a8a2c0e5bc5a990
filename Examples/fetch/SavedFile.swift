import Foundation
import Synchronization

/// Puts a downloaded file in its place without ever overwriting one or leaving a partial file under the
/// final name: the download (in URLSession's temporary folder) is moved next to its destination under a
/// hidden temporary name, then linked to the final name (`link(2)` fails if that exists) and the
/// temporary name removed. A second Ctrl-C, SIGTERM or SIGHUP that ends the program meanwhile removes the
/// temporary file (`removeAll()`).
enum SavedFile {
    /// The temporary files being placed, removed if the program is ended meanwhile.
    private static let partial = Mutex<Set<String>>([])

    /// Why a download could not be saved.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func place(_ download: URL, at destination: URL) throws {
        let folder = destination.deletingLastPathComponent().path
        let temporary = folder + "/.\(destination.lastPathComponent).fetch-\(UUID().uuidString)"
        partial.withLock { _ = $0.insert(temporary) }
        defer {
            unlink(temporary)
            partial.withLock { _ = $0.remove(temporary) }
        }
        do {
            try FileManager.default.moveItem(atPath: download.path, toPath: temporary)
        } catch {
            throw Failure(description: "cannot write in \(folder): \(reason(error))")
        }
        guard link(temporary, destination.path) == 0 else {
            let code = errno
            throw Failure(
                description: code == EEXIST
                    ? "\(destination.path) already exists"
                    : "cannot save \(destination.path): \(String(cString: strerror(code)))")
        }
    }

    /// Removes the temporary files being placed (the program is ending).
    static func removeAll() {
        for path in partial.withLock({ $0 }) { unlink(path) }
    }

    /// The system's words for a file error ("Permission denied").
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return nsError.localizedDescription
    }
}
