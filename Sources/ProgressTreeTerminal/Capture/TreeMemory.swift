import ProgressTree

/// The renderer's memory of the tree between frames: stable ids, the order lines appeared in, and the
/// last state of nodes that finished.
///
/// A finished child is detached from its parent (and released by it), so it vanishes from a walk of the
/// live tree. The mirror notices, keeps the child's last line in place as a finished line (its subtree
/// collapsed), and forgets all but the most recent `keptFinishedChildren` finished children of each parent
/// (failed ones are forgotten last), so memory stays bounded however many children come and go.
struct TreeMemory {
    /// One line of a frame, in tree order.
    struct Row: Equatable {
        let id: Int
        let parentID: Int?
        var content: LineContent
    }

    private struct Record {
        var node: ProgressNode?  // nil once finished: the mirror keeps only its last line
        var parentID: Int?
        var content: LineContent?
        var childIDs: [Int] = []
        /// Where the next look at the node's `failedChildren` starts (`reportsDepartedFailures`).
        var failedChildrenCursor = 0
    }

    private var records: [Int: Record] = [:]
    private var ids: [ObjectIdentifier: Int] = [:]
    private var lastID = 0
    private let rootID: Int
    let keptFinishedChildren: Int

    init(root: ProgressNode, keptFinishedChildren: Int) {
        self.keptFinishedChildren = max(0, keptFinishedChildren)
        lastID = 1
        rootID = 1
        records[1] = Record(node: root, parentID: nil)
        ids[ObjectIdentifier(root)] = 1
    }

    /// What one walk captured: the rows to show, how many lines are hidden, and the root's line.
    struct Capture {
        var rows: [Row]
        /// Lines not shown: counted, not read (or given way after reading).
        var hidden: Int
        /// The root's line as read, also when it gave way to the "+N more" line (a one-row frame): the
        /// summary and the taskbar progress follow the root.
        var root: LineContent?
    }

    /// Walks the live tree (iteratively) and returns this frame's rows, depth first, children in the
    /// order they first appeared. `read` captures one node's line from the node, its depth and the index
    /// of its row in the walk.
    ///
    /// Which lines give way when the tree is taller than `rowLimit` is decided here, and only here:
    /// - At most `rowLimit` rows are returned; the others are only counted (`hidden`), not read: a frame
    ///   costs O(visible lines) reads, however large the tree. The walk reads up to `rowLimit` nodes,
    ///   keeping the finished lines it meets on the way (they cost no read), and past the limit still
    ///   takes the failed lines kept below the rows it shows (a failure and its reason come before
    ///   running lines); then lines give way until the rows fit (`nextGivingWay`): finished and cancelled
    ///   ones first, oldest first, then running ones from the bottom, then failed ones, oldest first. The
    ///   root's line and lines with rows of their own below them stay.
    /// - With `reservesMoreLine` (live frames), when lines are hidden one more row gives way to the
    ///   "+N more" line that says so, chosen the same way.
    ///
    /// Nodes deeper than `depthLimit` are neither read nor counted.
    ///
    /// Of a node's children, only the first `childLimit` (`ProgressNode.children(first:)`, in the order
    /// they were added) are read or walked; the others are counted as one line each (live frames' "+N
    /// more"), without the lines below them. So a frame's cost does not grow with a node's width: the
    /// children read are those ahead, which stay ahead until they leave.
    ///
    /// With `reportsCollapsedChildren`, a node found finished is followed by final rows for its known
    /// children (down to `depthLimit`) before its subtree collapses: logs need a last line for children
    /// that finished in the same frame as their parent, which the next frame no longer walks.
    ///
    /// With `reportsDepartedFailures`, a node whose children are walked is followed by one row for each
    /// child that failed and left it since the last frame without being seen (from its `failedChildren`,
    /// down to `depthLimit`), and rows for the nodes below that child as its failure left them (cancelled):
    /// logs name every failure. These rows appear once, with ids of their own, and are not kept.
    mutating func update(
        rowLimit: Int = .max, depthLimit: Int = .max, childLimit: Int = .max, reportsCollapsedChildren: Bool = false,
        reportsDepartedFailures: Bool = false, reservesMoreLine: Bool = false,
        read: (ProgressNode, _ depth: Int, _ row: Int) -> LineContent
    ) -> Capture {
        var capture = walk(
            rowLimit: rowLimit, depthLimit: depthLimit, childLimit: max(1, childLimit),
            reportsCollapsedChildren: reportsCollapsedChildren, reportsDepartedFailures: reportsDepartedFailures,
            read: read)
        if reservesMoreLine, capture.hidden > 0, let index = Self.nextGivingWay(capture.rows) {
            capture.rows.remove(at: index)
            capture.hidden += 1
        }
        return capture
    }

