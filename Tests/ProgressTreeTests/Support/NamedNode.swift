import ProgressTree

/// A child of `parent` described as `name`, of `total` units standing for `pending` of the parent's.
@discardableResult
func makeNamedNode(_ name: String, total: Int64, parent: ProgressNode, pending: Int64 = 1) -> ProgressNode {
    let node = ProgressNode(totalUnitCount: total, parent: parent, pendingUnitCount: pending)
    node.localizedDescription = name
    return node
}
