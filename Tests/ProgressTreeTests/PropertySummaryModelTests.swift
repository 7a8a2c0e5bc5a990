import Dispatch
@testable import ProgressTree
import Synchronization
import XCTest

/// A sum that every outcome keeps (the default rule).
private enum Skips: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// Work in progress: a child that leaves takes it with it.
private enum Busy: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
    static func summaryLeftBehind(_ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? { nil }
}

/// A maximum, kept by a child that finished and dropped by one that failed.
private enum Peak: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary = max(summary, value) }
    static func merge(_ a: Int, _ b: Int) -> Int { max(a, b) }
    static func summaryLeftBehind(_ summary: Int, by outcome: ProgressPropertyOutcome) -> Int? {
        outcome == .finished ? summary : nil
    }
}

/// The three properties' summaries of one subtree.
private struct Summaries: Equatable, CustomStringConvertible {
    var skips = 0, busy = 0, peak = 0
    var description: String { "skips \(skips), busy \(busy), peak \(peak)" }
}

/// What the tests expect of a node: its values, what its children left behind, its attached children.
private final class Model {
    let node: ProgressNode
    let name: String
    weak var parent: Model?
    var children: [Model] = []
    var skips = 0, busy = 0, peak = 0
    var left = Summaries()
    var done = false
    var cancelled = false
    /// Every child attached to this node that did not fail, finished ones included: a finished node still
    /// passes cancellation on to what is attached below it (SEMANTICS.md, "A transition skips a final
    /// node itself ... but goes on to its attached, unfinished children").
    var linked: [Model] = []

    init(_ node: ProgressNode, name: String, parent: Model?) {
        self.node = node
        self.name = name
        self.parent = parent
        parent?.children.append(self)
        parent?.linked.append(self)
        cancelled = parent?.cancelled ?? false  // a child attached to a cancelled parent is cancelled
    }

    /// A failure of this node's: its unfinished descendants are cancelled, through finished ones too.
    func cancelBelow() {
        for child in linked {
            if !child.done { child.cancelled = true }
            child.cancelBelow()
        }
    }

    /// The summaries a full walk of the model computes: reduce and merge, as the contract states them.
    var expected: Summaries {
        var summary = Summaries(skips: skips + left.skips, busy: busy + left.busy, peak: max(peak, left.peak))
        for child in children {
            let below = child.expected
            summary.skips += below.skips
            summary.busy += below.busy
            summary.peak = max(summary.peak, below.peak)
        }
        return summary
    }

    var actual: Summaries {
        Summaries(
            skips: node.summary(of: Skips.self), busy: node.summary(of: Busy.self), peak: node.summary(of: Peak.self))
    }

    /// This node leaves its parent with `outcome`: the parent keeps what the rules keep.
    func leave(by outcome: ProgressPropertyOutcome) {
        let summary = expected
        done = true
        guard let parent else { return }
        parent.left.skips += summary.skips
        if outcome == .finished { parent.left.peak = max(parent.left.peak, summary.peak) }
        parent.children.removeAll { $0 === self }
        if outcome == .failed { parent.linked.removeAll { $0 === self } }
        self.parent = nil
    }
}

private struct Broken: Error {}

/// A deterministic generator (SplitMix64), so that a failing seed can be replayed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Summaries against a model: values set anywhere, children attached fresh or added with values of their
/// own, finished (with their subtrees still attached, which a failure above still cancels) and failed, in
/// random orders, with reads now and then
/// (so that some value sets walk past members that left and were not yet drained, and past nodes holding
/// what left children left behind). At every read, of the root and of a random node, the kept summary equals
/// the model's full walk.
final class PropertySummaryModelTests: XCTestCase {
    func test_kept_summaries_equal_a_full_walk_after_random_sets_attaches_finishes_and_failures() {
        for seed in UInt64(1)...12 {
            var random = SplitMix(state: seed)
            let root = Model(ProgressNode(totalUnitCount: 1_000_000), name: "root", parent: nil)
            var all = [root]
            var reads = 0
            for step in 0..<600 {
                let live = all.filter { !$0.done }
                let roll = Int.random(in: 0..<100, using: &random)
                switch roll {
                case 0..<40:  // a value set anywhere, a finished node included
                    let model = all.randomElement(using: &random)!
                    let value = Int.random(in: 0...9, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        model.node[Skips.self] = value
                        model.skips = value
                    case 1:
                        model.node[Busy.self] = value
                        model.busy = value
                    default:
                        model.node[Peak.self] = value
                        model.peak = value
                    }
                case 40..<60:  // a child created attached (fresh)
                    let parent = live.randomElement(using: &random)!
                    let node = ProgressNode(totalUnitCount: 1, parent: parent.node, pendingUnitCount: 0)
                    all.append(Model(node, name: "\(parent.name)/\(all.count)", parent: parent))
                    XCTAssertEqual(node.isCancelled, parent.cancelled)
                case 60..<66:  // a child made with a value of its own, then added
                    let parent = live.randomElement(using: &random)!
                    let node = ProgressNode.discreteProgress(totalUnitCount: 1)
                    let value = Int.random(in: 1...9, using: &random)
                    node[Skips.self] = value
                    parent.node.addChild(node, withPendingUnitCount: 0)
                    let model = Model(node, name: "\(parent.name)/+\(all.count)", parent: parent)
                    model.skips = value
                    all.append(model)
                case 66..<80:  // a node finishes, with whatever is still attached below it
                    guard let model = live.filter({ $0 !== root }).randomElement(using: &random) else { break }
                    model.node.completedUnitCount = 1
                    XCTAssertTrue(model.node.isFinished)
                    model.leave(by: model.cancelled ? .cancelled : .finished)
                case 80..<86:  // a leaf fails
                    guard let model = live.filter({ $0 !== root && $0.children.isEmpty }).randomElement(using: &random)
                    else { break }
                    model.node.fail(Broken())
                    XCTAssertEqual(model.node.isFailed, !model.cancelled)  // a cancelled node does not fail
                    guard !model.cancelled else { break }
                    model.cancelBelow()
                    model.leave(by: .failed)
                default:  // a read of the root, or of any node
                    reads += 1
                    let model = Bool.random(using: &random) ? root : all.randomElement(using: &random)!
                    XCTAssertEqual(model.actual, model.expected, "seed \(seed), step \(step), \(model.name)")
                }
            }
            XCTAssertGreaterThan(reads, 50)
            for model in all {
                XCTAssertEqual(model.actual, model.expected, "seed \(seed), at the end, \(model.name)")
            }
            #if PROGRESSTREE_INTERNAL_CHECKS
            root.node.checkInvariants()
            #endif
        }
    }

