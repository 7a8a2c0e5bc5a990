import Foundation

/// A temporary folder for a file-copy test: an empty `source` folder in it, and `destination`, where the
/// copy goes (not created). `remove()` deletes it all.
struct CopyFolders {
    let root: URL
    var source: URL { root.appendingPathComponent("source") }
    var destination: URL { root.appendingPathComponent("copy") }

    init(prefix: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("source"), withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}
