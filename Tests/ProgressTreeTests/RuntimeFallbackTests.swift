import Dispatch
import Foundation
@testable import ProgressTree
import Synchronization
import XCTest

/// The core without the Swift runtime's entry points (Core/SwiftRuntime.swift): where `swift_tryRetain` or
/// `swift_nonatomic_retain` is missing, the public paths (a weak link from each child to its parent, an
/// ordinary retain) give the same results. Runs in a child process of the test binary, which drops the entry
/// points before it creates its first node.
final class RuntimeFallbackTests: XCTestCase {
    func test_without_the_runtime_entry_points_the_model_runs_match_and_parents_going_away_are_safe() throws {
        let result = try runInChildProcess(
            "RuntimeFallbackTests/test_scenario_run_in_a_child_process", scenario: "public")
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("entry points: none; weak parent link: yes"), result.output)
        XCTAssertTrue(result.output.contains("model runs: 120 of 120 match"), result.output)
        XCTAssertTrue(result.output.contains("parents going away: 2000 of 2000 children finished"), result.output)
    }

    /// The ordinary process uses the entry points (so the test above tests something else).
    func test_the_runtime_exports_the_entry_points_here() {
        XCTAssertTrue(SwiftRuntime.usesEntryPoints)
    }

    func test_scenario_run_in_a_child_process() throws {
        guard try scenarioOfThisChildProcess() == "public" else { return XCTFail("unknown scenario") }
        SwiftRuntime.usePublicFallbacks()
        let parent = ProgressNode(totalUnitCount: 1)
        let child = ProgressNode(totalUnitCount: 1, parent: parent, pendingUnitCount: 1)
        let linked = child.state.withLock { $0.weakParent } === parent
        print(
            "entry points: \(SwiftRuntime.usesEntryPoints ? "used" : "none"); weak parent link: \(linked ? "yes" : "no")"
        )

        // The model-based runs exercise every reach of a parent by address: finishing, failing, held nodes
        // and their holders going away, the cycle check.
        var matched = 0
        for seed in UInt64(1)...120 where ModelRun(seed: seed, steps: 80).run() == nil { matched += 1 }
        print("model runs: \(matched) of 120 match")

        // A parent let go on one thread while its child finishes on another: the finish either credits a
        // parent that is still there or finds its deinit begun (the weak load fails), never a freed one.
        let finished = Atomic(0)
        for _ in 0..<2000 {
            let holder = Mutex<ProgressNode?>(ProgressNode(totalUnitCount: 1))
            let child = holder.withLock { ProgressNode(totalUnitCount: 2, parent: $0!, pendingUnitCount: 1) }
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    child.completedUnitCount = 2
                    if child.isFinished { finished.add(1, ordering: .relaxed) }
                } else {
                    let taken = holder.withLock { $0.take() }
                    withExtendedLifetime(taken) {}
                }
            }
        }
        print("parents going away: \(finished.load(ordering: .relaxed)) of 2000 children finished")
    }
}
