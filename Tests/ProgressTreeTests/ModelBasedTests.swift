import Foundation
@testable import ProgressTree
import XCTest

/// Random sequences of operations, run on real nodes and on `ReferenceModel` (a naive model of
/// Docs/Composition.md and Docs/Cancellation.md), compared after every step: `fractionCompleted` (within
/// 1e-12), the counts, `isFinished`, `isIndeterminate`, `isCancelled`, `isPaused`, the attached children
/// (which and in what order), `isFailed`, how often each handler ran, and `ProgressNode.current()`; and each
/// node's kept `fileSummary` against a walk of its subtree (even seeds make every third node a file and
/// every fifth announce two files).
///
/// The operations: creating nodes in every way (`discreteProgress`, `init(totalUnitCount:)` in and out of a
/// scope, `init(parent:)`, `init(totalUnitCount:parent:pendingUnitCount:)`), `addChild`, implicit scopes
/// (`becomeCurrent`/`resignCurrent`, `performAsCurrent`, synchronous `withCurrent`, nested, with operations
/// inside), setting either count, `advance(by:)` (small values mostly, sometimes the bounds of `Int64` or
/// counts a `Double` cannot hold exactly), bursts of count changes with no read in between, finishing a
/// node by hand (mostly one with children, so that finished nodes with work attached below them are
/// common), `cancel()`, `fail(_:)`, `pause()`, `resume()`, and setting the handlers again. Reads go through the nodes in a random
/// order each time, so the cached sums are brought up to date from different places.
///
/// Each sequence is named by its seed. A failure prints the seed, what differed, the model's state and the
/// operations so far as Swift code. More seeds:
///
///     PROGRESSTREE_MODEL_SEEDS=1-20000 swift test --filter ModelBasedTests   # a range
///     PROGRESSTREE_MODEL_SEEDS=17,4242 swift test --filter ModelBasedTests   # a list (ranges allowed)
///     PROGRESSTREE_MODEL_STEPS=400 …                                          # longer sequences (default 80)
final class ModelBasedTests: XCTestCase {
    /// The default run: fast enough for every run of the suite, also under ThreadSanitizer.
    static let defaultSeeds = Array(UInt64(1)...300)
    /// Operations per sequence (those inside scopes included); `PROGRESSTREE_MODEL_STEPS` overrides it.
    static let stepsPerSequence = 80

    func test_random_operation_sequences_match_the_reference_model_after_every_step() throws {
        let seeds = try ModelSeeds.fromEnvironment() ?? Self.defaultSeeds
        let steps =
            ProcessInfo.processInfo.environment["PROGRESSTREE_MODEL_STEPS"].flatMap { Int($0) } ?? Self.stepsPerSequence
        var failures: [(seed: UInt64, program: [ModelOperation], failure: ModelFailure)] = []
        for seed in seeds {
            let run = ModelRun(seed: seed, steps: steps)
            if let failure = run.run() { failures.append((seed, run.program, failure)) }
        }
        // The first few failures, each as found and shrunk to a small program that still fails the same way.
        for failure in failures.prefix(3) {
            let shrunk = ModelRun.shrink(failure.program, seed: failure.seed, failure: failure.failure)
            XCTFail(
                failure.failure.report + "\n\nshrunk (a smaller program failing on the same property):\n"
                    + shrunk.failure.report)
        }
        XCTAssertEqual(
            failures.count, 0,
            "\(failures.count) of \(seeds.count) seeds differ from the model: "
                + failures.prefix(50).map { "\($0.seed)" }.joined(separator: ",")
                + " (rerun one with PROGRESSTREE_MODEL_SEEDS=<seed>)")
    }

    /// The generator meets the shapes the rules are about often enough to test them: finished nodes with
    /// work attached below them (held), and failures.
    func test_the_default_runs_meet_held_finished_nodes_and_failures() {
        var held = 0
        var failed = 0
        for seed in Self.defaultSeeds {
            // The sequences of the test above, which checks the invariants on them already.
            let run = ModelRun(seed: seed, steps: Self.stepsPerSequence, checkingInvariants: false)
            _ = run.run()
            if run.metHeldNode { held += 1 }
            if run.metFailure { failed += 1 }
        }
        XCTAssertGreaterThanOrEqual(held, Self.defaultSeeds.count / 5, "runs with a held finished node")
        XCTAssertGreaterThanOrEqual(failed, Self.defaultSeeds.count / 5, "runs with a failure")
    }

