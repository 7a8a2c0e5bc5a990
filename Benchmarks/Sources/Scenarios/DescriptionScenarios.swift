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
