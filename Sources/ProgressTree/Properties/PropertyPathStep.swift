// The typed part of a value set and of a current read (ProgressNode+PropertyPath.swift), compiled for each
// property where its conformance is declared: `ProgressProperty._progressTreeSetValue(_:on:)` and
// `_progressTreeSummary(of:)` are requirements whose defaults are `@inlinable`, so each conformance's witness
// is a copy specialized for its `Value` and `Summary`. They call the library's non-generic walk (locks,
// members, the path up) with a closure that does one level's typed work (`_propertyLevelStep`): no generic
// metadata to instantiate, no boxed summary, no cast of a summary.
//
// The closure runs under the tree's domain lock, and the node's lock where the walk takes it, `reduce` and
// `merge` included (user code that must not call into the tree, as the protocol says).

/// What the walk hands the typed step at one node: its members' total of the property. `Sendable`: the total
/// is reached only under the tree's domain lock, where the step runs.
@usableFromInline
struct PropertyLevel: Sendable {
    /// The slot of the member below (the node the walk comes from) in `total`'s tree, whose contribution
    /// the step replaces by the summary it carries; -1 when it replaces nothing (the node whose value was
    /// set, or the node read).
    @usableFromInline let slot: Int
    /// The node's total of the property over its members, `nil` when no member contributed it yet. Not
    /// retained: the node's `PropertySums` holds it, under the domain lock, where the step runs.
    @usableFromInline var total: Unmanaged<PropertyTotalStorage>?
    /// The total the step made when it found none (the first member to contribute), retained once for the
    /// walk, which adds it to the node and hands it that reference (then `total` is this one). Unmanaged,
    /// so that a level is a plain value: copied, passed and returned with no reference count.
    @usableFromInline var madeTotal: Unmanaged<PropertyTotalStorage>?

    /// A level whose total is held by the node's `PropertySums`, under the domain lock.
    init(slot: Int, total: Unmanaged<PropertyTotalStorage>?) {
        self.slot = slot
        self.total = total
    }
}

/// A property's typed step (`ProgressProperty._propertyLevelStep`) as the walk calls it: the level, and the
/// node's entry of the property (`nil`: none), valid during the call.
@usableFromInline
typealias PropertyStep = (inout PropertyLevel, UnsafePointer<PropertyEntry>?) -> Void

extension ProgressProperty {
    /// Stores `value` on `node`, then counts it in the kept summaries of its path, typed.
    @inlinable
    public static func _progressTreeSetValue(_ value: Value, on node: ProgressNode) {
        var summary: Summary?
        // The first call is the node's own level, whose entry now holds `value`: given typed, it needs no cast
        // out of the entry.
        var ownValue: Value? = value
        node.setPropertyValue(value, of: Self.self) { level, entry in
            _propertyLevelStep(&level, entry: entry, carrying: &summary, value: ownValue.take())
        }
    }

    /// The kept summary when it is current (typed), else a read of the subtree (`summaryByRead`).
    @inlinable
    public static func _progressTreeSummary(of node: ProgressNode) -> Summary {
        var summary: Summary?
        let current = node.keptPropertySummary(ObjectIdentifier(Self.self)) { level, entry in
            _propertyLevelStep(&level, entry: entry, carrying: &summary)
        }
        if current {
            return summary ?? _propertyNodeSummary(nil, below: nil)
        }
        return node.summaryByRead(Self.self)
    }

    /// One level: replaces the member's contribution in `level.total` by `summary` when the level names a
    /// slot (making the total when it finds none and there is something to put in it), then sets `summary`
    /// to the node's own: `nil` when it has neither an entry nor a total (it contributes the default).
    /// Under the domain lock (and the node's lock where the walk takes it). The total holds `Summary` values:
    /// the walk found it by this property's key (checked in debug builds).
    ///
    /// `value`, when given, is the value `entry` holds, typed. Inlined into the closure that calls it: a
    /// call per level was a tenth of a value set's walk 8 deep.
    @inlinable @inline(__always)
    static func _propertyLevelStep(
        _ level: inout PropertyLevel, entry: UnsafePointer<PropertyEntry>?, carrying summary: inout Summary?,
        value: Value? = nil
    ) {
        if level.slot >= 0 {
            if let total = level.total {
                total._withUnsafeGuaranteedRef { _replace(level.slot, of: $0, by: summary) }
            } else if let summary {
                let total = makePropertyTotal(Self.self)
                _replace(level.slot, of: total, by: summary)
                level.total = Unmanaged.passUnretained(total)
                level.madeTotal = Unmanaged.passRetained(total)
            }
        }
        let below: Summary?
        if let total = level.total {
            below = total._withUnsafeGuaranteedRef { total -> Summary in
                guard let tree = total.tree else { return defaultSummary }
                return tree.assumingMemoryBound(to: Summary.self)[1]
            }
        } else {
            guard entry != nil else {
                summary = nil
                return
            }
            below = nil
        }
        summary = _propertyNodeSummary(entry, below: below, value: value)
    }

    /// A node's summary: its value (or the default) reduced into the default summary, merged with what its
    /// children left behind, then with `below` (its members' total, `nil`: none). As
    /// `PropertyOperationsOf.typedSummary(_:below:)`, which a read computes. `value`, when given, is the
    /// value the entry holds, typed.
    @inlinable @inline(__always)
    static func _propertyNodeSummary(
        _ entry: UnsafePointer<PropertyEntry>?, below: Summary?, value: Value? = nil
    ) -> Summary {
        var summary = defaultSummary
        if let entry {
            reduce(into: &summary, value: value ?? entry.pointee.value.map { $0 as! Value } ?? defaultValue)
            for left in entry.pointee.leftBehind { summary = merge(summary, left as! Summary) }
        } else {
            reduce(into: &summary, value: defaultValue)
        }
        if let below { summary = merge(summary, below) }
        return summary
    }

    /// Puts `summary` (`nil`: the default) in `slot` of `total` and merges the path above it again, as
    /// `PropertyTotalOf.setTyped(_:to:)` does.
    @inlinable @inline(__always)
    static func _replace(_ slot: Int, of total: PropertyTotalStorage, by summary: Summary?) {
        assert(total.key == ObjectIdentifier(Self.self), "a total under another property's key")
        let value: Summary
        if slot >= total.capacity {
            guard let summary else { return }  // beyond the leaves, every slot holds the default already
            total.grow(toHold: slot)
            value = summary
        } else {
            value = summary ?? defaultSummary
        }
        guard let raw = total.tree else { preconditionFailure("a total holds its slots") }
        let tree = raw.assumingMemoryBound(to: Summary.self)
        var index = total.capacity + slot
        tree[index] = value
        while index > 1 {
            index /= 2
            tree[index] = merge(tree[2 * index], tree[2 * index + 1])
        }
    }
}