    /// The model itself, on the worked examples of Docs/Composition.md and Docs/Cancellation.md, so that a
    /// mismatch found by the random test is not a slip of the model.
    func test_reference_model_reproduces_the_worked_examples_of_the_guides() {
        var model = ReferenceModel()
        // composition-weights
        let photo = model.createRoot(totalUnitCount: 10)
        let download = model.createChild(totalUnitCount: 2_000_000, parent: photo, pendingUnitCount: 9)
        let filter = model.createRoot(totalUnitCount: 1)
        model.addChild(filter, to: photo, pendingUnitCount: 1)
        model.setCompleted(download, 500_000)
        XCTAssertEqual(model.fraction(photo), 0.225, accuracy: 1e-15)
        model.setCompleted(download, 2_000_000)
        XCTAssertEqual(model.nodes[photo].completed, 9)
        XCTAssertEqual(model.children(photo), [filter])
        model.advance(filter, by: 1)
        XCTAssertEqual(model.nodes[photo].completed, 10)
        XCTAssertTrue(model.isFinished(photo))

        // composition-reweighting
        let parent = model.createRoot(totalUnitCount: 100)
        let child = model.createChild(totalUnitCount: 100, parent: parent, pendingUnitCount: 10)
        model.setCompleted(child, 50)
        XCTAssertEqual(model.fraction(parent), 0.05, accuracy: 1e-15)
        model.setTotal(parent, 200)
        XCTAssertEqual(model.fraction(parent), 0.025, accuracy: 1e-15)
        model.setTotal(child, 200)
        XCTAssertEqual(model.fraction(parent), 0.0125, accuracy: 1e-15)
        model.setTotal(child, 50)
        XCTAssertEqual(model.nodes[parent].completed, 10)

        // composition-first-child and composition-no-child
        let job = model.createRoot(totalUnitCount: 10)
        model.beginScope(node: job, pendingUnitCount: 10)
        let first = model.createImplicit(totalUnitCount: 1)
        let second = model.createImplicit(totalUnitCount: 1)
        model.endScope()
        XCTAssertEqual(model.nodes[second].link, .none)
        model.advance(first, by: 1)
        XCTAssertEqual(model.fraction(job), 1)
        let empty = model.createRoot(totalUnitCount: 10)
        model.beginScope(node: empty, pendingUnitCount: 4)
        model.endScope()
        XCTAssertEqual(model.nodes[empty].completed, 4)

        // Docs/Cancellation.md, "The model"; and a paused node finishing leaves the pause with its handler.
        let album = model.createRoot(totalUnitCount: 10)
        model.installHandlers(album)
        let picture = model.createChild(totalUnitCount: 100, parent: album, pendingUnitCount: 5)
        model.installHandlers(picture)
        model.cancel(picture)
        model.pause(album)
        XCTAssertEqual([album, picture].map { model.nodes[$0].isPaused }, [true, false])
        model.setCompleted(album, 10)
        XCTAssertEqual(model.nodes[album].isPaused, false)
        XCTAssertEqual(model.nodes[album].resumingCalls, 1)
        XCTAssertEqual(model.nodes[picture].cancellationCalls, 1)
    }
}

/// The seeds named by an environment variable (`PROGRESSTREE_MODEL_SEEDS`): comma-separated seeds or
/// ranges `first-last`.
enum ModelSeeds {
    struct BadValue: Error, CustomStringConvertible {
        let variable: String
        let value: String
        var description: String { "\(variable): expected seeds or ranges like 1-500,17, got \(value)" }
    }

    static func fromEnvironment(variable: String = "PROGRESSTREE_MODEL_SEEDS") throws -> [UInt64]? {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            return nil
        }
        var seeds: [UInt64] = []
        for item in value.split(separator: ",") {
            let bounds = item.split(separator: "-").map { UInt64($0.trimmingCharacters(in: .whitespaces)) }
            switch bounds.count {
            case 1:
                guard let seed = bounds[0] else { throw BadValue(variable: variable, value: value) }
                seeds.append(seed)
            case 2:
                guard let first = bounds[0], let last = bounds[1], first <= last else {
                    throw BadValue(variable: variable, value: value)
                }
                seeds.append(contentsOf: first...last)
            default:
                throw BadValue(variable: variable, value: value)
            }
        }
        return seeds
    }
}
