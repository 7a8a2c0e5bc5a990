import Foundation
import ProgressTree

/// Imports an album: a few photos at a time, each a download (9 units) and a filter (1 unit).
struct Importer: Sendable {
    let options: Options

    /// Imports every photo into `album`; returns how many were imported before a cancellation.
    func importAlbum(into album: ProgressNode) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            var imported = 0
            var next = 0
            func startNext() {
                guard next < options.photos, !album.isCancelled else { return }
                let index = next
                next += 1
                // Each photo attaches explicitly: one unit of the album.
                let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
                photo.localizedDescription = Self.fileName(index)
                photo.localizedAdditionalDescription = ""  // its units (9 + 1) mean nothing to a person
                group.addTask {
                    do {
                        try await photo.withCancellationLink { try await importPhoto(index, into: photo) }
                        return true
                    } catch {
                        return false  // cancelled: the photo keeps what it had done
                    }
                }
            }
            for _ in 0..<options.concurrentImports { startNext() }
            while let photoImported = await group.next() {
                if photoImported { imported += 1 }
                startNext()
            }
            return imported
        }
    }

    private func importPhoto(_ index: Int, into photo: ProgressNode) async throws {
        // The download: 9 of the photo's 10 units, in bytes.
        let size = Self.size(of: index)
        let download = ProgressNode(totalUnitCount: size, parent: photo, pendingUnitCount: 9)
        download.kind = .file
        download.fileOperationKind = .downloading
        download.fileURL = URL(fileURLWithPath: "/Volumes/Camera/DCIM/" + Self.fileName(index))
        let chunk = max(1, size / 40)
        while download.completedUnitCount < size {
            try await download.checkpoint()  // waits while paused, throws when cancelled
            try await Task.sleep(for: tick(milliseconds: 30 + (index % 3) * 10))
            download.advance(by: min(chunk, size - download.completedUnitCount))
        }
        // The filter: 1 unit, attached implicitly. `applyFilter` knows nothing about the photo: the first
        // node it creates attaches to the node made current here.
        try await photo.withCurrent(pendingUnitCount: 1) {
            try await applyFilter()
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
