extension ProgressNode: CustomStringConvertible, CustomDebugStringConvertible {
    /// The subtree as indented text: per node, its share of the parent (`portion`), fraction, counts and
    /// state, children in the order they were added. Finished children are no longer part of the tree.
    ///
    /// ```
    /// ProgressNode: 45.00% (0 of 10)
    ///   portion 9: 50.00% (1000000 of 2000000)
    ///   portion 1: 0.00% (0 of 1), paused
    /// ```
    ///
    /// - Complexity: O(nodes in the subtree), iterative.
    public var description: String {
        var lines: [String] = []
        var stack: [(node: ProgressNode, depth: Int, portion: Int64?)] = [(self, 0, nil)]
        while let (node, depth, portion) = stack.popLast() {
            lines.append(String(repeating: "  ", count: depth) + node.describeLine(portion: portion))
            // Its pending count is set before a child is attached and never changes: read after the lock.
            stack += node.children.reversed().map { ($0, depth + 1, $0.pendingInParent.load(ordering: .relaxed)) }
        }
        return lines.joined(separator: "\n")
    }

    /// The same text as `description`: the subtree, one line per attached node.
    public var debugDescription: String { description }

    /// One node's line, from its `snapshot`: counts, fraction and state read together.
    private func describeLine(portion: Int64?) -> String {
        let snapshot = snapshot
        let percent = (snapshot.fractionCompleted * 10_000).rounded() / 100
        var line = portion.map { "portion \($0): " } ?? "ProgressNode: "
        line += "\(Self.twoDecimals(percent))% (\(snapshot.completedUnitCount) of \(snapshot.totalUnitCount))"
        var marks: [String] = []
        if snapshot.isIndeterminate { marks.append("indeterminate") }
        if snapshot.isFinished { marks.append("finished") }
        if snapshot.isPaused { marks.append("paused") }
        if snapshot.isCancelled { marks.append("cancelled") }
        // Failure (ProgressNode+Failure.swift): a failed node is never finished, paused or cancelled.
        if snapshot.isFailed { marks.append("failed: " + (snapshot.failureDescription ?? "")) }
        if !marks.isEmpty { line += ", " + marks.joined(separator: ", ") }
        return line
    }

    /// `12.5` → `"12.50"` without Foundation's `String(format:)`.
    private static func twoDecimals(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fractional = hundredths % 100
        return "\(hundredths / 100)." + (fractional < 10 ? "0" : "") + "\(fractional)"
    }
}
