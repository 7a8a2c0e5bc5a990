// The total of one custom property over the members of a node's kept summary (PropertySums.swift): a segment
// tree over the members' slots, so that replacing one member's contribution re-merges O(log members)
// summaries, whatever `merge` is. A property's `merge` need not be invertible (a maximum, a set union), so
// the total cannot subtract an old contribution the way the file total does.
//
// Invariant (under the tree's domain lock, like the `PropertySums` that holds it): `tree[1]` is the merge of
// every leaf, each inner node the merge of its two children; a slot no member holds, and a member that never
// contributed this property, hold `defaultSummary` (the identity of `merge`, by the protocol's
// requirements). User code (`merge`) runs here, under the domain lock (and the node's lock, but where a
// value set's walk passes the node without it): the protocol asks it to be pure and not to call into the
// tree.
//
// Two ways in. The type-erased one (`set(_:to:)`, `total`: a read, a child leaving) goes through the
// subclass `PropertyTotalOf<Property>`, compiled once in this module for every property. The typed one, a
// value set walking up its path and a read of a current summary, is the property's own copy of
// `ProgressProperty._propertyLevelStep` (Properties/PropertyPathStep.swift), compiled specialized where the
// property's conformance is declared: it writes the raw storage of this class (`tree`, `capacity`) as the
// `Property.Summary` values it holds, found by the property's key, so it needs no metadata of a generic type
// and no cast.

/// A property's total over a kept summary's members: `2 × capacity` initialized `Summary` values of the
/// property `key` names, the leaves from `capacity` on (a power of two, 0 when nothing is held). Reached
/// only under its tree's domain lock, which orders every access (so `@unchecked Sendable`, and no dynamic
/// exclusivity checks: `@exclusivity(unchecked)`; `final`, so that the typed step reads them directly, not
/// through class accessors). Always a `PropertyTotalOf<Property>` of that property.
@usableFromInline
class PropertyTotalStorage: @unchecked Sendable {
    /// `ObjectIdentifier(Property.self)`.
    @usableFromInline let key: ObjectIdentifier
    /// The tree's nodes, `Property.Summary` values; `nil` while `capacity` is 0.
    @usableFromInline @exclusivity(unchecked) final var tree: UnsafeMutableRawPointer?
    /// How many leaves the tree has (0, or a power of two): as many as the slots need, so that the re-merge
    /// above a slot of a node with one child (a chain, most of a deep path) is no merge at all.
    @usableFromInline @exclusivity(unchecked) final var capacity = 0

    init(key: ObjectIdentifier) { self.key = key }

    /// Replaces the contribution in `slot` by `summary` (a `Property.Summary`), or by the default when `nil`.
    func set(_ slot: Int, to summary: (any Sendable)?) { preconditionFailure("overridden") }
    /// The merge of every contribution (`defaultSummary` when there is none).
    var total: any Sendable { preconditionFailure("overridden") }
    /// Forgets every contribution, and the memory they took.
    func removeAll() { preconditionFailure("overridden") }
    /// The property's functions.
    var operations: any PropertyOperations.Type { preconditionFailure("overridden") }
    /// Doubles the leaves until `slot` is one (its contribution, like every new leaf's, the default), and
    /// merges the inner nodes again: O(leaves), amortized over the members that made it necessary.
    @usableFromInline func grow(toHold slot: Int) { preconditionFailure("overridden") }
}

/// An empty total of `Property`, for a typed step that finds none (Properties/PropertyPathStep.swift):
/// generic code of this module, called only when a node's first member contributes the property.
@usableFromInline
func makePropertyTotal<Property: ProgressProperty>(_: Property.Type) -> PropertyTotalStorage {
    PropertyTotalOf<Property>()
}

/// `PropertyTotalStorage` for `Property`: the type-erased operations, and the storage's life.
final class PropertyTotalOf<Property: ProgressProperty>: PropertyTotalStorage, @unchecked Sendable {
    init() { super.init(key: ObjectIdentifier(Property.self)) }

    deinit { removeAll() }

    private var typedTree: UnsafeMutablePointer<Property.Summary>? {
        tree?.assumingMemoryBound(to: Property.Summary.self)
    }

    override func set(_ slot: Int, to summary: (any Sendable)?) {
        setTyped(slot, to: summary.map { $0 as! Property.Summary })
    }

    /// `set(_:to:)` for a caller that knows the property's type. The typed step does the same inline.
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
    var typedTotal: Property.Summary { typedTree?[1] ?? Property.defaultSummary }

    private func update(_ slot: Int, to value: Property.Summary) {
        guard let tree = typedTree else { preconditionFailure("a total holds its slots") }
        var index = capacity + slot
        tree[index] = value
        while index > 1 {
            index /= 2
            tree[index] = Property.merge(tree[2 * index], tree[2 * index + 1])
        }
    }

    override var total: any Sendable { typedTotal }

    override var operations: any PropertyOperations.Type { PropertyOperationsOf<Property>.self }

    override func removeAll() {
        guard let tree = typedTree else { return }
        tree.deinitialize(count: 2 * capacity)
        tree.deallocate()
        self.tree = nil
        capacity = 0
    }

    override func grow(toHold slot: Int) {
        var newCapacity = max(capacity, 1)
        while newCapacity <= slot { newCapacity *= 2 }
        let newTree = UnsafeMutablePointer<Property.Summary>.allocate(capacity: 2 * newCapacity)
        newTree.initialize(repeating: Property.defaultSummary, count: 2 * newCapacity)
        if let tree = typedTree { (newTree + newCapacity).update(from: tree + capacity, count: capacity) }
        for index in stride(from: newCapacity - 1, through: 1, by: -1) {
            newTree[index] = Property.merge(newTree[2 * index], newTree[2 * index + 1])
        }
        removeAll()
        tree = UnsafeMutableRawPointer(newTree)
        capacity = newCapacity
    }
}
