// The total of one custom property over the members of a node's kept summary (FileSums.swift): a segment
// tree over the members' slots, so that replacing one member's contribution re-merges O(log members)
// summaries, whatever `merge` is. A property's `merge` need not be invertible (a maximum, a set union), so
// the total cannot subtract an old contribution the way the file total does.
//
// Invariant (under the node's lock, like the `FileSums` that holds it): `tree[1]` is the merge of every
// leaf, each inner node the merge of its two children; a slot no member holds, and a member that never
// contributed this property, hold `defaultSummary` (the identity of `merge`, by the protocol's
// requirements). User code (`merge`) runs here, under the node's lock and its tree's domain lock: the
// protocol asks it to be pure and not to call into the tree.

/// A property's total over a kept summary's members, reached without the property's type.
protocol PropertyTotal: AnyObject {
    /// Replaces the contribution in `slot` by `summary` (a `Property.Summary`), or by the default when `nil`.
    func set(_ slot: Int, to summary: (any Sendable)?)
    /// The merge of every contribution (`defaultSummary` when there is none).
    var total: any Sendable { get }
    /// Forgets every contribution, and the memory they took.
    func removeAll()
    /// The property's functions.
    var operations: any PropertyOperations.Type { get }
}

/// `PropertyTotal` for `Property`: the tree's leaves start at `capacity`, a power of two. The nodes live in
/// one allocation this object owns (`tree`, `2 × capacity` initialized summaries): this code is compiled
/// once for every property, and a buffer spares it the array's metadata look-ups and uniqueness checks on
/// each of the O(log members) steps of an update.
final class PropertyTotalOf<Property: ProgressProperty>: PropertyTotal {
    private var tree: UnsafeMutablePointer<Property.Summary>?
    private var capacity = 0

    deinit { removeAll() }

    func set(_ slot: Int, to summary: (any Sendable)?) {
        setTyped(slot, to: summary.map { $0 as! Property.Summary })
    }

    /// `set(_:to:)` for a caller that knows the property's type (a value set walking up its path): no cast.
    func setTyped(_ slot: Int, to summary: Property.Summary?) {
        if slot >= capacity {
            guard let summary else { return }  // beyond the leaves, every slot holds the default already
            grow(toHold: slot)
            update(slot, to: summary)
        } else {
            update(slot, to: summary ?? Property.defaultSummary)
        }
    }

    /// `total`, typed.
    var typedTotal: Property.Summary { tree?[1] ?? Property.defaultSummary }

    private func update(_ slot: Int, to value: Property.Summary) {
        guard let tree else { preconditionFailure("a total holds its slots") }
        var index = capacity + slot
        tree[index] = value
        while index > 1 {
            index /= 2
            tree[index] = Property.merge(tree[2 * index], tree[2 * index + 1])
        }
    }

    var total: any Sendable { typedTotal }

    var operations: any PropertyOperations.Type { PropertyOperationsOf<Property>.self }

    /// `total` as the total of `Property` it is: a kept summary keys its totals by the identifier of their
    /// property's type, and makes each with that type's `makeTypedTotal()`, so the total found under
    /// `ObjectIdentifier(Property.self)` is this class (checked in debug builds); no dynamic cast.
    @inline(__always)
    static func of(_ total: any PropertyTotal) -> PropertyTotalOf<Property> {
        assert(total is PropertyTotalOf<Property>, "a total under another property's key")
        return unsafeDowncast(total, to: PropertyTotalOf<Property>.self)
    }

    func removeAll() {
        guard let tree else { return }
        tree.deinitialize(count: 2 * capacity)
        tree.deallocate()
        self.tree = nil
        capacity = 0
    }

    /// Doubles the leaves until `slot` is one, and merges the inner nodes again: O(leaves), amortized over
    /// the members that made them necessary.
    private func grow(toHold slot: Int) {
        var newCapacity = max(capacity, 8)
        while newCapacity <= slot { newCapacity *= 2 }
        let newTree = UnsafeMutablePointer<Property.Summary>.allocate(capacity: 2 * newCapacity)
        newTree.initialize(repeating: Property.defaultSummary, count: 2 * newCapacity)
        if let tree { (newTree + newCapacity).update(from: tree + capacity, count: capacity) }
        for index in stride(from: newCapacity - 1, through: 1, by: -1) {
            newTree[index] = Property.merge(newTree[2 * index], newTree[2 * index + 1])
        }
        removeAll()
        tree = newTree
        capacity = newCapacity
    }
}
