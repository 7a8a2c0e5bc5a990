// One property's summaries of a node's children, a column of the node's `ChildSums` (ChildSums+Summaries.swift):
// the typed storage of the summary engine. The library's engine is not generic; it holds columns as
// `SummaryColumn` and reaches their typed work through the property's witnesses
// (`ProgressProperty._progressTreeColumnStep`, whose default is compiled where the property's conformance is
// declared: Properties/ProgressProperty+Engine.swift), or through the copy step the column was made with
// (`copyStep`, compiled there too). That code finds its `SummaryTree` with a checked cast.
//
// The structure: the members' contributions in `leaves`, and a segment tree over blocks of `blockSize`
// leaves in `blocks`. Replacing one contribution merges its block again (at most `blockSize - 1` merges)
// and the path above it (log₂ of the blocks): whatever `merge` is (a maximum cannot subtract), never
// O(members). Blocks of 8 keep the tree small: 1.25 summaries a member, not the 2 to 4 of a segment tree
// over the leaves themselves (memory, and the first read of a wide node, which fills it).
//
// Invariants (checked by `violations()`, the merges where the summaries are `Equatable`, under
// PROGRESSTREE_INTERNAL_CHECKS):
// - `leaves[i]` is the contribution of the member at entry `i` of the node's `ChildSums`; `leaves` holds
//   every entry ever set (its count is one more than the highest). A leaf no member holds, or whose member
//   never contributed this property, is `defaultSummary`, the identity of `merge` (the protocol's
//   requirement).
// - `blocks` is empty while `leaves` holds at most one leaf (a column of one member, as along a chain: that
//   leaf is the merge, and a change of it writes nothing else); otherwise it holds `2 × blockCapacity`
//   summaries, `blockCapacity` a power of two with `blockCapacity × blockSize ≥ leaves.count`:
//   `blocks[blockCapacity + b]` is the merge, in order, of the leaves of block `b` (the default past the
//   last leaf), and `blocks[k]` is `merge(blocks[2k], blocks[2k + 1])` for every inner `k ≥ 1` (`blocks[0]`
//   is unused). So `blocks[1]` is the merge of the members' contributions.
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
    /// Sets the contribution at `entry` of `target` (this column) to what `source`, a member's column of the
    /// same property, keeps of its children, merging the path above it or not (`SummaryTree.set`, `setLeaf`):
    /// the engine's step for a member with no value or file of its own, once a level of every changed path.
    /// Made by `SummaryTree.init`, so compiled for the property where its conformance is, as the property's
    /// witnesses are, and called with no step to build and switch on.
    @usableFromInline let copyStep: CopyStep

    @usableFromInline
    typealias CopyStep = (_ target: SummaryColumn, _ source: SummaryColumn, _ entry: Int, _ merging: Bool)
        -> Void

    @usableFromInline
    init(property: any ProgressProperty.Type, copyStep: @escaping CopyStep) {
        self.property = property
        key = ObjectIdentifier(property)
        self.copyStep = copyStep
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
    /// The members' contributions, by entry (see the top of this file).
    @usableFromInline @exclusivity(unchecked) var leaves: ContiguousArray<Property.Summary> = []
    /// The segment tree over the blocks of `leaves` (see the top of this file).
    @usableFromInline @exclusivity(unchecked) var blocks: ContiguousArray<Property.Summary> = []
    /// What the members that left left behind, merged; `nil` when nothing was left.
    @usableFromInline @exclusivity(unchecked) var left: Property.Summary?

    /// How many leaves a block merges.
    @usableFromInline static var blockSize: Int { 8 }

    @inlinable
    init() {
        // The trees are reached through their columns (`of`, which checks the keys), never captured: a
        // column holds no reference to itself.
        super.init(property: Property.self) { target, source, entry, merging in
            // A member without a value or files of its own: its children's summary is its own
            // (`_progressTreeNodeSummary`), or the default's when it keeps nothing of them.
            let summary = SummaryTree.of(source).combined ?? Property._progressTreeNodeSummary(.none)
            let tree = SummaryTree.of(target)
            if merging { tree.set(entry, to: summary) } else { tree.setLeaf(entry, to: summary) }
        }
    }

    override var leafCount: Int { leaves.count }

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

    /// How many blocks `blocks` has room for: 0, or a power of two.
    @inlinable
    var blockCapacity: Int { blocks.count / 2 }

    /// The children's part of the node's summary: the members' contributions merged with what left, `nil`
    /// when the column holds neither.
    @inlinable @inline(__always)  // a level of every changed path reads it, as `set` writes
    var combined: Property.Summary? {
        let members = blocks.isEmpty ? leaves.first : blocks[1]
        guard let left else { return members }
        guard let members else { return left }
        return Property.merge(members, left)
    }

    /// Sets the contribution of the member at `index`, and merges its block and the path above it again.
    @inlinable @inline(__always)  // a level of every changed path: one leaf written in the common case
    func set(_ index: Int, to summary: Property.Summary) {
        if index >= leaves.count { holdLeaves(through: index) }
        leaves[index] = summary
        guard leaves.count > 1 else { return }  // one leaf: it is the merge, and there are no blocks
        let block = index / Self.blockSize
        guard block < blockCapacity else {
            rebuild()  // the blocks grew: O(leaves), once per doubling
            return
        }
        var position = blockCapacity + block
        blocks[position] = mergedBlock(block)
        while position > 1 {
            position /= 2
            blocks[position] = Property.merge(blocks[2 * position], blocks[2 * position + 1])
        }
    }

    /// Sets the contribution of the member at `index` without merging anything above it: for a start, which
    /// sets every member's and then merges once (`rebuild()`), O(members) in all. Until that rebuild, the
    /// blocks are not the merges of the leaves.
    @inlinable
    func setLeaf(_ index: Int, to summary: Property.Summary) {
        if index >= leaves.count { holdLeaves(through: index) }
        leaves[index] = summary
    }

    /// Merges every block and every inner node again, from the leaves up, sizing `blocks` for the leaves:
    /// O(leaves).
    @inlinable
    func rebuild() {
        guard leaves.count > 1 else {
            blocks = []
            return
        }
        let needed = (leaves.count + Self.blockSize - 1) / Self.blockSize
        var capacity = Swift.max(blockCapacity, 1)
        while capacity < needed { capacity *= 2 }
        if capacity != blockCapacity {
            blocks = ContiguousArray(repeating: Property.defaultSummary, count: 2 * capacity)
        }
        for block in 0..<needed { blocks[capacity + block] = mergedBlock(block) }
        for position in stride(from: capacity - 1, through: 1, by: -1) {
            blocks[position] = Property.merge(blocks[2 * position], blocks[2 * position + 1])
        }
    }

    /// Resets the contribution of the member at `index` to the default (it left, or contributes nothing).
    @inlinable
    func clear(_ index: Int) {
        if index < leaves.count { set(index, to: Property.defaultSummary) }
    }

    /// Adds `summary`, what a member leaves behind, to `left`.
    @inlinable
    func addLeft(_ summary: Property.Summary) {
        left = left.map { Property.merge($0, summary) } ?? summary
    }

    /// Forgets every member's contribution (none is a member any more) and the memory they took.
    @inlinable
    func removeLeaves() {
        leaves = []
        blocks = []
    }

    /// Extends `leaves` with the default through `index` (amortized: the array doubles).
    @inlinable
    func holdLeaves(through index: Int) {
        leaves.append(contentsOf: repeatElement(Property.defaultSummary, count: index + 1 - leaves.count))
    }

    /// The merge, in order, of the leaves of `block`.
    @inlinable
    func mergedBlock(_ block: Int) -> Property.Summary {
        var index = block * Self.blockSize
        let end = Swift.min(index + Self.blockSize, leaves.count)
        var merged = leaves[index]
        index += 1
        while index < end {
            merged = Property.merge(merged, leaves[index])
            index += 1
        }
        return merged
    }

    /// The invariants at the top of this file, one line each, empty when they hold: the shape always, the
    /// merges where the summaries are `Equatable`. For the engine's checks (PROGRESSTREE_INTERNAL_CHECKS).
    @inlinable
    func violations() -> [String] {
        guard leaves.count > 1 else {
            return blocks.isEmpty
                ? [] : ["a summary column of \(Property.self) with \(leaves.count) leaves holds \(blocks.count) blocks"]
        }
        let capacity = blockCapacity
        guard capacity > 0, capacity & (capacity - 1) == 0, blocks.count == 2 * capacity,
            capacity * Self.blockSize >= leaves.count
        else {
            return ["a summary column of \(Property.self) has \(blocks.count) block nodes for \(leaves.count) leaves"]
        }
        let needed = (leaves.count + Self.blockSize - 1) / Self.blockSize
        for block in 0..<capacity {
            let expected = block < needed ? mergedBlock(block) : Property.defaultSummary
            if summariesAreEqual(expected, blocks[capacity + block]) == false {
                return ["in a summary column of \(Property.self), block \(block) is not the merge of its leaves"]
            }
        }
        for position in 1..<capacity {
            let merged = Property.merge(blocks[2 * position], blocks[2 * position + 1])
            if summariesAreEqual(merged, blocks[position]) == false {
                return [
                    "in a summary column of \(Property.self), inner node \(position) is not the merge of its two children"
                ]
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
        let held = entry < leaves.count ? leaves[entry] : Property.defaultSummary
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
