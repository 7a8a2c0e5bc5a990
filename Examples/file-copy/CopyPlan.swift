import Foundation

/// What to copy: every directory, file and symbolic link below SOURCE, found before anything is written,
/// so that a missing source, an existing destination or an unreadable file stops the program before it
/// creates anything.
struct CopyPlan: Sendable {
    enum Entry: Sendable {
        case directory(path: String, metadata: FileMetadata)
        case file(path: String, size: Int64, metadata: FileMetadata)
        /// Another name of a file copied earlier (`target`, relative to SOURCE): a hard link in DEST too.
        case hardLink(path: String, target: String)
        case symbolicLink(path: String, target: String, metadata: FileMetadata?)
    }

    let source: String
    let destination: String
    /// In copying order: a directory comes before what it holds. Paths are relative to SOURCE and DEST.
    let entries: [Entry]
    /// SOURCE's own permissions and times, given to DEST once everything in it is copied.
    let rootMetadata: FileMetadata?
    let fileCount: Int
    let totalBytes: Int64
    /// Sockets, FIFOs and devices, which are not copied.
    let skipped: [String]

    /// How often the scan reports and looks for a cancellation, in entries.
    static let reportInterval = 256

    /// The checks of SOURCE and DEST themselves, quick, before the search of SOURCE.
    static func checkArguments(source: String, destination: String) throws {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw Problem(description: "\(source): no such file or directory")
        }
        guard isDirectory.boolValue else {
            throw Problem(description: "\(source) is not a directory (file-copy copies directory trees)")
        }
        let isLink = (try? fileManager.destinationOfSymbolicLink(atPath: destination)) != nil  // even a dangling one
        if fileManager.fileExists(atPath: destination) || isLink {
            throw Problem(description: "\(destination) already exists (file-copy never overwrites; choose a new name)")
        }
        let parent = (destination as NSString).deletingLastPathComponent
        let parentPath = parent.isEmpty ? "." : parent
        guard fileManager.fileExists(atPath: parentPath, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw Problem(description: "\(parentPath): no such directory to create \(destination) in")
        }
        guard fileManager.isWritableFile(atPath: parentPath) else {
            throw Problem(description: "\(parentPath): permission denied (cannot create \(destination) there)")
        }
        let resolvedSource = URL(fileURLWithPath: source).resolvingSymlinksInPath().path
        let resolvedDestination = URL(fileURLWithPath: parentPath).resolvingSymlinksInPath()
            .appendingPathComponent((destination as NSString).lastPathComponent).path
        if resolvedDestination == resolvedSource || resolvedDestination.hasPrefix(resolvedSource + "/") {
            throw Problem(description: "\(destination) is inside \(source): a directory cannot be copied into itself")
        }
    }

    /// A problem found before anything was written: the program reports it and exits with status 1.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Finds what to copy. `onFound` is called with the number of entries found so far, every
    /// `reportInterval` entries; `isCancelled` is checked as often, and makes the scan throw
    /// `CancellationError`. `pauseAfterEntries` is a test hook: the scan stops there, says so on standard
    /// error and waits to be cancelled.
    init(
        source: String, destination: String, onFound: (Int) -> Void = { _ in }, isCancelled: () -> Bool = { false },
        pauseAfterEntries: Int? = nil
    ) throws {
        try Self.checkArguments(source: source, destination: destination)
        let fileManager = FileManager.default

        // Read before the listing, which changes SOURCE's access time.
        let rootMetadata = FileMetadata.read(source)?.metadata
        var entries: [Entry] = []
        var unreadable: [String] = []
        var skipped: [String] = []
        var fileCount = 0
        var totalBytes: Int64 = 0
        // Files with more than one link, by identity: the first path met is copied, the others linked.
        var linked: [FileIdentity: String] = [:]
        // Depth first, names sorted: the order of the copy and of its labels is the same on every run.
        var folders = [""]
        while let folder = folders.popLast() {
            let folderPath = folder.isEmpty ? source : source + "/" + folder
            let names: [String]
            do {
                names = try fileManager.contentsOfDirectory(atPath: folderPath).sorted()
            } catch {
                unreadable.append(folderPath)
                continue
            }
            var subfolders: [String] = []
            for name in names {
                let found = entries.count + unreadable.count + skipped.count
                if found % Self.reportInterval == 0 {
                    onFound(found)
                    if isCancelled() { throw CancellationError() }
                }
                if let pauseAfterEntries, found == pauseAfterEntries {
                    onFound(found)
                    FileHandle.standardError.write(Data("file-copy: scan paused after \(found) entries\n".utf8))
                    while !isCancelled() { usleep(10_000) }
                    throw CancellationError()
                }
                let path = folder.isEmpty ? name : folder + "/" + name
                let fullPath = source + "/" + path
                guard let attributes = try? fileManager.attributesOfItem(atPath: fullPath) else {
                    unreadable.append(fullPath)
                    continue
                }
                switch attributes[.type] as? FileAttributeType {
                case .typeDirectory?:
                    guard let metadata = FileMetadata.read(fullPath)?.metadata else {
                        unreadable.append(fullPath)
                        continue
                    }
                    entries.append(.directory(path: path, metadata: metadata))
                    subfolders.append(path)
                case .typeRegular?:
                    guard fileManager.isReadableFile(atPath: fullPath) else {
                        unreadable.append(fullPath)
                        continue
                    }
                    guard let (metadata, linkCount, identity) = FileMetadata.read(fullPath) else {
                        unreadable.append(fullPath)
                        continue
                    }
                    fileCount += 1
                    if linkCount > 1 {
                        if let first = linked[identity] {
                            entries.append(.hardLink(path: path, target: first))
                            continue
                        }
                        linked[identity] = path
                    }
                    let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
                    entries.append(.file(path: path, size: size, metadata: metadata))
                    totalBytes += size
                case .typeSymbolicLink?:
                    guard let target = try? fileManager.destinationOfSymbolicLink(atPath: fullPath) else {
                        unreadable.append(fullPath)
                        continue
                    }
                    entries.append(
                        .symbolicLink(path: path, target: target, metadata: FileMetadata.read(fullPath)?.metadata))
                default:
                    skipped.append(path)
                }
            }
            folders.append(contentsOf: subfolders.reversed())
        }
        if !unreadable.isEmpty {
            let list = unreadable.prefix(5).joined(separator: "\n  ")
            let more = unreadable.count > 5 ? "\n  … and \(unreadable.count - 5) more" : ""
            throw Problem(description: "permission denied: cannot read\n  \(list)\(more)\nNothing was copied.")
        }
        self.source = source
        self.destination = destination
        self.entries = entries
        self.rootMetadata = rootMetadata
        self.fileCount = fileCount
        self.totalBytes = totalBytes
        self.skipped = skipped
    }
}
