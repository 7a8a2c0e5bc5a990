@testable import ProgressTree

// What the summary engine's tests read of it (Summaries/): how much work the reads did, and a node's file
// summary computed afresh by a walk of its subtree, to compare with the kept one.

extension ProgressNode {
    /// How many contributions to summaries the reads of this node's tree have computed so far (the engine's
    /// count, `RefreshScratch.computedSummaries`): a test takes the difference around what it does.
    var computedSummaries: Int {
        domain.withRepresentativeLock { $0.computedSummaries }
    }

    /// This node's index among its parent's contributors (-1: none), read under its tree's domain lock (a
    /// lock of its own when it has no domain yet: reading gives it none).
    var contributorIndexNow: Int {
        (domainAndPart.loadDomain() ?? RefreshDomain()).withRepresentativeLock { contributorIndex($0) }
    }

    /// How many contributions to summaries `work` made the tree compute (in its updates' path refreshes and
    /// in its reads).
    func summaryWork(_ work: () -> Void) -> Int {
        let before = computedSummaries
        work()
        return computedSummaries - before
    }

    /// This node's file summary computed afresh: each node of the attached subtree from its own facts, what
    /// left it (its column's `left`, which the kept summary holds too) and its attached children, bottom up,
    /// without the contributions kept for its members. Iterative (a 10,000-deep chain). Refreshes first, so
    /// that the children that left are folded.
    func computeFileSummary() -> (summary: FileSummary, hasFilesBelow: Bool) {
        _ = fractionCompleted
        return domain.withRepresentativeLock { scratch in
            var frames: [(node: ProgressNode, children: [ProgressNode], below: FileSummary)] = []
            func open(_ node: ProgressNode, _ scratch: borrowing RefreshScratch) {
                let left =
                    node.domainAndPart.loadPart()?.column(for: ObjectIdentifier(FileSummaryProperty.self), scratch)?
                    .left(FileSummaryProperty.self) ?? FileSummary()
                let children = node.state.withLock { state -> [ProgressNode] in
                    node.settleFreshChildren(&state)
                    return state.children.unfinishedEntries.map(\.node)
                }
                frames.append((node, children.reversed(), left))
            }
            open(self, scratch)
            while true {
                let top = frames.count - 1
                if let child = frames[top].children.popLast() {
                    open(child, scratch)
                    continue
                }
                let done = frames.removeLast()
                var facts: FileFacts?
                done.node.withSummaryParts(&scratch) { parts, _ in facts = parts.files }
                let summary = facts?.summary(withChildren: done.below) ?? done.below
                guard !frames.isEmpty else { return (summary, done.below.fileTotalCount > 0) }
                frames[frames.count - 1].below.add(summary)
            }
        }
    }

    /// This node's file summary as a read keeps it, whether files are below it, and how many contributions
    /// the read computed.
    func readFileSummary() -> (summary: FileSummary, hasFilesBelow: Bool, visitedNodes: Int) {
        var read = (summary: FileSummary(), hasFilesBelow: false)
        let work = summaryWork { read = subtreeFiles() }
        return (read.summary, read.hasFilesBelow, work)
    }
}
