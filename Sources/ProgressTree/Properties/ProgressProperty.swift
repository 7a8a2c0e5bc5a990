/// A value of your own that every node can carry, summarized over each subtree: photos skipped, bytes
/// uploaded, warnings, retries.
///
/// Declare one as a type with no cases; four requirements say what a node holds and how a subtree adds it
/// up:
///
/// ```swift
/// enum PhotosSkipped: ProgressProperty {
///     static var defaultValue: Int { 0 }
///     static var defaultSummary: Int { 0 }
///     static func reduce(into summary: inout Int, value: Int) { summary += value }
///     static func merge(_ a: Int, _ b: Int) -> Int { a + b }
/// }
/// photo[PhotosSkipped.self] = 3               // any node, any thread
/// root.summary(of: PhotosSkipped.self)        // the subtree's summary, at any node
/// ```
///
/// How a subtree is summarized (`ProgressNode.summary(of:)`):
/// - each node of the subtree that is still attached contributes its value (`defaultValue` when it never
///   set one) reduced into `defaultSummary`;
/// - a child that left its parent (it finished, or failed) is let go, and its parent keeps what it leaves
///   behind: its subtree's summary as it was when it left, passed through `summaryLeftBehind(_:by:)`
///   (all of it unless the property says otherwise: a count keeps its contribution, a rate or an estimate
///   drops it). A subtree in which the property was never set leaves nothing behind;
/// - all of these are merged with `merge(_:_:)`.
///
/// A cancelled child stays attached (cancelling does not end a node's membership), so it goes on counting
/// as it is, until it finishes (its outcome is then `.cancelled`) or its parent goes away.
///
/// Requirements on your functions: `merge` is associative and commutative, and `defaultSummary` is its
/// identity (children finish and are merged in any order); reducing `defaultValue` into `defaultSummary`
/// gives `defaultSummary` or a value that `merge` ignores (so that nodes that never set the property do not
/// change the sum, whether they are still attached or already let go). The four functions and
/// `summaryLeftBehind(_:by:)` must be pure and quick, and must not call into ProgressTree: they run on
/// whichever thread sets a value, reads a summary, or finishes or fails a node, `reduce` and `merge` inside
/// the tree's refresh lock, and often a node's lock (a parent keeps its children's summaries up to date there, so
/// that a read after a change costs O(log children), not O(children)). A function that traps is the
/// program's bug.
///
/// Thread safety: declare the property as a type with no state (an `enum` with no cases), with a conformance
/// that is not isolated to an actor: its functions are called from any thread. Its values and summaries are
/// `Sendable`.
public protocol ProgressProperty {
    /// The type of the value each node holds.
    associatedtype Value: Sendable
    /// The type of a subtree's summary.
    associatedtype Summary: Sendable

    /// The value of a node that never set one.
    static var defaultValue: Value { get }
    /// The summary of nothing: where reducing starts, and the identity of `merge(_:_:)`.
    static var defaultSummary: Summary { get }
    /// Adds one node's `value` to `summary`.
    static func reduce(into summary: inout Summary, value: Value)
    /// Combines the summaries of two disjoint parts of a tree. Associative and commutative.
    static func merge(_ a: Summary, _ b: Summary) -> Summary
    /// What a child's subtree leaves in its parent's summary when the child leaves its parent, by how it
    /// ended: `summary` (its subtree's summary when it left) or part of it, or `nil` for nothing.
    ///
    /// The default keeps all of it whatever the outcome: the photos a failed import skipped were still
    /// skipped. Return `nil` for a value that describes work in progress (a rate, an estimate), so that a
    /// parent stops counting it once the child is done. Applied at each level a subtree leaves, so make it
    /// idempotent (keeping or dropping is).
    static func summaryLeftBehind(_ summary: Summary, by outcome: ProgressPropertyOutcome) -> Summary?

    // ProgressTree's own: not for you to implement or call. Their defaults are the implementations the
    // library expects (the built-in file properties have their own); `node[Property.self]` and
    // `node.summary(of: Property.self)` come here.
    //
    // Why they are requirements: a default implementation of a requirement is `@inlinable`, so each
    // conformance carries a copy compiled, and specialized, for its own `Value` and `Summary`, where the
    // conformance is declared. The library's summary engine (Summaries/) is not generic: it reaches a
    // property's typed work through these witnesses, never through generic code compiled once for every
    // property (which paid the Swift runtime's metadata look-ups and value-witness copies on every call).

    /// Sets `value` as `node`'s value of this property (`node[Self.self] = value`). Not API: ProgressTree's.
    static func _progressTreeSetValue(_ value: Value, on node: ProgressNode)
    /// `node`'s value of this property (`node[Self.self]`). Not API: ProgressTree's.
    static func _progressTreeValue(of node: ProgressNode) -> Value
    /// `node`'s summary of this property (`node.summary(of: Self.self)`). Not API: ProgressTree's.
    static func _progressTreeSummary(of node: ProgressNode) -> Summary
    /// A node's summary from its parts: its own value and what it keeps of its children. Not API:
    /// ProgressTree's.
    static func _progressTreeNodeSummary(_ parts: _ProgressTreeSummaryParts) -> Summary
    /// A step of the summary engine on one of this property's columns. Not API: ProgressTree's.
    static func _progressTreeColumnStep(_ step: inout _ProgressTreeColumnStep)
}

extension ProgressProperty {
    /// Keeps the whole summary, whatever the outcome (see `ProgressProperty`).
    public static func summaryLeftBehind(_ summary: Summary, by outcome: ProgressPropertyOutcome) -> Summary? {
        summary
    }
}

/// How a child ended when it left its parent: what `ProgressProperty.summaryLeftBehind(_:by:)` is told.
///
/// A struct rather than an enum so that an outcome can be added without breaking your `switch`es: compare
/// with `==`.
///
/// Thread safety: a value type; `Sendable`.
public struct ProgressPropertyOutcome: Sendable, Hashable, CustomStringConvertible {
    private let code: UInt8

    /// The child finished (its counts reached its total) and its parent let it go.
    public static let finished = ProgressPropertyOutcome(code: 0)
    /// The child failed (`ProgressNode.fail(_:)`) and its parent let it go. Its subtree as it was when it
    /// failed: the nodes below it were cancelled by the failure and stay attached to it.
    public static let failed = ProgressPropertyOutcome(code: 1)
    /// The child was cancelled, then finished (its counts reached its total) and its parent let it go. A
    /// cancelled child that never finishes stays attached and counts as it is.
    public static let cancelled = ProgressPropertyOutcome(code: 2)

    /// `finished`, `failed` or `cancelled`.
    public var description: String {
        switch code {
        case 0: "finished"
        case 1: "failed"
        default: "cancelled"
        }
    }
}
