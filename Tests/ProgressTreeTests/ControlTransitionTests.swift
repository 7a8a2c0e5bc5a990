import ProgressTree
import TestSupport
import XCTest

/// A transition that flows down a tree: `cancel()`, `pause()`, or `resume()` of a paused tree.
struct DownwardTransition: CustomStringConvertible, Sendable {
    let description: String
    /// What the tree needs first, applied to its root: nothing, or (for `resume()`) a pause.
    let prepare: @Sendable (ProgressNode) -> Void
    let apply: @Sendable (ProgressNode) -> Void
    /// Whether a node is in the state the transition leads to.
    let hasApplied: @Sendable (ProgressNode) -> Bool
    /// The handler the transition calls.
    let handler: ReferenceWritableKeyPath<ProgressNode, (@Sendable () -> Void)?> & Sendable
    /// The advisory flag that goes with it, and its default.
    let advisoryFlag: ReferenceWritableKeyPath<ProgressNode, Bool> & Sendable
    let advisoryDefault: Bool

    static let cancel = DownwardTransition(
        description: "cancel()", prepare: { _ in }, apply: { $0.cancel() }, hasApplied: { $0.isCancelled },
        handler: \.cancellationHandler, advisoryFlag: \.isCancellable, advisoryDefault: true)
    static let pause = DownwardTransition(
        description: "pause()", prepare: { _ in }, apply: { $0.pause() }, hasApplied: { $0.isPaused },
        handler: \.pausingHandler, advisoryFlag: \.isPausable, advisoryDefault: false)
    static let resume = DownwardTransition(
        description: "resume() of a paused tree", prepare: { $0.pause() }, apply: { $0.resume() },
        hasApplied: { !$0.isPaused }, handler: \.resumingHandler, advisoryFlag: \.isPausable, advisoryDefault: false)
    static let all = [cancel, pause, resume]
}

/// What `cancel()`, `pause()` and `resume()` have in common (Docs/Cancellation.md, "The model"): they flow
/// down to the attached nodes and never up, run each handler once per change, parent before children in
/// the order the children were added, keep the work done, and reach 10,000 children in one call. Each test
/// runs for each of the three transitions.
final class ControlTransitionTests: XCTestCase {
    func test_a_new_node_is_running_with_no_handlers_and_the_default_advisory_flags() {
        let node = ProgressNode(totalUnitCount: 10)
        XCTAssertEqual([node.isCancelled, node.isPaused], [false, false])
        XCTAssertEqual([node.isCancellable, node.isPausable], [true, false])
        XCTAssertNil(node.cancellationHandler)
        XCTAssertNil(node.pausingHandler)
        XCTAssertNil(node.resumingHandler)
    }

    func test_the_advisory_flag_neither_stops_the_transition_nor_changes_with_it() {
        for transition in DownwardTransition.all {
            let node = ProgressNode(totalUnitCount: 10)
            XCTAssertEqual(node[keyPath: transition.advisoryFlag], transition.advisoryDefault, "\(transition)")
            node[keyPath: transition.advisoryFlag] = !transition.advisoryDefault
            transition.prepare(node)
            transition.apply(node)
            XCTAssertTrue(transition.hasApplied(node), "\(transition)")
            XCTAssertEqual(node[keyPath: transition.advisoryFlag], !transition.advisoryDefault, "\(transition)")
        }
    }

    func test_a_transition_flows_down_to_every_descendant_and_never_up() {
        for transition in DownwardTransition.all {
            let tree = TestTree()
            transition.prepare(tree.root)

            transition.apply(tree.a)

            XCTAssertEqual(
                tree.named.map { transition.hasApplied($0.node) ? $0.name : "-" },
                ["-", "a", "-", "-", "a1", "a2", "-", "a1x"], "\(transition): a's subtree, not its parent or siblings")
        }
    }

    func test_handlers_run_parent_before_children_in_insertion_order() {
        for transition in DownwardTransition.all {
            let log = ControlCallLog()
            let tree = TestTree()
            transition.prepare(tree.root)
            for (name, node) in tree.named { node[keyPath: transition.handler] = log.handler(name) }

            transition.apply(tree.root)

            XCTAssertEqual(log.all, ["root", "a", "a1", "a1x", "a2", "b", "b1", "c"], "\(transition)")
        }
    }

    func test_a_repeated_transition_runs_each_handler_once() {
        for transition in DownwardTransition.all {
            let log = ControlCallLog()
            let root = ProgressNode(totalUnitCount: 10)
            let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 10)
            transition.prepare(root)
            root[keyPath: transition.handler] = log.handler("root")
            child[keyPath: transition.handler] = log.handler("child")

            transition.apply(root)
            transition.apply(root)
            transition.apply(child)
            transition.apply(root)

            XCTAssertEqual(log.all, ["root", "child"], "\(transition)")
            XCTAssertTrue(transition.hasApplied(root), "\(transition)")
            XCTAssertTrue(transition.hasApplied(child), "\(transition)")
        }
    }

    /// A user interface can show "cancelled at 42%", or "paused at 42%".
    func test_counts_and_fraction_are_kept() {
        for transition in DownwardTransition.all {
            let root = ProgressNode(totalUnitCount: 100)
            root.completedUnitCount = 22
            let child = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 50)
            child.completedUnitCount = 4
            XCTAssertEqual(root.fractionCompleted, 0.42)
            transition.prepare(root)

            transition.apply(root)

            XCTAssertEqual(root.completedUnitCount, 22, "\(transition)")
            XCTAssertEqual(root.totalUnitCount, 100, "\(transition)")
            XCTAssertEqual(child.completedUnitCount, 4, "\(transition)")
            XCTAssertEqual(child.totalUnitCount, 10, "\(transition)")
            XCTAssertEqual(child.fractionCompleted, 0.4, "\(transition)")
            XCTAssertEqual(root.fractionCompleted, 0.42, "\(transition)")
            XCTAssertFalse(root.isFinished, "\(transition)")
            XCTAssertFalse(root.isIndeterminate, "\(transition)")
        }
    }

    func test_10_000_children_are_all_reached_when_the_call_returns() {
        for transition in DownwardTransition.all {
            let root = ProgressNode(totalUnitCount: 10_000)
            let counter = CallCounter()
            let children = (0..<10_000).map { _ in
                let child = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
                child[keyPath: transition.handler] = counter.increment
                return child
            }
            transition.prepare(root)

            transition.apply(root)

            XCTAssertEqual(children.filter(transition.hasApplied).count, 10_000, "\(transition)")
            XCTAssertEqual(counter.value, 10_000, "\(transition)")
            transition.apply(root)
            XCTAssertEqual(counter.value, 10_000, "\(transition): once")
        }
    }
}

/// root → a, b, c (added in that order); a → a1, a2; a1 → a1x; b → b1.
private struct TestTree {
    let root = ProgressNode(totalUnitCount: 10)
    let a: ProgressNode
    let named: [(name: String, node: ProgressNode)]

    init() {
        a = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 3)
        let b = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 3)
        let a1 = ProgressNode(totalUnitCount: 10, parent: a, pendingUnitCount: 3)
        let a2 = ProgressNode(totalUnitCount: 10, parent: a, pendingUnitCount: 3)
        let b1 = ProgressNode(totalUnitCount: 10, parent: b, pendingUnitCount: 3)
        let a1x = ProgressNode(totalUnitCount: 10, parent: a1, pendingUnitCount: 3)
        let c = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 3)
        named = [("root", root), ("a", a), ("b", b), ("c", c), ("a1", a1), ("a2", a2), ("b1", b1), ("a1x", a1x)]
    }
}
