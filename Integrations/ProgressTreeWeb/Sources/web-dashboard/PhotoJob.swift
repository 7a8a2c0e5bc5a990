import Foundation
import ProgressTree

/// photo-import's job (the root package's `Examples/photo-import`, whose importer is not a library): an
/// album of photos imported three at a time, each a download of its bytes (9 of its 10 units) and a filter
/// (1 unit); with `failEvery`, every Nth download fails half way, which fails that photo (cancelling its
/// download) while the others go on.
struct PhotoJob: Sendable {
    var photos = 12
    var speed = 1.0
    var failEvery: Int?

    /// What `failEvery` makes every Nth download do, half way through.
    struct CameraStopped: Error, CustomStringConvertible {
        let fileName: String
        let every: Int
        var description: String { "\(fileName): the camera stopped answering (simulated with --fail-every \(every))" }
    }

    /// Why the album fails when photos did: it is incomplete.
    struct Incomplete: Error, CustomStringConvertible {
        let failed: Int
        let cancelled: Int
        let photos: Int
        var description: String {
            "\(failed) of \(photos) photos failed" + (cancelled > 0 ? ", \(cancelled) cancelled" : "")
        }
    }

    /// How an import ended: the photos imported, failed, and cancelled on their own (a Cancel on a photo's
    /// row; not counted when the album was cancelled).
    struct Outcome: Sendable, Equatable {
        var imported = 0
        var failed = 0
        var cancelled = 0
    }

    private enum PhotoResult: Sendable {
        case imported, failed, cancelled
    }

    /// Imports every photo into `album`; says how each ended.
    func run(into album: ProgressNode) async -> Outcome {
        await withTaskGroup(of: PhotoResult.self) { group in
            var next = 0
            var outcome = Outcome()
            func startNext() {
                guard next < photos, !album.isCancelled else { return }
                let index = next
                next += 1
                let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
                photo.localizedDescription = Self.fileName(index)
                photo.localizedAdditionalDescription = ""
                group.addTask {
                    do {
                        try await importPhoto(index, into: photo)
                        return .imported
                    } catch let error as CameraStopped {
                        photo.fail(error)
                        return .failed
                    } catch {
                        return .cancelled  // the photo keeps what it had done
                    }
                }
            }
            for _ in 0..<3 { startNext() }
            while let result = await group.next() {
                switch result {
                case .imported: outcome.imported += 1
                case .failed: outcome.failed += 1
                case .cancelled: if !album.isCancelled { outcome.cancelled += 1 }
                }
                startNext()
            }
            return outcome
        }
    }

    private func importPhoto(_ index: Int, into photo: ProgressNode) async throws {
        let size = Self.size(of: index)
        let download = ProgressNode(totalUnitCount: size, parent: photo, pendingUnitCount: 9)
        download.kind = .file
        download.fileOperationKind = .downloading
        // Named by its file, as photo-import's downloads are: "Downloading “IMG_0004.jpg”…".
        download.fileURL = URL(fileURLWithPath: "/Volumes/Camera/DCIM/" + Self.fileName(index))
        let chunk = max(1, size / 40)
        let fails = failEvery.map { (index + 1) % $0 == 0 } ?? false
        while download.completedUnitCount < size {
            try await download.checkpoint()  // waits while paused, throws when cancelled
            try await Task.sleep(for: tick(milliseconds: 30 + (index % 3) * 10))
            download.advance(by: min(chunk, size - download.completedUnitCount))
            if fails, download.completedUnitCount >= size / 2 {
                throw CameraStopped(fileName: Self.fileName(index), every: failEvery ?? 0)
            }
        }
        let filter = ProgressNode(totalUnitCount: 8, parent: photo, pendingUnitCount: 1)
        filter.localizedDescription = "Applying filter"
        for _ in 0..<8 {
            try await filter.checkpoint()
            try await Task.sleep(for: tick(milliseconds: 40))
            filter.advance()
        }
    }

    private func tick(milliseconds: Int) -> Duration {
        .microseconds(Int(Double(milliseconds * 1000) / speed))
    }

    static func fileName(_ index: Int) -> String {
        "IMG_\(String(repeating: "0", count: max(0, 4 - String(index + 1).count)))\(index + 1).jpg"
    }

    /// A photo's size in bytes: 1.5 to 4.5 MB, the same for the same index on every run.
    static func size(of index: Int) -> Int64 {
        var seed = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15
        seed ^= seed >> 29
        return 1_500_000 + Int64(seed % 3_000_000)
    }
}
