// Scenario 16: reading a wide root's descriptions, for ProgressNode only (Foundation on Linux describes
// nothing: its `localizedAdditionalDescription` is ""). Same rules as `Scenarios.swift`: public API only,
// every result checked (a wrong one stops the run), a value returned to keep the optimizer honest.
//
// 16. A root copying `children` files (`fileOperationKind = .copying`, each child of kind `.file`, 1 MB),
//     its additional description read once (so that the read after it is not its first), then `reads`
//     times: one update of one file (round-robin, 1,000 bytes) and one read of the root's
//     `localizedAdditionalDescription`, which sums the bytes of every file ("12 MB of 100 GB"). A renderer
//     does that every frame. The root's estimation clock stands still, so no rate or time is appended and
//     the text is checked exactly. Only the updates and reads are timed.

import Foundation
import ProgressTree

extension PN {
    /// 16. Seconds for `reads` pairs of (one file's update, one read of the root's additional description),
    /// on a root over `children` file children (tree built and read once before the clock starts).
    @inline(never)
    public static func describedFiles(children: Int, reads: Int) -> Double {
        let fileSize: Int64 = 1_000_000
        let step: Int64 = 1_000
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
        root.estimationClock = ManualProgressClock()
        root.fileOperationKind = .copying
        let files = (0..<children).map { _ in
            let file = ProgressNode(totalUnitCount: fileSize, parent: root, pendingUnitCount: 1)
            file.kind = .file
            return file
        }
        let total = fileSize * Int64(children)
        let first = root.localizedAdditionalDescription!
        expect(first == "Zero KB of \(ProgressFormat.byteCount(total))", "described files: first read \(first)")
        var last = ""
        let seconds = timed {
            for index in 0..<reads {
                files[index % children].advance(by: step)
                last = root.localizedAdditionalDescription
            }
        }
        let completed = step * Int64(reads)
        let expected = "\(ProgressFormat.byteCount(completed)) of \(ProgressFormat.byteCount(total))"
        expect(last == expected, "described files: root reads \(last), expected \(expected)")
        let summary = root.fileSummary
        expect(
            summary
                == ProgressNode.FileSummary(
                    fileTotalCount: children, totalByteCount: total, completedByteCount: completed),
            "described files: summary \(summary)")
        return seconds
    }
}

// 16b. Who pays for a wide root's files: `children` children created attached (no metadata), then each
//      given `kind = .file`, then each a `fileURL` (the URLs made beforehand), then the root's first
//      `fractionCompleted` and first `localizedAdditionalDescription`. Each step timed on its own: the
//      setters' share (they count each file in the root's kept summary) against the first reads'.

/// What one round of 16b measured, in seconds.
public struct MetadataFirstReadResult: Sendable {
    public var create: Double
    public var kinds: Double
    public var urls: Double
    public var firstFraction: Double
    public var firstDescription: Double
}

extension PN {
    /// 16b. One round over `children` children (see above); the root's description is checked.
    @inline(never)
    public static func metadataThenFirstRead(children: Int) -> MetadataFirstReadResult {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(children))
        root.estimationClock = ManualProgressClock()
        root.fileOperationKind = .copying
        let urls = (0..<children).map { URL(fileURLWithPath: "/data/file-\($0)") }
        var files: [ProgressNode] = []
        files.reserveCapacity(children)
        var result = MetadataFirstReadResult(create: 0, kinds: 0, urls: 0, firstFraction: 0, firstDescription: 0)
        result.create = timed {
            for _ in 0..<children {
                files.append(ProgressNode(totalUnitCount: 1_000, parent: root, pendingUnitCount: 1))
            }
        }
        result.kinds = timed { for file in files { file.kind = .file } }
        result.urls = timed { for (file, url) in zip(files, urls) { file.fileURL = url } }
        var fraction = -1.0
        result.firstFraction = timed { fraction = root.fractionCompleted }
        var description = ""
        result.firstDescription = timed { description = root.localizedAdditionalDescription }
        expect(fraction == 0, "16b: fraction \(fraction)")
        let expected = "Zero KB of \(ProgressFormat.byteCount(1_000 * Int64(children)))"
        expect(description == expected, "16b: \(description)")
        return result
    }
}
