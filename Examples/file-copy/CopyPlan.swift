import Foundation

/// What to copy: every directory, file and symbolic link below SOURCE, found before anything is written,
/// so that a missing source, an existing destination or an unreadable file stops the program before it
/// creates anything.
///
/// The search reads each folder once, through a descriptor (`getdents`), and each entry with one `fstatat`
/// relative to it: the copy then needs no second look at an entry.
struct CopyPlan: Sendable {
    /// Where an entry is: its folder (an index into `folders`) and its name in it.
    struct Location: Sendable {
        var folder: Int
        var name: String
    }

    enum Entry: Sendable {
        case directory(Location, metadata: FileMetadata)
        /// `mayHaveHoles`: fewer blocks allocated than the size needs, so the copy looks for holes.
        case file(Location, size: Int64, metadata: FileMetadata, mayHaveHoles: Bool)
        /// Another name of a file copied earlier (`target`, relative to SOURCE): a hard link in DEST too.
        case hardLink(Location, target: String)
        case symbolicLink(Location, target: String, metadata: FileMetadata)

        var location: Location {
            switch self {
            case .directory(let location, _), .file(let location, _, _, _), .hardLink(let location, _),
                .symbolicLink(let location, _, _):
                location
            }
        }
    }

    let source: String
    /// SOURCE as an absolute path, for the files' URLs.
    let absoluteSource: String
    let destination: String
    /// SOURCE itself ("") and every folder below it, relative to SOURCE (and DEST), in the order found.
    let folders: [String]
    /// In copying order: a directory comes before what it holds, and the entries of one folder come one
    /// after the other. Paths are relative to SOURCE and DEST.
    let entries: [Entry]
    /// SOURCE's own permissions and times, given to DEST once everything in it is copied.
    let rootMetadata: FileMetadata?
    let fileCount: Int
    let totalBytes: Int64
    /// Sockets, FIFOs and devices, which are not copied.
    let skipped: [String]

    /// How often the scan reports and looks for a cancellation, in entries.
    static let reportInterval = 256

    /// The path of `location` relative to SOURCE and DEST.
    func path(of location: Location) -> String {
        let folder = folders[location.folder]
        return folder.isEmpty ? location.name : folder + "/" + location.name
    }

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

        let root = open(source, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else {
            throw Problem(description: "permission denied: cannot read\n  \(source)\nNothing was copied.")
        }
        defer { close(root) }
        // Read before the listing, which changes SOURCE's access time.
        var rootStatus = stat()
        let rootMetadata = fstat(root, &rootStatus) == 0 ? FileMetadata(rootStatus) : nil
        var folders = [""]
        var entries: [Entry] = []
        var unreadable: [String] = []
        var skipped: [String] = []
        var fileCount = 0
        var totalBytes: Int64 = 0
        // Files with more than one link, by identity: the first path met is copied, the others linked.
        var linked: [FileIdentity: String] = [:]
        let isRoot = geteuid() == 0
        // Depth first, names sorted: the order of the copy and of its labels is the same on every run.
        var pending = [0]
        while let folderIndex = pending.popLast() {
            let folder = folders[folderIndex]
            let folderPath = folder.isEmpty ? source : source + "/" + folder
            guard let listing = FolderListing(folder.isEmpty ? "." : folder, in: root) else {
                unreadable.append(folderPath)
                continue
            }
            defer { listing.end() }
            var subfolders: [Int] = []
            for name in listing.names().sorted() {
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
                let location = Location(folder: folderIndex, name: name)
                let fullPath = folderPath + "/" + name
                var status = stat()
                guard fstatat(listing.descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                    unreadable.append(fullPath)
                    continue
                }
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    entries.append(.directory(location, metadata: FileMetadata(status)))
                    folders.append(folder.isEmpty ? name : folder + "/" + name)
                    subfolders.append(folders.count - 1)
                case S_IFREG:
                    guard Self.isReadable(status, isRoot: isRoot, name: name, in: listing.descriptor) else {
                        unreadable.append(fullPath)
                        continue
                    }
                    fileCount += 1
                    if status.st_nlink > 1 {
                        let identity = FileIdentity(status)
                        if let first = linked[identity] {
                            entries.append(.hardLink(location, target: first))
                            continue
                        }
                        linked[identity] = folder.isEmpty ? name : folder + "/" + name
                    }
                    let size = Int64(status.st_size)
                    entries.append(
                        .file(
                            location, size: size, metadata: FileMetadata(status),
                            mayHaveHoles: SparseRegions.mayHaveHoles(status)))
                    totalBytes += size
                case S_IFLNK:
                    guard let target = Self.linkTarget(name, in: listing.descriptor, size: Int(status.st_size)) else {
                        unreadable.append(fullPath)
                        continue
                    }
                    entries.append(.symbolicLink(location, target: target, metadata: FileMetadata(status)))
                default:
                    skipped.append(folder.isEmpty ? name : folder + "/" + name)
                }
            }
            pending.append(contentsOf: subfolders.reversed())
        }
        if !unreadable.isEmpty {
            let list = unreadable.prefix(5).joined(separator: "\n  ")
            let more = unreadable.count > 5 ? "\n  … and \(unreadable.count - 5) more" : ""
            throw Problem(description: "permission denied: cannot read\n  \(list)\(more)\nNothing was copied.")
        }
        self.source = source
        absoluteSource = URL(fileURLWithPath: source, isDirectory: true).path
        self.destination = destination
        self.folders = folders
        self.entries = entries
        self.rootMetadata = rootMetadata
        self.fileCount = fileCount
        self.totalBytes = totalBytes
        self.skipped = skipped
    }

    /// Whether this process may read the regular file `name` in the folder open on `folder`, whose status
    /// is `status`. Root may read any file, and its owner's permission bits decide for the owner (an access
    /// control list cannot change them); for anyone else the system decides (`faccessat`), groups and
    /// access control lists included.
    private static func isReadable(_ status: stat, isRoot: Bool, name: String, in folder: Int32) -> Bool {
        if isRoot { return true }
        if status.st_uid == geteuid() { return status.st_mode & S_IRUSR != 0 }
        return faccessat(folder, name, R_OK, AT_EACCESS) == 0
    }

    /// The target of the symbolic link `name` in the folder open on `folder` (`readlinkat`), whose status
    /// says it is `size` bytes long.
    private static func linkTarget(_ name: String, in folder: Int32, size: Int) -> String? {
        var capacity = max(size, 255) + 1
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let length = readlinkat(folder, name, &buffer, capacity)
            if length < 0 { return nil }
            if length < capacity {
                return buffer.withUnsafeBytes { String(decoding: $0.prefix(length), as: UTF8.self) }
            }
            capacity *= 2  // the link grew since the status was read
        }
    }
}

/// One folder of SOURCE, open for the search: its entries' names, and its descriptor for `fstatat`.
struct FolderListing {
    private let directory: OpaquePointer
    /// The folder's descriptor, owned by the listing (closed by `close()`).
    let descriptor: Int32

    /// Opens `path`, relative to the folder open on `parent`, without following a symbolic link.
    init?(_ path: String, in parent: Int32) {
        let descriptor = openat(parent, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard let directory = fdopendir(descriptor) else {
            close(descriptor)
            return nil
        }
        self.directory = directory
        self.descriptor = descriptor
    }

    /// The names of the entries, without "." and "..".
    func names() -> [String] {
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Closes the folder and its descriptor.
    func end() {
        closedir(directory)
    }
}
