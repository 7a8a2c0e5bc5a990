import ProgressTree

/// What a reader joining an event stream late needs (`Docs/WireFormat.md`, "Over HTTP"): the current line
/// of every node named and still in the tree, and the kept failures, each with the walk that wrote it.
///
/// It learns the tree from the lines alone, as any reader of the format would, so that the publisher
/// decides what is written (the rules for writers are kept in one place, `WireTreeWalker`):
/// - a `finished` line is a node's last (finishing takes a node out of the tree, and its named
///   descendants' last lines came before it): the node and what is below it are dropped;
/// - a `failed` line is a node's last too: the node and what is below it (the nodes its failure
///   cancelled, its own kept failures) are **kept** as the failure left them, below its parent, the last
///   `maximumKeptFailures` failed children of each parent (the bound of rule 3); a line below a kept node
///   is kept with it;
/// - any other line, `cancelled` included, is the node's current line: a cancelled node stays among its
///   parent's children and is read on. One that then finishes by its counts may leave with no line that
///   says so (its line stays `cancelled`): it stays here, its last line, until its parent leaves.
/// - the root's final line ends the stream: from then on nothing changes.
///
/// A line whose parent is not here (below a node dropped, or below a kept failed node beyond the bound)
/// is not kept: a reader would not know where to put it.
///
/// Not thread-safe: a value, guarded by its owner's lock (`ProgressEventStream`).
struct EventStreamTree {
    /// The most failed children kept below one parent: the bound of rule 3.
    static let maximumKeptFailures = 64

    struct Node {
        let parentID: Int?
        /// The line, without its newline.
        var line: [UInt8]
        /// The walk that wrote it.
        var walk: UInt64
        var isFinal: Bool
        /// Whether the node failed, or is below a failed node: kept as its failure left it.
        var isKept: Bool
        /// The children here (a set: a wide node's children leave one by one).
        var childIDs: Set<Int> = []
        /// The failed children kept, oldest first.
        var keptFailureIDs: [Int] = []
    }

    private(set) var nodes: [Int: Node] = [:]
    /// Whether the root's final line was read.
    private(set) var hasEnded = false

    /// Takes one line the publisher wrote in walk `walk` (`record` is what it says).
    mutating func apply(_ record: ProgressWireRecord, line: ArraySlice<UInt8>, walk: UInt64) {
        guard !hasEnded else { return }
        let id = record.id
        let isFinal = record.state.isFinal
        if var node = nodes[id] {
            node.line = Array(line)
            node.walk = walk
            node.isFinal = isFinal
            nodes[id] = node
        } else {
            var isKept = false
            if let parentID = record.parentID {
                guard var parent = nodes[parentID] else { return }
                parent.childIDs.insert(id)
                nodes[parentID] = parent
                isKept = parent.isKept
            }
            nodes[id] = Node(parentID: record.parentID, line: Array(line), walk: walk, isFinal: isFinal, isKept: isKept)
        }
        guard let parentID = record.parentID else {
            if isFinal { hasEnded = true }
            return
        }
        guard nodes[id]?.isKept == false else { return }
        switch record.state {
        case .finished:
            remove(id)
        case .failed:
            setKept(id)
            guard var parent = nodes[parentID] else { return }
            parent.keptFailureIDs.append(id)
            var dropped: [Int] = []
            if parent.keptFailureIDs.count > Self.maximumKeptFailures {
                dropped.append(parent.keptFailureIDs.removeFirst())
            }
            nodes[parentID] = parent
            for oldest in dropped { remove(oldest) }
        case .running, .paused, .cancelled:
            break
        }
    }

    /// The lines a reader joining now gets before `synced`, in order: each node after its parent
    /// (children are named after their parents, so ids rise down the tree), the root's final line last
    /// once the stream ended. With `omittingFinalLinesBefore: N`, the final lines written before walk
    /// `N` are left out (a reader that saw walk `N` has them); the others are all sent, so that a node
    /// not named is one that left the tree.
    func snapshot(omittingFinalLinesBefore walk: UInt64? = nil) -> [[UInt8]] {
        var ids = nodes.keys.sorted()
        if let walk {
            ids.removeAll { id in nodes[id].map { $0.isFinal && $0.walk < walk } ?? true }
        }
        if hasEnded, let root = ids.first, root == 1 {
            ids.removeFirst()
            ids.append(root)
        }
        return ids.compactMap { nodes[$0]?.line }
    }

    /// Drops `id` and everything below it.
    private mutating func remove(_ id: Int) {
        guard let node = nodes.removeValue(forKey: id) else { return }
        if let parentID = node.parentID, var parent = nodes[parentID] {
            parent.childIDs.remove(id)
            parent.keptFailureIDs.removeAll { $0 == id }
            nodes[parentID] = parent
        }
        var stack = Array(node.childIDs)
        while let child = stack.popLast() {
            if let removed = nodes.removeValue(forKey: child) { stack.append(contentsOf: removed.childIDs) }
        }
    }

    /// Marks `id` and everything below it kept.
    private mutating func setKept(_ id: Int) {
        var stack = [id]
        while let next = stack.popLast() {
            guard var node = nodes[next] else { continue }
            node.isKept = true
            nodes[next] = node
            stack.append(contentsOf: node.childIDs)
        }
    }
}
