import Foundation
import ProgressTree
import XCTest

/// The misuses of composition that stop the program, each with a message that names it
/// (Docs/Composition.md: "A tree is never silently corrupted"). Each scenario runs in a child process of
/// the test binary, and the test checks how it ended and what it printed.
final class CompositionPreconditionTests: XCTestCase {
    /// A finished child was detached from its parent: adding it again names that, not "already has a parent"
    /// (it has none any more).
    func test_adding_a_finished_and_detached_child_again_names_the_problem() throws {
        try expectPrecondition(
            "readdFinishedChild", "the child was already added to a parent, finished and was detached")
    }

    func test_adding_an_attached_child_to_a_second_parent_names_the_problem() throws {
        try expectPrecondition("addChildTwice", "the child already has a parent")
    }

    func test_adding_an_ancestor_as_a_child_names_the_cycle() throws {
        try expectPrecondition("ancestorAsChild", "the child is an ancestor of this node; adding it would make a cycle")
    }

    /// A finished node its parent still holds (work is attached below it) is above that work: adding its
    /// ancestor below the work would make a cycle that transitions would follow for ever.
    func test_adding_an_ancestor_held_above_a_finished_node_as_a_child_names_the_cycle() throws {
        try expectPrecondition(
            "ancestorThroughHeldNode", "the child is an ancestor of this node; adding it would make a cycle")
    }

    /// Docs/Composition.md: "Passing a parent that is not current is a precondition failure".
    func test_init_parent_with_a_parent_that_is_not_current_names_the_problem() throws {
        try expectPrecondition("initParentNotCurrent", "the parent must be the current node")
    }

    func test_adding_a_node_as_its_own_child_names_the_problem() throws {
        try expectPrecondition("selfAsChild", "a node cannot be its own child")
    }

    func test_a_negative_pending_unit_count_names_the_problem() throws {
        try expectPrecondition("negativePending", "the pending unit count must not be negative (got -1)")
    }

    /// The initializer that attaches at once (without `addChild`) checks the same, and names itself: the
    /// call the user made, not `addChild`, which they did not (issue 49, item 2).
    func test_a_negative_pending_unit_count_in_the_attaching_initializer_names_the_problem() throws {
        try expectPrecondition(
            "negativePendingInit",
            "ProgressNode(totalUnitCount:parent:pendingUnitCount:): the pending unit count must not be negative "
                + "(got -1)")
        try expectNoMention("negativePendingInit", of: "addChild")
    }

    /// `performAsCurrent` names itself, not the `becomeCurrent` it calls (issue 49, item 2).
    func test_a_negative_pending_unit_count_in_perform_as_current_names_it() throws {
        try expectPrecondition(
            "negativePendingPerform",
            "performAsCurrent(withPendingUnitCount:using:): the pending unit count must not be negative (got -3)")
        try expectNoMention("negativePendingPerform", of: "becomeCurrent")
    }

    /// A share checks what `addChild` checks, when it is made.
    func test_a_share_of_a_negative_pending_unit_count_names_the_problem() throws {
        try expectPrecondition(
            "negativeShare", "share(pendingUnitCount:): the pending unit count must not be negative (got -1)")
    }

    /// Docs/Composition.md: `resignCurrent` must be called on the node that is innermost.
    func test_resignCurrent_of_a_node_that_is_not_current_names_the_problem() throws {
        try expectPrecondition("resignNotCurrent", "resignCurrent(): this node is not the current node of this thread")
    }

