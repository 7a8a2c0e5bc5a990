import ProgressTree
import XCTest

/// How one node's counts read: indeterminate (reports 0), finished (reports 1), or the plain fraction
/// (Docs/Composition.md, "Indeterminate children" and "Finishing is permanent").
final class FractionTableTests: XCTestCase {
    func test_table_of_counts_gives_exact_indeterminate_and_fraction() {
        let rows: [(completed: Int64, total: Int64, indeterminate: Bool, fraction: Double)] = [
            (-1, -1, true, 0), (0, -1, true, 0), (1, -1, true, 0), (-1, 0, true, 0), (0, 0, true, 0),
            (1, 0, false, 1), (-1, 1, true, 0), (0, 1, false, 0), (1, 1, false, 1),
        ]
        for row in rows {
            let node = ProgressNode.discreteProgress(totalUnitCount: row.total)
            node.completedUnitCount = row.completed
            XCTAssertEqual(node.isIndeterminate, row.indeterminate, "(\(row.completed), \(row.total))")
            XCTAssertEqual(node.fractionCompleted, row.fraction, "(\(row.completed), \(row.total))")
        }
    }
}
