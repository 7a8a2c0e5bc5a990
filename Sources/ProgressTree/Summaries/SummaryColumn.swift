// One property's summaries of a node's children, a column of the node's `ChildSums` (ChildSums+Summaries.swift):
// the typed storage of the summary engine. The library's engine is not generic; it holds columns as
// `SummaryColumn` and reaches their typed work through the property's witnesses
// (`ProgressProperty._progressTreeColumnStep`, whose default is compiled where the property's conformance is
// declared: Properties/ProgressProperty+Engine.swift). That code finds its `SummaryTree` with a checked cast.
//
// Invariants (checked by `checkInvariants()` where the summaries are `Equatable`, under
// PROGRESSTREE_INTERNAL_CHECKS):
// - `nodes` is empty while `capacity` is 0; otherwise it holds `2 × capacity` summaries (a power of two),
//   the leaves from `capacity` on, leaf `i` for the member at entry `i` of the node's `ChildSums`, and
//   `nodes[k]` is `merge(nodes[2k], nodes[2k + 1])` for every inner `k ≥ 1` (`nodes[0]` is unused).
// - A leaf no member holds, or whose member never contributed this property, is `defaultSummary`, the
//   identity of `merge` (the protocol's requirement): so `nodes[1]` is the merge of the members'
//   contributions, whatever `merge` is (a maximum cannot subtract).
// - `left` is the merge of what the members that left the node left behind (`nil`: nothing yet).

/// One property's summaries of a node's children: a segment tree over the members' entries, and what the
/// members that left left behind. Always a `SummaryTree` of the property it names.
///
/// Owned by the tree's domain lock, as the `ChildSums` that holds it: only code holding that lock reaches a
/// column (through the node's `ChildSums`, with the lock's `RefreshScratch`), which is why it is
/// `@unchecked Sendable`.
@usableFromInline
class SummaryColumn: @unchecked Sendable {
    /// The property whose summaries this column holds.
    @usableFromInline let property: any ProgressProperty.Type
    /// `ObjectIdentifier(property)`, the column's key in its table.
    @usableFromInline let key: ObjectIdentifier

    @usableFromInline
    init(property: any ProgressProperty.Type) {
        self.property = property
        key = ObjectIdentifier(property)
    }

    /// How many leaves the column's tree has.
    var leafCount: Int { preconditionFailure("overridden") }
}

/// `SummaryColumn` for `Property`: its typed storage. Created and used only by `Property`'s own witnesses
/// (the engine's steps), so its methods run specialized for `Property.Summary`.
///
/// Its fields leave out the dynamic exclusivity checks (`@exclusivity(unchecked)`, a check and a thread-local
/// set per access, most of a step's cost): every access is under the tree's domain lock, which orders the
/// accesses of two threads, and no access overlaps another on one thread (a step's code calls no other step
/// and nothing outside this class while it holds an access: `merge` takes its summaries by value).
@usableFromInline
final class SummaryTree<Property: ProgressProperty>: SummaryColumn, @unchecked Sendable {
    /// The segment tree (see the top of this file).
    @usableFromInline @exclusivity(unchecked) var nodes: ContiguousArray<Property.Summary> = []
    /// How many leaves `nodes` has: 0, or a power of two at least one more than the highest entry set.
    @usableFromInline @exclusivity(unchecked) var capacity = 0
    /// What the members that left left behind, merged; `nil` when nothing was left.
    @usableFromInline @exclusivity(unchecked) var left: Property.Summary?

    @inlinable
    init() { super.init(property: Property.self) }

    override var leafCount: Int { capacity }

    /// The tree `column` is. A column of `Property`, whose key is `Property`'s, is always one (only
    /// `Property`'s own code makes a column with that key: `init()`): so after the check of the key, made in
    /// every build, the cast needs no look at the class hierarchy.
    @inlinable
    static func of(_ column: SummaryColumn) -> SummaryTree {
        guard column.key == ObjectIdentifier(Property.self) else {
            preconditionFailure("ProgressTree: a summary column of \(column.property) read as one of \(Property.self)")
        }
        return unsafeDowncast(column, to: SummaryTree.self)
    }

    /// The children's part of the node's summary: the members' contributions merged with what left, `nil`
    /// when the column holds neither.
    @inlinable
    var combined: Property.Summary? {
        guard capacity > 0 else { return left }
        guard let left else { return nodes[1] }
        return Property.merge(nodes[1], left)
    }

