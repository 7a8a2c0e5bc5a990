import Foundation
import ProgressTree

/// Imports an album: a few photos at a time, each a download (9 units) and a filter (1 unit).
struct Importer: Sendable {
    let options: Options
    /// Where the photos are written (`--destination`), if anywhere.
    var files: PhotoFiles?
    /// Says what was saved (the renderer's `print`: above the live area, or to a parent process).
    var report: @Sendable (String) -> Void = { _ in }

    /// How an import ended. The photos skipped are not counted here: the album's summary of
    /// `PhotosSkipped` counts them.
    struct Outcome: Sendable {
        var imported = 0
        var failed = 0
    }

    /// What `--fail-every N` makes every Nth download do, half way through.
    struct CameraStopped: Error, CustomStringConvertible {
        let fileName: String
        let every: Int
        var description: String { "\(fileName): the camera stopped answering (simulated with --fail-every \(every))" }
    }

    private enum PhotoResult: Sendable {
        case imported, skipped, failed, cancelled
    }

    /// Imports every photo into `album`; returns how many were imported and how many failed. A photo that
    /// fails is marked failed (which cancels its download and filter) and the import goes on with the others.
    func importAlbum(into album: ProgressNode) async -> Outcome {
        await withTaskGroup(of: PhotoResult.self) { group in
            var outcome = Outcome()
            let indices = options.photoIndices
            var next = 0
            func startNext() {
                guard next < indices.count, !album.isCancelled else { return }
                let index = indices[next]
                next += 1
                // Each photo attaches explicitly: one unit of the album.
                let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
                photo.localizedDescription = Self.fileName(index)
                photo.localizedAdditionalDescription = ""  // its units (9 + 1) mean nothing to a person
                group.addTask {
                    if isInLibrary(index) {
                        // Nothing to download: the photo says so, and is done. It leaves its 1 in the album.
                        photo[PhotosSkipped.self] = 1
                        photo.completedUnitCount = photo.totalUnitCount
                        return .skipped
                    }
                    do {
                        try await photo.withCancellationLink { try await importPhoto(index, into: photo) }
                        return .imported
                    } catch let error as CameraStopped {
                        files?.discard(Self.fileName(index))
                        photo.fail(error)  // its share stays where it stopped; the album goes on
                        return .failed
                    } catch {
                        files?.discard(Self.fileName(index))
                        return .cancelled  // the photo keeps what it had done
                    }
                }
            }
            for _ in 0..<options.concurrentImports { startNext() }
            while let result = await group.next() {
                switch result {
                case .imported: outcome.imported += 1
                case .failed: outcome.failed += 1
                case .skipped, .cancelled: break
                }
                startNext()
            }
            return outcome
        }
    }

    /// Whether the photo at `index` is in the library already (`--skip-every N`: every Nth photo).
    private func isInLibrary(_ index: Int) -> Bool {
        options.skipEvery.map { (index + 1) % $0 == 0 } ?? false
    }

    private func importPhoto(_ index: Int, into photo: ProgressNode) async throws {
        // The download: 9 of the photo's 10 units, in bytes.
        let size = Self.size(of: index)
        let download = ProgressNode(totalUnitCount: size, parent: photo, pendingUnitCount: 9)
        download.kind = .file
        download.fileOperationKind = .downloading
        download.fileURL = URL(fileURLWithPath: "/Volumes/Camera/DCIM/" + Self.fileName(index))
        let chunk = max(1, size / 40)
        let fails = options.failEvery.map { (index + 1) % $0 == 0 } ?? false
        let name = Self.fileName(index)
        try files?.create(name)
        while download.completedUnitCount < size {
            try await download.checkpoint()  // waits while paused, throws when cancelled
            try await Task.sleep(for: tick(milliseconds: 30 + (index % 3) * 10))
            let bytes = min(chunk, size - download.completedUnitCount)
            try files?.append(name, count: bytes, byte: UInt8(truncatingIfNeeded: index))
            download.advance(by: bytes)
            if fails, download.completedUnitCount >= size / 2 {
                throw CameraStopped(fileName: name, every: options.failEvery ?? 0)
            }
        }
        // The filter: 1 unit, attached implicitly. `applyFilter` knows nothing about the photo: the first
        // node it creates attaches to the node made current here.
        try await photo.withCurrent(pendingUnitCount: 1) {
            try await applyFilter()
        }
        if let files {
            try files.finish(name)
            report("Saved \(name) in \(files.directory.path)")
        }
    }

    private func applyFilter() async throws {
        let filter = ProgressNode(totalUnitCount: 8)
        filter.localizedDescription = "Applying filter"
        for _ in 0..<8 {
            try await filter.checkpoint()
            try await Task.sleep(for: tick(milliseconds: 40))
            filter.advance()
        }
    }

    private func tick(milliseconds: Int) -> Duration {
        .microseconds(Int(Double(milliseconds * 1000) / options.speed))
    }

    static func fileName(_ index: Int) -> String {
        "IMG_\(String(repeating: "0", count: 4 - String(index + 1).count))\(index + 1).jpg"
    }

    /// A photo's size in bytes: 1.5 to 4.5 MB, the same for the same index on every run.
    static func size(of index: Int) -> Int64 {
        var seed = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15
        seed ^= seed >> 29
        return 1_500_000 + Int64(seed % 3_000_000)
    }
}
