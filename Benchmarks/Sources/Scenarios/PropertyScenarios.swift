// Scenario 20: custom properties (issue 35). A read of a property's summary after one change, at 100,000
// children of one root, beside the same read of the file summary; and a value set on a leaf 8 deep followed
// by a read of the root's summary, per pair, beside `advance(by:)` followed by a read of
// `fractionCompleted`. Same rules as `Scenarios.swift`: public API only, every result checked.

import ProgressTree

/// A count, as a program declares one.
public enum BenchSkipped: ProgressProperty {
    public static var defaultValue: Int { 0 }
    public static var defaultSummary: Int { 0 }
    public static func reduce(into summary: inout Int, value: Int) { summary += value }
    public static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// A maximum: `merge` cannot be undone.
public enum BenchLargest: ProgressProperty {
    public static var defaultValue: Int { 0 }
    public static var defaultSummary: Int { 0 }
    public static func reduce(into summary: inout Int, value: Int) { summary = max(summary, value) }
    public static func merge(_ a: Int, _ b: Int) -> Int { max(a, b) }
}

extension PN {
    /// A root with `width` children of 100 units each, its summary of `BenchSkipped` and `BenchLargest`
    /// read once (the first read computes every child), and its children.
    public static func wideRootWithProperties(_ width: Int) -> (root: ProgressNode, children: [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(width))
        var children: [ProgressNode] = []
        children.reserveCapacity(width)
        for _ in 0..<width { children.append(ProgressNode(totalUnitCount: 100, parent: root, pendingUnitCount: 1)) }
        children[0][BenchSkipped.self] = 1
        children[0][BenchLargest.self] = 1
        expect(root.summary(of: BenchSkipped.self) == 1, "wide root: first read")
        expect(root.summary(of: BenchLargest.self) == 1, "wide root: first read of the maximum")
        return (root, children)
    }

    /// 20a. `n` times: one child of the wide root gets a new value, then the root's summary is read.
    @inline(never)
    public static func propertyReadsAfterOneChange(
        _ n: Int, root: ProgressNode, children: [ProgressNode], largest: Bool
    ) -> Int {
        let before = root.summary(of: BenchSkipped.self)
        var last = 0
        for index in 0..<n {
            let child = children[(index &* 7919) % children.count]
            if largest {
                child[BenchLargest.self] = before + n + index + 2
                last = root.summary(of: BenchLargest.self)
                expect(last == before + n + index + 2, "20a: the maximum read")
            } else {
                child[BenchSkipped.self] = child[BenchSkipped.self] + 1
                last = root.summary(of: BenchSkipped.self)
            }
        }
        if !largest { expect(last == before + n, "20a: every change counted") }
        return last
    }

    /// 20a, the file summary: `n` times, one file child advances by one byte, then the root's file summary
    /// is read.
    @inline(never)
    public static func fileReadsAfterOneChange(_ n: Int, root: ProgressNode, children: [ProgressNode]) -> Int64 {
        var last: Int64 = 0
        for index in 0..<n {
            children[(index &* 7919) % children.count].advance(by: 1)
            last = root.fileSummary.completedByteCount
        }
        return last
    }

    /// A root with `width` children of 100-byte files, its file summary read once.
    public static func wideRootOfFiles(_ width: Int) -> (root: ProgressNode, children: [ProgressNode]) {
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(width))
        var children: [ProgressNode] = []
        children.reserveCapacity(width)
        for _ in 0..<width {
            let child = ProgressNode(totalUnitCount: 1_000_000, parent: root, pendingUnitCount: 1)
            child.kind = .file
            children.append(child)
        }
        expect(root.fileSummary.fileTotalCount == width, "wide root of files: first read")
        return (root, children)
    }

    /// A chain 8 deep, its root's summary read once; returns the root and the leaf.
    public static func chainWithProperty() -> (root: ProgressNode, leaf: ProgressNode) {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)
        var node = root
        for _ in 0..<7 { node = ProgressNode(totalUnitCount: 1, parent: node, pendingUnitCount: 1) }
        let leaf = ProgressNode(totalUnitCount: Int64.max, parent: node, pendingUnitCount: 1)
        expect(root.summary(of: BenchSkipped.self) == 0, "chain: first read")
        return (root, leaf)
    }

    /// 20b. `n` times: a new value on the leaf 8 deep, then the root's summary.
    @inline(never)
    public static func leafPropertyThenRootSummary(_ n: Int, root: ProgressNode, leaf: ProgressNode) -> Int {
        var last = 0
        for index in 1...n {
            leaf[BenchSkipped.self] = index
            last = root.summary(of: BenchSkipped.self)
        }
        expect(last == n, "20b: the last value read")
        return last
    }

    /// 20b, the reference: `n` times, `advance(by: 1)` on the leaf 8 deep, then the root's
    /// `fractionCompleted`.
    @inline(never)
    public static func leafAdvanceThenRootFraction(_ n: Int, root: ProgressNode, leaf: ProgressNode) -> Double {
        var sum = 0.0
        for _ in 0..<n {
            leaf.advance(by: 1)
            sum += root.fractionCompleted
        }
        expect(sum > 0, "20b: the reads saw progress")
        return sum
    }
}