    /// A sibling leaves a node that the walk of a later value set passes, before any read: the node's kept
    /// summary counts the sibling once (what it left behind, not also its last contribution), and the
    /// node's own entries (what the sibling left) are counted by the walk.
    func test_a_value_set_after_a_sibling_left_counts_the_sibling_once() {
        let root = ProgressNode(totalUnitCount: 1)
        let folder = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 0)
        let first = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        let second = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        first[Skips.self] = 3
        first[Busy.self] = 5
        second[Skips.self] = 1
        XCTAssertEqual(root.summary(of: Skips.self), 4)  // both members now, each with its slot
        XCTAssertEqual(root.summary(of: Busy.self), 5)
        first.completedUnitCount = 1  // leaves 3 skips behind in the folder, takes its 5 busy with it
        second[Skips.self] = 4
        XCTAssertEqual(root.summary(of: Skips.self), 7)
        XCTAssertEqual(root.summary(of: Busy.self), 0)
        // The folder holds what `first` left: later walks through it count that too.
        second[Skips.self] = 6
        second[Busy.self] = 2
        XCTAssertEqual(root.summary(of: Skips.self), 9)
        XCTAssertEqual(root.summary(of: Busy.self), 2)
        XCTAssertEqual(folder.summary(of: Skips.self), 9)
        let third = ProgressNode(totalUnitCount: 1, parent: folder, pendingUnitCount: 0)
        third[Skips.self] = 10
        XCTAssertEqual(root.summary(of: Skips.self), 19)
    }

    /// One thread sets values on a leaf 8 deep, whose walks pass its ancestors without their locks, while
    /// another attaches siblings at every level of the path and gives them values (each walks up too), and
    /// lets three in four go: finished or failed, they take their busy with them, and, at the even levels,
    /// leave their skips behind (so the odd levels hold no entry, and stay passable without their lock while
    /// members leave them). A third thread reads. Once all are done, every summary on the path is exact:
    /// no leave counted twice, no contribution of a sibling that stays lost (a sibling made where one
    /// that left lived takes none of its slot).
    func test_value_sets_that_pass_ancestors_while_their_siblings_come_and_go_are_exact() {
        let depth = 8
        let rounds = 4_000
        let root = ProgressNode(totalUnitCount: 1)
        var chain = [root]
        for _ in 1..<depth { chain.append(ProgressNode(totalUnitCount: 1, parent: chain.last!, pendingUnitCount: 0)) }
        let path = chain
        let leaf = ProgressNode(totalUnitCount: 1, parent: path.last!, pendingUnitCount: 0)
        leaf[Skips.self] = 0
        XCTAssertEqual(root.summary(of: Skips.self), 0)  // the path keeps summaries from here on
        let staying = Mutex<[ProgressNode]>([])  // kept alive and attached to the end
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            switch thread {
            case 0:
                for value in 1...rounds {
                    leaf[Skips.self] = value
                    leaf[Busy.self] = value
                }
            case 1:
                var kept: [ProgressNode] = []
                for round in 0..<rounds {
                    let level = round % depth
                    let sibling = ProgressNode(totalUnitCount: 1, parent: path[level], pendingUnitCount: 0)
                    sibling[Busy.self] = 1
                    if level % 2 == 0 { sibling[Skips.self] = 1 }
                    switch round / depth % 4 {
                    case 0: kept.append(sibling)
                    case 1: sibling.fail(Broken())
                    default: sibling.completedUnitCount = 1
                    }
                }
                staying.withLock { $0 = kept }
            default:
                for round in 0..<(rounds / 4) { _ = path[round % depth].summary(of: Busy.self) }
            }
        }
        XCTAssertEqual(staying.withLock(\.count), rounds / 4)
        for (level, node) in path.enumerated() {
            var skips = rounds
            var busy = rounds
            for round in 0..<rounds where round % depth >= level {
                if round % depth % 2 == 0 { skips += 1 }
                if round / depth % 4 == 0 { busy += 1 }
            }
            XCTAssertEqual(node.summary(of: Skips.self), skips, "level \(level)")
            XCTAssertEqual(node.summary(of: Busy.self), busy, "level \(level)")
        }
        #if PROGRESSTREE_INTERNAL_CHECKS
        root.checkInvariants()
        #endif
    }
}
