import Foundation
import Synchronization

/// The folder URLSession downloads into while fetch runs: one of its own, removed when fetch ends.
///
/// URLSession keeps a download in the temporary folder (`TMPDIR`) until its delegate moves it. On Linux,
/// swift-corelibs-foundation leaves the file there after the delegate returns, and leaves the partial file
/// of a cancelled task (Apple's URLSession removes both), so every cancelled download would stay in /tmp.
/// fetch points `TMPDIR` at a folder of its own, made in the temporary folder before its session starts,
/// and removes that folder with whatever is left in it when it ends: after its downloads, or on a second
/// Ctrl-C, SIGTERM or SIGHUP (`ExampleDisplay`'s clean-up). A fetch that could not clean up (`kill -9`,
/// a power cut) leaves its folder, named after its process ("fetch-<pid>-XXXXXX"): the next fetch removes
/// the folders of processes that are gone (`removeLeftovers`).
enum DownloadsFolder {
    private static let path = Mutex<String?>(nil)

    /// Makes the folder (mode 0700) and points `TMPDIR` at it; changes nothing if it cannot be made. Call
    /// it before any thread reads the environment: `setenv(3)` is not safe beside readers.
    static func create() {
        let base = NSTemporaryDirectory()
        let temporary = base.hasSuffix("/") ? base : base + "/"
        removeLeftovers(in: temporary)
        var template = Array(temporary.utf8CString.dropLast())
        template += Array("fetch-\(getpid())-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return }
        let folder = String(cString: made)
        guard setenv("TMPDIR", folder, 1) == 0 else {
            rmdir(folder)
            return
        }
        path.withLock { $0 = folder }
    }

    /// Removes the folders that fetches which are gone left in `base` ("fetch-<pid>-XXXXXX" of a process
    /// that no longer runs, owned by this user): the partial downloads of a fetch ended by `kill -9`.
    /// A folder whose process runs (another fetch, or a process that reused the number) is left alone.
    static func removeLeftovers(in base: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix("fetch-") {
            let parts = name.split(separator: "-")
            guard parts.count == 3, let pid = pid_t(parts[1]), pid > 0, parts[2].count == 6 else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }  // that process still runs
            var info = stat()
            guard lstat(base + name, &info) == 0, info.st_uid == getuid(), info.st_mode & S_IFMT == S_IFDIR
            else { continue }
            try? FileManager.default.removeItem(atPath: base + name)
        }
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
