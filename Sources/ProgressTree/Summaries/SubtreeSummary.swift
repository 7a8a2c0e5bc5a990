// What a kept summary counts of a subtree (FileSums.swift): its files, and the summaries of the custom
// properties set somewhere in it. One engine keeps both: the same members, the same change log, the same
// reads (ProgressNode+FileSummary.swift).

/// One property's summary of a subtree, with the functions that merge it (its type is not known here).
struct PropertySummary: Sendable {
    let operations: any PropertyOperations.Type
    let summary: any Sendable
}

/// The summaries of the properties set in a subtree, by the `ObjectIdentifier` of the property type.
typealias PropertySummaries = [ObjectIdentifier: PropertySummary]

/// A subtree's files and, if any property was set in it, its property summaries.
struct SubtreeSummary: Sendable {
    var files = ProgressNode.FileSummary()
    /// `nil` when no node of the subtree set a property and none left one behind.
    var properties: PropertySummaries?
}

extension ProgressNode {
    /// A node's property summaries: its own entries (its values, and what children that left it left
    /// behind) merged with `totals`, its members' (Summaries/PropertyTotal.swift); `nil` when it has
    /// neither. The caller holds the node's lock; user code (`reduce`, `merge`) runs here.
    static func propertySummaries(
        entries: PropertyEntries?, totals: [PropertyTotalStorage]?
    ) -> PropertySummaries? {
        guard entries != nil || !(totals ?? []).isEmpty else { return nil }
        var summaries = PropertySummaries()
        for (key, entry) in entries ?? [:] {
            let total = totals?.first { $0.key == key }
            summaries[key] = PropertySummary(
                operations: entry.operations, summary: entry.operations.nodeSummary(entry, below: total?.total))
        }
        for total in totals ?? [] where summaries[total.key] == nil {
            summaries[total.key] = PropertySummary(operations: total.operations, summary: total.total)
        }
        return summaries.isEmpty ? nil : summaries
    }
}
