import ProgressTree

/// One job of the application: resizing a folder of images, two at a time, each image four steps. With
/// `failEvery`, every Nth image fails half way; the job then fails at the end ("2 of 8 images failed"), as
/// a job that did not do all of its work does.
struct ResizeJob: Sendable {
    var images = 8
    var speed = 1.0
    var failEvery: Int?

    /// Why an image failed (`failEvery`).
    struct UnsupportedProfile: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name): unsupported colour profile (simulated with --fail-every)" }
    }

    /// Why the job failed: some images did.
    struct Incomplete: Error, CustomStringConvertible {
        let failed: Int
        let images: Int
        var description: String { "\(failed) of \(images) images failed" }
    }

    /// Does the work below `job`, which was queued with no units (0 of 0: shown as queued): the job's total
    /// is set as it starts, then each image is a child of one unit.
    func run(into job: ProgressNode) async {
        job.totalUnitCount = Int64(max(images, 1))
        let failed = await withTaskGroup(of: Bool.self) { group in
            var next = 0
            var failed = 0
            func startNext() {
                guard next < images, !job.isCancelled else { return }
                let index = next
                next += 1
                let image = ProgressNode(totalUnitCount: 4, parent: job, pendingUnitCount: 1)
                image.localizedDescription = Self.name(index)
                group.addTask {
                    do {
                        try await resize(index, into: image)
                        return true
                    } catch let error as UnsupportedProfile {
                        image.fail(error)
                        return false
                    } catch {
                        return true  // cancelled: the image keeps what it had done
                    }
                }
            }
            for _ in 0..<2 { startNext() }
            while let succeeded = await group.next() {
                if !succeeded { failed += 1 }
                startNext()
            }
            return failed
        }
        if job.isCancelled { return }
        if failed > 0 {
            job.fail(Incomplete(failed: failed, images: images))
        } else if images == 0 {
            job.completedUnitCount = job.totalUnitCount
        }
    }

    private func resize(_ index: Int, into image: ProgressNode) async throws {
        let fails = failEvery.map { (index + 1) % $0 == 0 } ?? false
        for step in 0..<4 {
            try await image.checkpoint()  // waits while paused, throws when cancelled
            try await Task.sleep(for: .microseconds(Int(Double(150_000 + (index % 3) * 50_000) / speed)))
            if fails && step == 2 { throw UnsupportedProfile(name: Self.name(index)) }
            image.advance()
        }
    }

    static func name(_ index: Int) -> String {
        "photo-\(index + 1).png"
    }
}
