// How a node's `ChildSums` holds the columns of its summaries: by unmanaged references, so that the engine's
// steps, one a level of every changed path, touch no reference count (the counts were most of a step's time:
// an atomic operation each, several a level). One of the engine's two named places for unmanaged references,
// with the lent parts and steps of SummaryStep.swift.

/// A column of a node's summaries as its node's `ChildSums` holds it: an unmanaged reference, and its key.
///
/// Contract: `ChildSums` makes one with `init(retaining:)` when it adds a column and releases it in its
/// `deinit`, once; it never removes a column before. So a reference read from a part's `columns` under the
/// tree's domain lock is to a live column for as long as the lock is held and the part's node is (the
/// engine's steps run there). Its accessors read the column as its property's `SummaryTree` after checking the
/// key (`SummaryTree.of`), in every build.
@usableFromInline
struct ColumnReference {
    @usableFromInline let column: Unmanaged<SummaryColumn>
    /// The column's key (its property's `ObjectIdentifier`), kept here so that a look-up by key reads no
    /// column.
    @usableFromInline let key: ObjectIdentifier

    /// A reference to `column`, retained: the holder releases it once (`release()`).
    init(retaining column: SummaryColumn) {
        self.column = .passRetained(column)
        key = column.key
    }

    /// Gives the reference back (the holder's `deinit`).
    func release() { column.release() }

    /// The column's property.
    var property: any ProgressProperty.Type { column._withUnsafeGuaranteedRef { $0.property } }

    /// The members' contributions merged with what left (`SummaryTree.combined`).
    @inlinable
    func combined<Property: ProgressProperty>(_: Property.Type) -> Property.Summary? {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).combined }
    }

    /// Sets the contribution at `entry` (`nil`: the default), merging the path above it unless `merging` is
    /// `false` (`SummaryTree.setLeaf`: a start, which merges once at its end).
    @inlinable
    func set<Property: ProgressProperty>(
        _: Property.Type, entry: Int, to summary: Property.Summary?, merging: Bool = true
    ) {
        column._withUnsafeGuaranteedRef { column in
            let tree = SummaryTree<Property>.of(column)
            if let summary {
                if merging { tree.set(entry, to: summary) } else { tree.setLeaf(entry, to: summary) }
            } else {
                tree.clear(entry)
            }
        }
    }

    /// Sets the contribution at `entry` to what `source`, a member's column of the same property, keeps of
    /// its children (`SummaryColumn.copyStep`, which checks both keys).
    func copy(from source: ColumnReference, entry: Int, merging: Bool) {
        column._withUnsafeGuaranteedRef { target in
            source.column._withUnsafeGuaranteedRef { target.copyStep(target, $0, entry, merging) }
        }
    }

    /// Merges every inner node again (`SummaryTree.rebuild`).
    @inlinable
    func rebuild<Property: ProgressProperty>(_: Property.Type) {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).rebuild() }
    }

    /// Adds what a member left.
    @inlinable
    func addLeft<Property: ProgressProperty>(_: Property.Type, _ summary: Property.Summary) {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).addLeft(summary) }
    }

    /// Forgets every member's contribution.
    @inlinable
    func removeLeaves<Property: ProgressProperty>(_: Property.Type) {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).removeLeaves() }
    }

    /// The column's invariants (`SummaryTree.violations()`).
    @inlinable
    func violations<Property: ProgressProperty>(_: Property.Type) -> [String] {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).violations() }
    }

    /// Whether the contribution at `entry` is `expected` (`SummaryTree.violations(ofEntry:expecting:)`).
    @inlinable
    func violations<Property: ProgressProperty>(
        _: Property.Type, ofEntry entry: Int, expecting expected: Property.Summary
    ) -> [String] {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).violations(ofEntry: entry, expecting: expected) }
    }
}

extension ColumnReference {
    /// How many leaves the column's tree has (for tests: memory follows the members).
    var leafCount: Int { column._withUnsafeGuaranteedRef { $0.leafCount } }

    /// What the members that left left behind (for tests).
    func left<Property: ProgressProperty>(_: Property.Type) -> Property.Summary? {
        column._withUnsafeGuaranteedRef { SummaryTree<Property>.of($0).left }
    }
}