    private mutating func walk(
        rowLimit: Int, depthLimit: Int, childLimit: Int, reportsCollapsedChildren: Bool, reportsDepartedFailures: Bool,
        read: (ProgressNode, _ depth: Int, _ row: Int) -> LineContent
    ) -> Capture {
        var rows: [Row] = []
        var hidden = 0
        var keptLines = 0  // rows of children that finished in an earlier frame: no read, may give way
        var stack: [(id: Int, depth: Int)] = [(rootID, 0)]
        while let (id, depth) = stack.popLast() {
            guard records[id] != nil else { continue }
            if rows.count - keptLines >= rowLimit {
                // A failed line kept after its node left costs no read: it stays in sight, and running
                // lines give way to it below.
                if let record = records[id], record.node == nil, let content = record.content, content.status == .failed
                {
                    keptLines += 1
                    rows.append(Row(id: id, parentID: record.parentID, content: content))
                } else {
                    hidden += countLines(from: id, depth: depth, depthLimit: depthLimit, childLimit: childLimit)
                }
                continue
            }
            var collapsed: [Row] = []
            var departed: [Row] = []
            if let node = records[id]!.node {
                let content = read(node, depth, rows.count)
                records[id]!.content = content
                if content.status == .finished {
                    if reportsCollapsedChildren {
                        collapsed = finalRows(below: id, depth: depth, depthLimit: depthLimit, read: read)
                    }
                    forgetDescendants(of: id)  // a finished subtree collapses to one line
                } else if depth < depthLimit {
                    let known = records[id]!.childIDs
                    // Listed before `failedChildren` is read: a child that failed since is in one or both.
                    let (live, liveCount) = node.children(first: childLimit)
                    hidden += liveCount - live.count  // past the first ones: counted, not read
                    records[id]!.content!.hasChildren = liveCount > 0
                    if reportsDepartedFailures {
                        departed = departedFailureRows(
                            of: id, node: node, listed: live, depth: depth, depthLimit: depthLimit, read: read)
                    }
                    let (order, forgotten) = reconcileChildren(
                        of: id, known: known, live: live, depth: depth, read: read)
                    records[id]!.childIDs = order
                    // Logs: a child that finished in this frame has its final row, even when it is forgotten
                    // at once (more children finished than are kept).
                    if reportsCollapsedChildren { departed.insert(contentsOf: forgotten, at: 0) }
                }
            } else {
                keptLines += 1
            }
            guard let content = records[id]!.content else { continue }
            rows.append(Row(id: id, parentID: records[id]!.parentID, content: content))
            rows.append(contentsOf: collapsed)
            rows.append(contentsOf: departed)
            if depth < depthLimit {
                for childID in records[id]!.childIDs.reversed() { stack.append((childID, depth + 1)) }
            }
        }
        let root = rows.first?.content
        // Lines kept without a read put the rows over the limit: lines give way as `update` describes.
        while rows.count > rowLimit, let index = Self.nextGivingWay(rows) {
            rows.remove(at: index)
            hidden += 1
        }
        return Capture(rows: rows, hidden: hidden, root: root)
    }

