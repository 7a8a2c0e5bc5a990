import ProgressTree

/// What a writer of the wire format writes at each walk of its tree: the rules for writers of
/// `Docs/WireFormat.md`, in one place for `ProgressPublisher` and `TerminalRenderer`'s json mode, which
/// differ only in how they read a node into a record (`read`) and what they do with the records.
///
/// A walk reads the named nodes (those that had a line) and their live children, down to `maximumDepth`,
/// and returns the records to write, in order, with their ids and parents set and without `time`. The
/// rules it keeps:
/// - Every node found is named: a live child below a named node, whatever either's state, among the
///   first `maximumNamedChildren` of that node's children; a failed child
///   that left its parent before a walk saw it, from the parent's `failedChildren`, and the nodes below it
///   that the child's failure left (`FailedChild.descendants`, their state `cancelled` unless final). The
///   one exception: below a root first read final nothing is named (its line is the stream's last).
/// - A node's first line comes before the lines of its children, final or not. Later, a line that is not
///   final comes before the lines of that node's children in the walk, a final one after them.
/// - No line equals the node's previous line (`time` is not in the comparison: records carry none here).
/// - A named node is read at every walk while it stays among its parent's children. One that left them
///   (finished or failed) gets its last line at the next walk, after those of its named descendants, and
///   is let go; so does each named descendant, whose state, if still running or paused, is written as its
///   nearest ended ancestor's outcome: `finished` below a finished node, `cancelled` below a cancelled or
///   failed one.
/// - The root's final line ends the stream: the first walk that finds the root final writes the last line
///   of every named node, then the root's line (read after theirs); no walk writes anything after it.
///
/// Invariants: every named node with an id is held (`entries[id].node`) until its last line was written
/// (a failed child named from `failedChildren`, and the nodes below it, get their one line at once and
/// are not held); ids are never reused; `ids` holds exactly the nodes of `entries`.
package struct WireTreeWalker {
    /// What a writer reads to make a record.
    package enum Source {
        /// A node of the tree, `depth` levels below the root.
        case node(ProgressNode, depth: Int)
        /// A node that left the tree before a walk named it: a failed child
        /// (`ProgressNode.FailedChild.record`) or a node below one (`DepartedDescendant.record`), its
        /// record as the failure left it, `depth` levels below the root.
        case departed(ProgressWireRecord, depth: Int)
    }

    private struct Entry {
        let node: ProgressNode
        let parentID: Int?
        let depth: Int
        /// The record of the last line written, `time` null; `nil` before the first.
        var lastRecord: ProgressWireRecord?
        /// The named children, in the order they were named.
        var childIDs: [Int] = []
        /// Where the next look at `failedChildren` starts.
        var failedChildrenCursor = 0
    }

    /// The deepest level named (0: the root only).
    package let maximumDepth: Int
    /// How many of a node's children are named at a time: the first ones among its `children`, in the
    /// order they were added. The others are named as those ahead of them leave (rule 4 of the format
    /// lets a child that finishes before then stay unnamed), so a walk of a wide node costs O(this), not
    /// O(children).
    package let maximumNamedChildren: Int
    /// Whether the stream has ended: the root's final line, or the ending walk, was written.
    package private(set) var hasEnded = false
    private var entries: [Int: Entry] = [:]
    private var ids: [ObjectIdentifier: Int] = [:]
    private var lastID = 1
    /// The records of the walk under way, in order; empty between walks.
    private var output: [ProgressWireRecord] = []

    /// How a walk reads a node into a record (`walk(ending:read:)`).
    private typealias Reader = (Source) -> ProgressWireRecord

    /// A walker of the tree below `root`, which will have id 1, naming at most `maximumNamedChildren` of
    /// a node's children at a time (at least 1).
    package init(root: ProgressNode, maximumDepth: Int, maximumNamedChildren: Int = .max) {
        self.maximumDepth = max(0, maximumDepth)
        self.maximumNamedChildren = max(1, maximumNamedChildren)
        entries[1] = Entry(node: root, parentID: nil, depth: 0)
        ids[ObjectIdentifier(root)] = 1
    }

    /// The named node with `id`, while the walker holds it.
    package func node(withID id: Int) -> ProgressNode? {
        entries[id]?.node
    }

    /// One walk: the records to write now, in order. A walk that finds the root final ends the stream
    /// with the root's final line; with `ending` (`ProgressPublisher.finish()`, `TerminalRenderer.stop()`),
    /// the stream ends with this walk whatever the root's state. After the stream ended, a walk returns
    /// nothing.
    package mutating func walk(
        ending: Bool, read: (Source) -> ProgressWireRecord
    ) -> [ProgressWireRecord] {
        guard !hasEnded else { return [] }
        defer { output = [] }
        // Read once: the root's state decides the walk, and a root found running is written as read.
        let root = record(of: entries[1]!, id: 1, read: read)
        if root.state.isFinal {
            writeLastLines(from: 1, inherited: nil, read: read)
            hasEnded = true
        } else {
            follow(root: root, read: read)
            hasEnded = ending
        }
        return output
    }

    // MARK: Walks

    /// The walk of a stream that goes on: reads every named node still among its parent's children, names
    /// new ones, and writes the last lines of those that left.
    private mutating func follow(root: ProgressWireRecord, read: Reader) {
        enum Step {
            case enter(Int)
            /// The node's final line, written after its children's.
            case exit(Int, ProgressWireRecord)
        }
        var stack: [Step] = [.enter(1)]
        while let step = stack.popLast() {
            switch step {
            case .exit(let id, let record):
                if var entry = entries[id] {
                    write(record, of: &entry)
                    entries[id] = entry
                }
            case .enter(let id):
                guard var entry = entries[id] else { continue }
                let record = id == 1 ? root : self.record(of: entry, id: id, read: read)
                let isFinal = record.state.isFinal
                // A first line comes before the children's, final or not (a node first seen cancelled).
                if entry.lastRecord == nil || !isFinal { write(record, of: &entry) }
                if isFinal { stack.append(.exit(id, record)) }
                guard entry.depth < maximumDepth else {
                    entries[id] = entry
                    continue
                }
                // Listed before `failedChildren` is read: a child that failed since is in one or both.
                // The named children stay among the first ones until they leave (children are added last).
                let liveIDs = entry.node.children(first: maximumNamedChildren).children.map { child in
                    ids[ObjectIdentifier(child)] ?? name(child, parentID: id, depth: entry.depth + 1)
                }
                nameFailedChildren(of: &entry, id: id, read: read)
                let live = Set(liveIDs)
                let left = entry.childIDs.filter { !live.contains($0) }
                entry.childIDs = liveIDs
                entries[id] = entry
                for child in left { writeLastLines(from: child, inherited: nil, read: read) }
                for child in liveIDs.reversed() { stack.append(.enter(child)) }
            }
        }
    }

    /// Writes the last lines of the named subtree at `top` (its descendants' first, then its own) and lets
    /// go of it, naming on the way the children no walk named yet (each with its first line at once). A
    /// node still running or paused is written as `inherited`, or as the outcome of its nearest ended
    /// ancestor in the subtree.
    private mutating func writeLastLines(from top: Int, inherited: ProgressWireRecord.State?, read: Reader) {
        var stack: [(id: Int, inherited: ProgressWireRecord.State?, isExit: Bool)] = [(top, inherited, false)]
        while let (id, inherited, isExit) = stack.popLast() {
            guard var entry = entries[id] else { continue }
            if isExit {
                write(record(of: entry, id: id, inherited: inherited, read: read), of: &entry)
                entries[id] = nil
                ids[ObjectIdentifier(entry.node)] = nil
                continue
            }
            // A node named in this pass gets its first line before its children's. A root without a line
            // (first read final) names nothing: its line is the stream's last.
            if entry.lastRecord == nil, id != 1 {
                write(record(of: entry, id: id, inherited: inherited, read: read), of: &entry)
            }
            if entry.depth < maximumDepth, entry.lastRecord != nil {
                for child in entry.node.children(first: maximumNamedChildren).children
                where ids[ObjectIdentifier(child)] == nil {
                    entry.childIDs.append(name(child, parentID: id, depth: entry.depth + 1))
                }
                nameFailedChildren(of: &entry, id: id, read: read)
            }
            entries[id] = entry
            // Below a failed or cancelled node what still runs was cancelled; below a finished one, finished.
            let node = entry.node
            let below = node.isFailed || node.isCancelled ? .cancelled : node.isFinished ? .finished : inherited
            stack.append((id, inherited, true))
            for child in entry.childIDs.reversed() { stack.append((child, below, false)) }
        }
    }

    /// Reads `failedChildren` of the node `id` from where the last look stopped, and names each one no
    /// walk named (a named one gets its last line from its parent's walk) with the nodes below it, down to
    /// `maximumDepth`: the first line of each is its last.
    private mutating func nameFailedChildren(of entry: inout Entry, id: Int, read: Reader) {
        let (children, next) = entry.node.failedChildren(since: entry.failedChildrenCursor)
        entry.failedChildrenCursor = next
        for child in children {
            // Alive and named: held by this walker. Released: it was never named (a named node is held).
            if let node = child.node, ids[ObjectIdentifier(node)] != nil { continue }
            let childID = writeDeparted(child.record, parentID: id, depth: entry.depth + 1, read: read)
            var descendantIDs: [Int] = []
            for descendant in child.descendants(at: entry.depth + 1, downTo: maximumDepth) {
                let parentID = descendant.parentIndex < 0 ? childID : descendantIDs[descendant.parentIndex]
                descendantIDs.append(
                    writeDeparted(descendant.record, parentID: parentID, depth: descendant.depth, read: read))
            }
        }
    }

    /// Names a node that already left the tree with its one line; returns its id.
    private mutating func writeDeparted(
        _ departed: ProgressWireRecord, parentID: Int, depth: Int, read: Reader
    ) -> Int {
        lastID += 1
        var record = read(.departed(departed, depth: depth))
        record.id = lastID
        record.parentID = parentID
        record.time = nil
        output.append(record)
        return lastID
    }

    /// Gives `node` an id and holds it: named, its first line to be written in this walk.
    private mutating func name(_ node: ProgressNode, parentID: Int, depth: Int) -> Int {
        lastID += 1
        ids[ObjectIdentifier(node)] = lastID
        entries[lastID] = Entry(node: node, parentID: parentID, depth: depth)
        return lastID
    }

    // MARK: Lines

    /// The node's record, read now, with its ids, no time, and no share of a parent for the root; with
    /// `inherited` as its state if it is still running or paused.
    private func record(
        of entry: Entry, id: Int, inherited: ProgressWireRecord.State? = nil, read: Reader
    ) -> ProgressWireRecord {
        var record = read(.node(entry.node, depth: entry.depth))
        record.id = id
        record.parentID = entry.parentID
        record.time = nil
        if entry.parentID == nil { record.pendingUnitCount = 0 }
        if !record.state.isFinal, let inherited {
            record.state = inherited
            if inherited == .finished { record.isIndeterminate = false }
        }
        return record
    }

    /// Appends `record` unless it equals the node's last line.
    private mutating func write(_ record: ProgressWireRecord, of entry: inout Entry) {
        if let last = entry.lastRecord, last.writesSameLine(as: record) { return }
        entry.lastRecord = record
        output.append(record)
    }
}
