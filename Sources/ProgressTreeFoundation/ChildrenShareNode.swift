import ProgressTree

/// The child of a mirror node that stands for the adopted Progress's own unfinished children, as one.
///
/// A `ProgressNode` shows partial work of its children only through children; Foundation does not list a
/// Progress's children, but its `fractionCompleted` holds their partial work beyond its own counts. This
/// node contributes exactly that (`ProgressReading.childrenShare`), so the mirror node keeps the Progress's
/// counts and its fraction both. It is created the first time the share is above 0, never finishes (it is
/// not the Progress's work, only a view of it), and is labelled "Subtasks" with no amount.
///
/// Its weight is 2⁴⁶ of the mirror's units and its total 2⁶² units, so a share of `s` units is `s × 2¹⁶`
/// of its units: powers of two, so the contribution is exact up to 2³⁷ units and to 1/65,536 of a unit.
struct ChildrenShareNode: Sendable {
    static let pendingUnitCount: Int64 = 1 << 46
    static let totalUnitCount: Int64 = 1 << 62
    static let unitsPerShare: Double = 65_536

    private(set) var node: ProgressNode?

    /// Makes `parent`'s share of its Progress's children `share` units (creating the node if needed).
    mutating func update(_ share: Double, under parent: ProgressNode) {
        let completed = min(Int64((share * Self.unitsPerShare).rounded()), Self.totalUnitCount - 1)
        guard let node else {
            guard completed > 0 else { return }
            let node = ProgressNode(
                totalUnitCount: Self.totalUnitCount, parent: parent, pendingUnitCount: Self.pendingUnitCount)
            node.localizedDescription = "Subtasks"
            node.localizedAdditionalDescription = ""
            node.completedUnitCount = completed
            self.node = node
            return
        }
        if node.completedUnitCount != completed { node.completedUnitCount = completed }
    }
}