    /// The row that gives way next when the rows do not fit: of the rows without rows of their own below
    /// them (never the root's), the oldest finished or cancelled one, else the bottom running or paused
    /// one, else the oldest failed one: a failure and its reason stay in sight longest.
    static func nextGivingWay(_ rows: [Row]) -> Int? {
        let leaves = rows.indices.dropFirst().filter { index in
            index + 1 == rows.count || rows[index + 1].content.depth <= rows[index].content.depth
        }
        let status = { (index: Int) in rows[index].content.status }
        return leaves.first { [.finished, .cancelled].contains(status($0)) }
            ?? leaves.last { [.running, .paused].contains(status($0)) }
            ?? leaves.first
    }

    /// The last rows of the known descendants of `id`, depth first, down to `depthLimit`: live ones read
    /// once more and shown finished (their parent finished, so they did), finished lines as they were.
    private func finalRows(
        below id: Int, depth: Int, depthLimit: Int, read: (ProgressNode, _ depth: Int, _ row: Int) -> LineContent
    ) -> [Row] {
        var rows: [Row] = []
        var stack: [(id: Int, depth: Int)] = (records[id]?.childIDs ?? []).reversed().map { ($0, depth + 1) }
        while let (childID, childDepth) = stack.popLast() {
            guard childDepth <= depthLimit, let record = records[childID] else { continue }
            var content = record.content
            if let node = record.node {
                content = Self.finalContent(read(node, childDepth, 0))
            }
            guard let content else { continue }
            rows.append(Row(id: childID, parentID: record.parentID, content: content))
            stack.append(contentsOf: record.childIDs.reversed().map { ($0, childDepth + 1) })
        }
        return rows
    }

    /// Rows for the children of `node` that failed and left it since the last look, unseen: neither known
    /// (a known one that left gets its final line from `reconcileChildren`) nor in `listed`. Each is
    /// followed by the nodes below it as its failure left them, down to `depthLimit` (cancelled, or
    /// failed before it). Must run before `reconcileChildren`, which forgets the ids of known children
    /// that left.
    private mutating func departedFailureRows(
        of id: Int, node: ProgressNode, listed: [ProgressNode], depth: Int, depthLimit: Int,
        read: (ProgressNode, _ depth: Int, _ row: Int) -> LineContent
    ) -> [Row] {
        let (children, next) = node.failedChildren(since: records[id]!.failedChildrenCursor)
        records[id]!.failedChildrenCursor = next
        guard !children.isEmpty else { return [] }
        let listedIDs = Set(listed.map(ObjectIdentifier.init))
        var rows: [Row] = []
        for child in children {
            if let alive = child.node,
                ids[ObjectIdentifier(alive)] != nil || listedIDs.contains(ObjectIdentifier(alive))
            {
                continue
            }
            lastID += 1
            let childID = lastID
            // Read as a seen failure is while the node is still alive; else as it left.
            let content =
                child.node.map { read($0, depth + 1, 0) }
                ?? NodeReader.content(departed: child.record, depth: depth + 1)
            rows.append(Row(id: childID, parentID: id, content: content))
            var descendantIDs: [Int] = []
            for descendant in child.descendants(at: depth + 1, downTo: depthLimit) {
                lastID += 1
                let parentID = descendant.parentIndex < 0 ? childID : descendantIDs[descendant.parentIndex]
                rows.append(
                    Row(
                        id: lastID, parentID: parentID,
                        content: NodeReader.content(departed: descendant.record, depth: descendant.depth)))
                descendantIDs.append(lastID)
            }
        }
        return rows
    }

    /// The line a node leaves once finished: finished unless it was cancelled or failed (which keep what
    /// they showed, indeterminate counts included: never "0 of -1").
    private static func finalContent(_ content: LineContent) -> LineContent {
        var content = content
        if content.status == .running || content.status == .paused {
            content.status = .finished
            content.isIndeterminate = false
        }
        return content
    }

