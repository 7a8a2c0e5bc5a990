import ProgressTree

/// Captures what a line shows from a node, at draw time (never on the update path): the capture stage
/// of the pipeline. It records raw values (numbers, the node's own texts, sanitized labels); formatting
/// them is the layout's job (`Layout/LineContent+Text.swift`).
enum NodeReader {
    /// The line of `node`. The root and nodes that describe files get what costs a walk of their subtree
    /// — the amount of files or bytes, throughput and time remaining, exactly as in
    /// `localizedAdditionalDescription`; other nodes show their unit counts (or a description set by the
    /// user).
    ///
    /// With `forWire` (json mode), the content also carries the node's wire-format record; with
    /// `readsProperties` (plain mode), the node's own values of the properties that cross the wire.
    /// `summaries` are read on the root's line (depth 0) only; with `summariesAtEveryDepth` (plain mode),
    /// those of properties that cross the wire on every line too (each node's own subtree's summary, in
    /// place of its `name=value`).
    static func content(
        of node: ProgressNode, depth: Int, forWire: Bool = false, readsProperties: Bool = false,
        summaries: [any ShownSummary] = [], summariesAtEveryDepth: Bool = false
    ) -> LineContent {
        let snapshot = node.snapshot
        let status = LineStatus(snapshot)
        let isIndeterminate = snapshot.isIndeterminate && !snapshot.isFinished
        var content = LineContent(
            depth: depth,
            label: LabelSanitizer.sanitized(node.displayLabel ?? ""),
            fraction: snapshot.fractionCompleted,
            isIndeterminate: isIndeterminate,
            status: status,
            completedUnitCount: snapshot.completedUnitCount,
            totalUnitCount: snapshot.totalUnitCount,
            describedCounts: nil)
        content.failureReason = snapshot.failureDescription.map(LabelSanitizer.sanitized)
        content.outcomes = snapshot.descendantOutcomes
        if depth == 0, !summaries.isEmpty {
            content.summaries = ShownSummaries.texts(of: summaries, for: node)
        } else if summariesAtEveryDepth, !summaries.isEmpty {
            // Only the properties that would otherwise show as `name=value`: one property, one spelling.
            content.summaries = ShownSummaries.texts(of: summaries.filter { $0.wireName != nil }, for: node)
        }
        if forWire { content.wire = node.wireRecord(id: 0, parentID: nil) }
        if readsProperties { (content.properties, content.skippedProperties) = node.wireProperties() }
        content.readsEstimates = depth == 0 || node.describesFiles
        guard content.readsEstimates else {
            content.describedCounts = node.additionalDescriptionOverride
            return content
        }
        let details = node.displayDetails
        content.describedCounts = details.amount
        if status == .running {
            content.throughput = details.bytesPerSecond
            content.timeRemaining = details.secondsRemaining
        }
        return content
    }

    /// The line of a node that left the tree before a frame saw it, from its wire-format record as it
    /// left (`ProgressNode.FailedChild`): its label, counts, state and reason, the counts described as its
    /// program described them (unit counts otherwise; no estimates: it no longer runs).
    static func content(departed record: ProgressWireRecord, depth: Int) -> LineContent {
        let status = LineStatus(record.state)
        var content = LineContent(
            depth: depth,
            label: LabelSanitizer.sanitized(record.label ?? ""),
            fraction: record.fractionCompleted,
            isIndeterminate: record.isIndeterminate,
            status: status,
            completedUnitCount: record.completedUnitCount,
            totalUnitCount: record.totalUnitCount,
            describedCounts: record.localizedAdditionalDescription.map(LabelSanitizer.sanitized))
        content.failureReason = record.failureReason.map(LabelSanitizer.sanitized)
        content.outcomes = ProgressNode.DescendantOutcomes(
            failedCount: record.failedBelow, cancelledCount: record.cancelledBelow)
        content.properties = record.properties
        content.skippedProperties = record.skippedProperties
        return content
    }
}
