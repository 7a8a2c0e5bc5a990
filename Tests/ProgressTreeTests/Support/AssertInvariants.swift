@testable import ProgressTree
import XCTest

/// Fails the test with each invariant of the core that one of `nodes`, or a node below one, breaks
/// (`ProgressNode.invariantViolations()`: checked only in builds with PROGRESSTREE_INTERNAL_CHECKS, such as
/// `PROGRESSTREE_INTERNAL_CHECKS=1 swift test`; nothing otherwise). At a quiescent point only: after the
/// threads that change the tree are joined.
func assertInvariants(_ nodes: ProgressNode..., file: StaticString = #filePath, line: UInt = #line) {
    for node in nodes {
        for violation in node.invariantViolations() {
            XCTFail("ProgressTree internal check failed: \(violation)", file: file, line: line)
        }
    }
}