    /// The lines below and including `id`, counted without reading any node: the mirror's finished lines
    /// and the live nodes' current children (each node's first `childLimit` with the lines below them, the
    /// others one line each).
    private func countLines(from id: Int, depth: Int, depthLimit: Int, childLimit: Int) -> Int {
        guard let record = records[id] else { return 0 }
        guard let node = record.node else { return 1 }
        var count = record.childIDs.filter { records[$0]?.node == nil }.count  // its finished lines
        var live: [(ProgressNode, Int)] = [(node, depth)]
        while let (node, nodeDepth) = live.popLast() {
            count += 1
            guard nodeDepth < depthLimit else { continue }
            let (first, total) = node.children(first: childLimit)
            count += total - first.count
            live.append(contentsOf: first.map { ($0, nodeDepth + 1) })
        }
        return count
    }

    /// Matches the node's live children against the known ones: known ones keep their place, vanished ones
    /// become finished lines, new ones are appended. Returns the new order, and the final rows of the
    /// children that vanished in this frame and were forgotten at once (beyond `keptFinishedChildren`).
    private mutating func reconcileChildren(
        of parentID: Int, known: [Int], live: [ProgressNode], depth: Int,
        read: (ProgressNode, _ depth: Int, _ row: Int) -> LineContent
    ) -> (order: [Int], forgotten: [Row]) {
        var vanished = Set<Int>()
        var liveIDs = Set<Int>()
        var order: [Int] = []
        for child in live {
            let key = ObjectIdentifier(child)
            let id: Int
            if let known = ids[key] {
                id = known
            } else {
                lastID += 1
                id = lastID
                ids[key] = id
                records[id] = Record(node: child, parentID: parentID)
            }
            liveIDs.insert(id)
        }
        var finishedKept: [Int] = []
        for id in known {
            if liveIDs.contains(id) {
                order.append(id)
            } else if var child = records[id] {
                if let node = child.node {
                    // Vanished since the last frame: it finished. Keep its final line, without a spinner.
                    ids[ObjectIdentifier(node)] = nil
                    child.node = nil
                    child.content = Self.finalContent(read(node, depth + 1, 0))  // with details
                    records[id] = child
                    vanished.insert(id)
                    forgetDescendants(of: id)
                }
                order.append(id)
                finishedKept.append(id)
            }
        }
        // Forget the oldest finished children beyond the limit. Failed lines (a reason to read) go last:
        // finished and cancelled ones give way first, oldest first.
        let excess = finishedKept.count - keptFinishedChildren
        var forgottenRows: [Row] = []
        if excess > 0 {
            let failed = Set(finishedKept.filter { records[$0]?.content?.status == .failed })
            let forgotten = Set(
                (finishedKept.filter { !failed.contains($0) } + finishedKept.filter { failed.contains($0) })
                    .prefix(excess))
            for id in finishedKept where forgotten.contains(id) && vanished.contains(id) {
                if let content = records[id]?.content {
                    forgottenRows.append(Row(id: id, parentID: parentID, content: content))
                }
            }
            for id in forgotten { records[id] = nil }
            order.removeAll { forgotten.contains($0) }
        }
        let knownIDs = Set(known)
        for child in live {
            let id = ids[ObjectIdentifier(child)]!
            if !knownIDs.contains(id) { order.append(id) }
        }
        return (order, forgottenRows)
    }

    /// Forgets everything below `id` (its subtree collapsed or is gone).
    private mutating func forgetDescendants(of id: Int) {
        guard var stack = records[id]?.childIDs, !stack.isEmpty else { return }
        records[id]!.childIDs = []
        while let id = stack.popLast() {
            guard let removed = records.removeValue(forKey: id) else { continue }
            if let node = removed.node { ids[ObjectIdentifier(node)] = nil }
            stack.append(contentsOf: removed.childIDs)
        }
    }
}
