import Foundation
import Synchronization

/// The folder URLSession downloads into while fetch runs: one of its own, removed when fetch ends.
///
/// URLSession keeps a download in the temporary folder (`TMPDIR`) until its delegate moves it. On Linux,
/// swift-corelibs-foundation leaves the file there after the delegate returns, and leaves the partial file
/// of a cancelled task (Apple's URLSession removes both), so every cancelled download would stay in /tmp.
/// fetch points `TMPDIR` at a folder of its own, made in the temporary folder before its session starts,
/// and removes that folder with whatever is left in it when it ends: after its downloads, or on a second
/// Ctrl-C, SIGTERM or SIGHUP (`ExampleDisplay`'s clean-up).
enum DownloadsFolder {
    private static let path = Mutex<String?>(nil)

    /// Makes the folder (mode 0700) and points `TMPDIR` at it; changes nothing if it cannot be made. Call
    /// it before any thread reads the environment: `setenv(3)` is not safe beside readers.
    static func create() {
        let base = NSTemporaryDirectory()
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
        template += Array("fetch-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return }
        let folder = String(cString: made)
        guard setenv("TMPDIR", folder, 1) == 0 else {
            rmdir(folder)
            return
        }
        path.withLock { $0 = folder }
    }

    /// Removes the folder and what is in it (downloads that were not placed). Calling it again does nothing.
    static func remove() {
        let taken = path.withLock { path in
            let folder = path
            path = nil
            return folder
        }
        guard let folder = taken else { return }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
