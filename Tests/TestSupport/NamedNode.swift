import ProgressTree

/// A child of `parent` described as `name`, of `total` units standing for `pending` of the parent's.
@discardableResult
package func makeNamedNode(_ name: String, total: Int64, parent: ProgressNode, pending: Int64 = 1) -> ProgressNode {
    let node = ProgressNode(totalUnitCount: total, parent: parent, pendingUnitCount: pending)
    node.localizedDescription = name
    return node
}

/// A failure told apart by its number.
package struct Numbered: Error, CustomStringConvertible {
    package let number: Int
    package init(number: Int) { self.number = number }
    package var description: String { "failure \(number)" }
}