    /// Sets the contribution of the member at `index`, and merges the path above it again: O(log leaves).
    @inlinable
    func set(_ index: Int, to summary: Property.Summary) {
        if index >= capacity { grow(toHold: index) }
        var position = capacity + index
        nodes[position] = summary
        while position > 1 {
            position /= 2
            nodes[position] = Property.merge(nodes[2 * position], nodes[2 * position + 1])
        }
    }

    /// Sets the contribution of the member at `index` without merging the path above it: for a start, which
    /// sets every member's and then merges the inner nodes once (`rebuild()`), O(members) in all instead of
    /// O(members × log members). Until that rebuild, the inner nodes are not the merges of their children.
    @inlinable
    func setLeaf(_ index: Int, to summary: Property.Summary) {
        if index >= capacity { grow(toHold: index, merging: false) }
        nodes[capacity + index] = summary
    }

    /// Merges every inner node again, from the leaves up: O(leaves).
    @inlinable
    func rebuild() {
        for position in stride(from: capacity - 1, through: 1, by: -1) {
            nodes[position] = Property.merge(nodes[2 * position], nodes[2 * position + 1])
        }
    }

    /// Resets the contribution of the member at `index` to the default (it left, or contributes nothing).
    @inlinable
    func clear(_ index: Int) {
        if index < capacity { set(index, to: Property.defaultSummary) }
    }

    /// Adds `summary`, what a member leaves behind, to `left`.
    @inlinable
    func addLeft(_ summary: Property.Summary) {
        left = left.map { Property.merge($0, summary) } ?? summary
    }

    /// Forgets every member's contribution (none is a member any more) and the memory they took.
    @inlinable
    func removeLeaves() {
        nodes = []
        capacity = 0
    }

    /// Doubles the leaves until `index` is one, each new leaf the default, and merges the inner nodes
    /// again (unless `merging` is `false`: a start merges them once at its end): O(leaves), amortized over the
    /// members that made it necessary.
    @inlinable
    func grow(toHold index: Int, merging: Bool = true) {
        var grown = Swift.max(capacity, 1)
        while grown <= index { grown *= 2 }
        var tree = ContiguousArray(repeating: Property.defaultSummary, count: 2 * grown)
        for leaf in 0..<capacity { tree[grown + leaf] = nodes[capacity + leaf] }
        nodes = tree
        capacity = grown
        if merging { rebuild() }
    }

    /// The invariants at the top of this file, one line each, empty when they hold: the shape always, the
    /// merges where the summaries are `Equatable`. For the engine's checks (PROGRESSTREE_INTERNAL_CHECKS).
    @inlinable
    func violations() -> [String] {
        guard capacity > 0 else {
            return nodes.isEmpty ? [] : ["a summary column of \(Property.self) without leaves holds \(nodes.count) nodes"]
        }
        guard capacity & (capacity - 1) == 0, nodes.count == 2 * capacity else {
            return ["a summary column of \(Property.self) has \(nodes.count) nodes for \(capacity) leaves"]
        }
        for position in 1..<capacity {
            let merged = Property.merge(nodes[2 * position], nodes[2 * position + 1])
            if summariesAreEqual(merged, nodes[position]) == false {
                return ["in a summary column of \(Property.self), inner node \(position) is not the merge of its two children"]
            }
        }
        return []
    }
}

extension SummaryTree {
    /// Whether the contribution at `entry` is `expected` (where the summaries are `Equatable`): empty when
    /// it is, or when that cannot be told.
    @inlinable
    func violations(ofEntry entry: Int, expecting expected: Property.Summary) -> [String] {
        let held = entry < capacity ? nodes[capacity + entry] : Property.defaultSummary
        guard summariesAreEqual(held, expected) == false else { return [] }
        return ["its contribution to its parent's \(Property.self) is \(held), not its summary \(expected)"]
    }
}

/// Whether `a` equals `b`, for summaries of a type not known to be `Equatable`: `nil` when it is not.
@inlinable
func summariesAreEqual<Summary>(_ a: Summary, _ b: Summary) -> Bool? {
    guard let a = a as? any Equatable else { return nil }
    return a.isEqual(to: b)
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    @usableFromInline
    func isEqual(to other: Any) -> Bool { (other as? Self) == self }
}
