import ProgressTree

/// A summary of a custom property shown on the root's line (`TerminalRenderer.show(_:_:)`): how to read it
/// from the root and word it, whatever the property's type.
protocol ShownSummary: Sendable {
    /// The words for `node`'s summary now, as the program gave them (`nil` or empty: nothing to show).
    func words(for node: ProgressNode) -> String?
    /// The property's `WireProgressProperty.wireName` when it crosses the wire: plain mode then shows its
    /// words, not its `name=value` (one property, one spelling).
    var wireName: String? { get }
}

/// The summary of `Property`, worded by `words`.
struct ShownSummaryOf<Property: ProgressProperty>: ShownSummary {
    let wording: @Sendable (Property.Summary) -> String?

    func words(for node: ProgressNode) -> String? {
        wording(node.summary(of: Property.self))
    }

    var wireName: String? { (Property.self as? any WireProgressProperty.Type)?.wireName }
}

enum ShownSummaries {
    /// The texts of `summaries` read from `node`, those that say something, in order, control characters
    /// shown as spaces.
    static func texts(of summaries: [any ShownSummary], for node: ProgressNode) -> [String] {
        summaries.compactMap { summary in
            summary.words(for: node).flatMap { $0.isEmpty ? nil : LabelSanitizer.sanitized($0) }
        }
    }
}