    /// The single-threaded scenarios run in a child process (skipped in an ordinary run).
    func test_scenario_run_in_a_child_process() throws {
        switch try scenarioOfThisChildProcess() {
        case "readdFinishedChild":
            let first = ProgressNode(totalUnitCount: 1)
            let second = ProgressNode(totalUnitCount: 1)
            let child = ProgressNode(totalUnitCount: 1, parent: first, pendingUnitCount: 1)
            child.advance()  // finished: credited and detached from `first`
            second.addChild(child, withPendingUnitCount: 1)
        case "addChildTwice":
            let child = ProgressNode(totalUnitCount: 1, parent: ProgressNode(totalUnitCount: 1), pendingUnitCount: 1)
            ProgressNode(totalUnitCount: 1).addChild(child, withPendingUnitCount: 1)
        case "ancestorThroughHeldNode":
            let root = ProgressNode.discreteProgress(totalUnitCount: 1)
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 0)
            middle.completedUnitCount = 1  // finished: credited to `root`, held there while `leaf` runs
            leaf.addChild(root, withPendingUnitCount: 1)
        case "ancestorAsChild":
            let root = ProgressNode(totalUnitCount: 1)
            let middle = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
            let leaf = ProgressNode(totalUnitCount: 1, parent: middle, pendingUnitCount: 1)
            leaf.addChild(root, withPendingUnitCount: 1)
        case "initParentNotCurrent":
            _ = ProgressNode(parent: ProgressNode(totalUnitCount: 1))
        case "selfAsChild":
            let node = ProgressNode(totalUnitCount: 1)
            node.addChild(node, withPendingUnitCount: 1)
        case "negativePending":
            ProgressNode(totalUnitCount: 1).addChild(ProgressNode(totalUnitCount: 1), withPendingUnitCount: -1)
        case "negativePendingInit":
            _ = ProgressNode(totalUnitCount: 1, parent: ProgressNode(totalUnitCount: 1), pendingUnitCount: -1)
        case "negativePendingPerform":
            ProgressNode(totalUnitCount: 1).performAsCurrent(withPendingUnitCount: -3) {}
        case "negativeShare":
            _ = ProgressNode(totalUnitCount: 1).share(pendingUnitCount: -1)
        case "resignNotCurrent":
            let outer = ProgressNode(totalUnitCount: 2)
            let inner = ProgressNode(totalUnitCount: 2)
            outer.becomeCurrent(withPendingUnitCount: 1)
            inner.becomeCurrent(withPendingUnitCount: 1)
            outer.resignCurrent()  // not the innermost
        case let scenario:
            XCTFail("unknown scenario \(scenario)")
        }
        print("NO PRECONDITION")
    }

    /// The precondition's message of `scenario` does not name `call`.
    private func expectNoMention(
        _ scenario: String, of call: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let result = try runInChildProcess(
            "CompositionPreconditionTests/test_scenario_run_in_a_child_process", scenario: scenario)
        let message = result.output.split(separator: "\n").filter {
            $0.contains("Precondition failed") || $0.contains("Fatal error")
        }
        XCTAssertEqual(message.count, 1, result.output, file: file, line: line)
        XCTAssertFalse(message.contains { $0.contains(call) }, "\(message)", file: file, line: line)
    }

    private func expectPrecondition(
        _ scenario: String, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let result = try runInChildProcess(
            "CompositionPreconditionTests/test_scenario_run_in_a_child_process", scenario: scenario)
        XCTAssertNotEqual(result.status, 0, "the child process went on", file: file, line: line)
        XCTAssertTrue(
            result.output.contains(message), "got: " + preconditionLines(result.output), file: file, line: line)
    }
}

// MARK: Running a scenario in a child process (to check a precondition's message)

let scenarioVariable = "PROGRESSTREE_PRECONDITION_SCENARIO"

/// The scenario this process was started for, or a skip when it is an ordinary test run.
func scenarioOfThisChildProcess() throws -> String {
    guard let scenario = ProcessInfo.processInfo.environment[scenarioVariable] else {
        throw XCTSkip("runs only in the child process of another test")
    }
    return scenario
}

/// Runs the test `test` (`"Class/method"` of this module) with `scenario` in a new process of this test
/// binary, and returns how it ended and what it printed (stdout and stderr together).
func runInChildProcess(_ test: String, scenario: String) throws -> (status: Int32, output: String) {
    #if os(Linux)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["ProgressTreeTests.\(test)"]
    var environment = ProcessInfo.processInfo.environment
    environment[scenarioVariable] = scenario
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    #else
    throw XCTSkip("the child-process harness finds the test binary as on Linux only")
    #endif
}

/// The lines of a child process's output that name a precondition of the library.
private func preconditionLines(_ output: String) -> String {
    output.split(separator: "\n").filter { $0.contains("Fatal error") || $0.contains("CYCLE") }
        .joined(separator: " | ")
}
