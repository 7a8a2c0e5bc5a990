import Foundation
import ProgressTree
import ProgressTreePlatform

/// The photos written to `--destination`: each photo's bytes go to `<name>.part` as they arrive, and the
/// file is renamed to `<name>` once the photo is imported. A photo that fails or is cancelled leaves
/// nothing, and neither does an import ended by a signal (`discardAll`): the directory never holds a
/// partial photo under a photo's name, and no `.part` file outlives the program.
///
/// Invariants: every file is created, written, renamed and removed under one lock, and after
/// `discardAll` none is created or renamed, so a signal's clean-up never races with a photo that is
/// being finished.
final class PhotoFiles: Sendable {
    private struct Files {
        /// The partial files open, by photo name.
        var open: [String: Int32] = [:]
        /// Set by `discardAll`: the program is ending.
        var isClosed = false
    }

    let directory: URL
    /// `Lock`, not `Mutex`: ThreadSanitizer sees its critical sections (CI runs the examples under it).
    private let files = Lock(Files())

    init(directory: String) {
        self.directory = URL(fileURLWithPath: directory, isDirectory: true)
    }

    private func partialPath(_ name: String) -> String {
        directory.appendingPathComponent(name + ".part").path
    }

    /// Starts the file of photo `name` (empty).
    func create(_ name: String) throws {
        try files.withLock { files in
            guard !files.isClosed else { throw CancellationError() }
            let descriptor = open(partialPath(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            files.open[name] = descriptor
        }
    }

    /// Appends `count` bytes of photo `name` (the same bytes for the same photo on every run).
    func append(_ name: String, count: Int64, byte: UInt8) throws {
        let bytes = [UInt8](repeating: byte, count: Int(count))
        try files.withLock { files in
            guard let descriptor = files.open[name] else { throw CancellationError() }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written > 0 else { throw CocoaError(.fileWriteUnknown) }
                offset += written
            }
        }
    }

    /// Photo `name` is imported: its file takes its name.
    func finish(_ name: String) throws {
        try files.withLock { files in
            guard let descriptor = files.open.removeValue(forKey: name) else { throw CancellationError() }
            close(descriptor)
            guard rename(partialPath(name), directory.appendingPathComponent(name).path) == 0 else {
                unlink(partialPath(name))
                throw CocoaError(.fileWriteUnknown)
            }
        }
    }

    /// Photo `name` failed or was cancelled: its partial file goes.
    func discard(_ name: String) {
        files.withLock { files in
            guard let descriptor = files.open.removeValue(forKey: name) else { return }
            close(descriptor)
            unlink(partialPath(name))
        }
    }

    /// The program ends (a signal): every partial file goes, and no other is made.
    func discardAll() {
        files.withLock { files in
            files.isClosed = true
            for (name, descriptor) in files.open {
                close(descriptor)
                unlink(partialPath(name))
            }
            files.open = [:]
        }
    }
}
