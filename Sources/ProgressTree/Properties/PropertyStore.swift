import Synchronization

// Where a node keeps its custom properties (ProgressProperty.swift), and the type-erased operations that let
// a finishing child hand its parent the summaries of properties that neither knows by type.
//
// Storage: a node's entries live in its `MetadataExtras` (`properties`), so a node that never sets a property
// and never receives what a child left pays nothing: no field in the node, none in `NodeExtras`. Entries are
// guarded by the node's lock. An entry holds the node's own value (if it set one) and the merged summaries its
// children left behind (if any left something).
//
// Invariants:
// - Counted once. Under a node's lock, a child is either attached (in its table, not listed as finished) or
//   folded into the node's entries, never both nor neither: a finished child's fold is merged in the critical
//   section that removes it from the table (or lists it as finished, when it is held), a failed child's in
//   the critical section that removes it (ProgressNode+Finishing.swift, ProgressNode+Failure.swift), exactly
//   as its files are folded (Summaries/FileSums.swift).
// - Gate. `PropertyGate.anySet` is set once, before the first value is stored anywhere in the process. Until
//   then no finish and no failure walks for properties. A finish decides in the critical section that
//   detaches the child, behind the file fold's gate (the child has extras or children), whether the child
//   may leave something (`propertyLeaving(of:)`: two bits of a byte the `Detachment` has anyway), so the common finish
//   (a leaf without extras) pays nothing for properties.
// - No user code under a lock. The fold is computed after the detach, outside every lock (`reduce`, `merge`,
//   `summaryLeftBehind` run there), by a walk of the child's subtree, one node lock at a time; the parent's
//   critical section only appends the result to its entries, and `compactPropertiesLeftBehind` merges them
//   after it. A value set in the subtree between the detach and the fold counts as set before the detach
//   (the fold is what readers of the parent see, at once).

/// The process-wide gate of property folds (see the top of this file).
enum PropertyGate {
    private static let storage = Atomic<Bool>(false)

    /// Whether a property value was ever set in this process. One load.
    @inline(__always)
    static var anySet: Bool { storage.load(ordering: .acquiring) }

    /// Called before a value is stored.
    static func noteSet() {
        if !storage.load(ordering: .relaxed) { storage.store(true, ordering: .releasing) }
    }
}

/// How a finishing node leaves its parent's properties, as bits of a byte it shares with other facts of the
/// detach (bit 0 is theirs): nothing, or its subtree's summaries by the outcome `.finished` or `.cancelled`.
enum PropertyLeaving {
    static let finished: UInt8 = 1 << 1
    static let cancelled: UInt8 = 1 << 2

    /// The outcome `bits` name, `nil` for none.
    @inline(__always)
    static func outcome(_ bits: UInt8) -> ProgressPropertyOutcome? {
        bits & finished != 0 ? .finished : bits & cancelled != 0 ? .cancelled : nil
    }
}

/// One property in one node: its value, if the node set one, and what children that left it left behind.
/// `@usableFromInline` for a property's typed step (PropertyPathStep.swift), which reads `value` and
/// `leftBehind`.
@usableFromInline
struct PropertyEntry: Sendable {
    let operations: any PropertyOperations.Type
    /// The node's value (a `Property.Value`), `nil` when it set none.
    @usableFromInline var value: (any Sendable)?
    /// What the children that left it left behind (`Property.Summary` values), not merged yet: merging is
    /// user code, which never runs under a lock of the tree, so a fold appends under the parent's lock and
    /// `compactPropertiesLeftBehind` merges outside it. Usually one summary (none for a node that only set a
    /// value).
    @usableFromInline var leftBehind: [any Sendable] = []
    /// How many times `leftBehind` was compacted: a compaction replaces the prefix it merged only if no other
    /// compaction ran meanwhile (folds only append, so the prefix is then the one it read).
    var compactions: UInt32 = 0
}

/// A node's properties, by the `ObjectIdentifier` of the property type: a few entries in an array, in the
/// order they were first stored, found by a scan. A node holds one or two properties, and a value set finds
/// its entry at every call: a scan of one key costs a compare, a hashed look-up about 200 instructions.
/// A key is in it at most once.
struct PropertyEntries: Sequence, ExpressibleByDictionaryLiteral {
    /// The keys apart from the entries, so that the scan reads one contiguous word per entry: an array of
    /// (key, entry) pairs, one allocation instead of two, cost a value set about 250 instructions more
    /// (callgrind, 20b). `keys[i]` names `entries[i]`; both always have the same count.
    private var keys: [ObjectIdentifier] = []
    private var entries: [PropertyEntry] = []

    init() {}

    init(dictionaryLiteral elements: (ObjectIdentifier, PropertyEntry)...) {
        for (key, entry) in elements { self[key] = entry }
    }

    var isEmpty: Bool { keys.isEmpty }

    /// The position of the entry of `key`, `nil` when it has none.
    @inline(__always)
    func index(forKey key: ObjectIdentifier) -> Int? {
        keys.withUnsafeBufferPointer { keys in
            for index in keys.indices where keys[index] == key { return index }
            return nil
        }
    }

    /// The entry at `position` (from `index(forKey:)`), in place.
    subscript(position position: Int) -> PropertyEntry {
        get { entries[position] }
        _modify { yield &entries[position] }
    }

    /// The entry of `key`; setting `nil` removes it.
    subscript(key: ObjectIdentifier) -> PropertyEntry? {
        get { index(forKey: key).map { entries[$0] } }
        set {
            switch (index(forKey: key), newValue) {
            case (let index?, let entry?): entries[index] = entry
            case (let index?, nil):
                keys.remove(at: index)
                entries.remove(at: index)
            case (nil, let entry?):
                keys.append(key)
                entries.append(entry)
            case (nil, nil): break
            }
        }
    }

    func makeIterator() -> Zip2Sequence<[ObjectIdentifier], [PropertyEntry]>.Iterator {
        zip(keys, entries).makeIterator()
    }
}

/// A property's functions, reached without its type (a finishing child may hold properties nobody names).
protocol PropertyOperations: Sendable {
    /// A node's summary: its value (or the default) reduced into the default summary, merged with what its
    /// children left behind and with `below`, the summary of its attached children (`nil`: none).
    static func nodeSummary(_ entry: PropertyEntry?, below: (any Sendable)?) -> any Sendable
    static func merge(_ a: any Sendable, _ b: any Sendable) -> any Sendable
    static func leftBehind(_ summary: any Sendable, by outcome: ProgressPropertyOutcome) -> (any Sendable)?
    /// An empty total of this property over a kept summary's members (Summaries/PropertyTotal.swift).
    static func makeTypedTotal() -> PropertyTotalStorage
}

/// `PropertyOperations` of `Property`.
enum PropertyOperationsOf<Property: ProgressProperty>: PropertyOperations {
    static func nodeSummary(_ entry: PropertyEntry?, below: (any Sendable)?) -> any Sendable {
        typedSummary(entry, below: below.map { $0 as! Property.Summary })
    }

    /// The typed form of `nodeSummary`: own value, then what left, then the attached children.
    static func typedSummary(_ entry: PropertyEntry?, below: Property.Summary?) -> Property.Summary {
        var summary = Property.defaultSummary
        Property.reduce(into: &summary, value: (entry?.value).map { $0 as! Property.Value } ?? Property.defaultValue)
        for left in entry?.leftBehind ?? [] { summary = Property.merge(summary, left as! Property.Summary) }
        if let below { summary = Property.merge(summary, below) }
        return summary
    }

    static func merge(_ a: any Sendable, _ b: any Sendable) -> any Sendable {
        Property.merge(a as! Property.Summary, b as! Property.Summary)
    }

    static func leftBehind(_ summary: any Sendable, by outcome: ProgressPropertyOutcome) -> (any Sendable)? {
        Property.summaryLeftBehind(summary as! Property.Summary, by: outcome)
    }

    static func makeTypedTotal() -> PropertyTotalStorage { PropertyTotalOf<Property>() }
}

extension NodeState {
    /// This node's property entries, `nil` when it has none; without allocating anything.
    var propertyEntries: PropertyEntries? {
        guard hasExtras, let entries = metadata.extras?.properties, !entries.isEmpty else { return nil }
        return entries
    }

    /// Adds what a child that left this node leaves behind (`ProgressNode.propertiesLeftBehind(by:)`) to this
    /// node's entries, unmerged (no user code under the lock). Under this node's lock, in the critical section
    /// that removes the child (or lists it as finished); `ProgressNode.compactPropertiesLeftBehind(_:)` merges
    /// them after it.
    /// `node` is the node whose state this is: its `hasProperties` is set with the entries.
    @inline(__always)
    mutating func foldPropertiesLeftBehind(_ left: PropertyEntries?, into node: ProgressNode) {
        if let left {
            foldPropertiesLeftBehind(left)
            if node.flags.load(ordering: .relaxed) & NodeFlags.hasProperties == 0 {
                node.flags.bitwiseOr(NodeFlags.hasProperties, ordering: .sequentiallyConsistent)
            }
        }
    }

    @inline(never)  // off the finish's common path
    private mutating func foldPropertiesLeftBehind(_ left: PropertyEntries) {
        let extras = metadata.extrasForWriting()
        for (key, entry) in left {
            if extras.properties[key] != nil {
                extras.properties[key]!.leftBehind.append(contentsOf: entry.leftBehind)
            } else {
                extras.properties[key] = PropertyEntry(operations: entry.operations, leftBehind: entry.leftBehind)
            }
        }
    }
}

extension ProgressNode {
    /// Whether this node may leave something in its parent's properties as it leaves, and how it ended, as
    /// `PropertyLeaving` bits (0: nothing): a property was set somewhere in the process, and the node has
    /// entries or attached children (which may). The caller holds this node's lock (`state` is its state) in
    /// the critical section that detaches it, and calls this only for a node with extras or children (the
    /// file fold's gate).
    func propertyLeaving(of state: borrowing NodeState) -> UInt8 {
        guard PropertyGate.anySet, !state.hasNoChildren || state.propertyEntries != nil else { return 0 }
        return currentControlFlags.contains(.cancelled) ? PropertyLeaving.cancelled : PropertyLeaving.finished
    }

    /// The entries (each with its `leftBehind` only) that this node, leaving its parent with `outcome`,
    /// hands the parent, or `nil` when it hands nothing: each property found in its attached subtree,
    /// summarized, through the property's rule. Called outside every lock; a walk of the subtree (one node
    /// lock at a time).
    @inline(never)  // off the finish's common path, which never calls it
    func propertiesLeftBehind(by outcome: ProgressPropertyOutcome) -> PropertyEntries? {
        var left = PropertyEntries()
        for (key, (operations, summary)) in allPropertySummaries() {
            if let kept = operations.leftBehind(summary, by: outcome) {
                left[key] = PropertyEntry(operations: operations, leftBehind: [kept])
            }
        }
        return left.isEmpty ? nil : left
    }

    /// Merges, outside every lock, the summaries that folds (`foldPropertiesLeftBehind`) appended to this
    /// node's entries of `left`'s properties, so that they stay one summary each whatever the number of
    /// children that left. Each entry: its summaries read under this node's lock, merged outside it, and put
    /// back in place of those it read, under the lock again, unless another compaction ran meanwhile (which
    /// then merged them). Readers see the same summaries, merged or not, all along.
    func compactPropertiesLeftBehind(_ left: PropertyEntries?) {
        guard let left else { return }
        for (key, _) in left {
            let taken = state.withLock { state -> (PropertyEntry)? in
                guard let entry = state.propertyEntries?[key], entry.leftBehind.count > 1 else { return nil }
                return entry
            }
            guard let taken else { continue }
            let summaries = taken.leftBehind
            let merged = summaries.dropFirst().reduce(summaries[0]) { taken.operations.merge($0, $1) }
            state.withLock { state in
                guard let extras = state.metadata.extras, var entry = extras.properties[key],
                    entry.compactions == taken.compactions, entry.leftBehind.count >= summaries.count
                else { return }
                extras.properties[key] = nil  // the entry uniquely referenced while it changes
                entry.leftBehind.replaceSubrange(0..<summaries.count, with: [merged])
                entry.compactions &+= 1
                extras.properties[key] = entry
            }
        }
    }

    /// What this node, failing out of its parent, hands the parent's properties (see `propertiesLeftBehind`).
    /// Outside every lock; a walk of its subtree only once a property was set somewhere in the process.
    func propertiesLeftBehindByFailure() -> PropertyEntries? {
        guard PropertyGate.anySet else { return nil }
        return propertiesLeftBehind(by: .failed)
    }

    /// The summary of every property that has an entry in this node's attached subtree, computed afresh by a
    /// walk (`propertyWalk`).
    private func allPropertySummaries() -> [ObjectIdentifier: (any PropertyOperations.Type, any Sendable)] {
        let visited = propertyWalk()
        var operations: [ObjectIdentifier: any PropertyOperations.Type] = [:]
        for node in visited {
            for (key, entry) in node.entries ?? [:] where operations[key] == nil { operations[key] = entry.operations }
        }
        var summaries: [ObjectIdentifier: (any PropertyOperations.Type, any Sendable)] = [:]
        for (key, ops) in operations {
            let summary = Self.summarize(visited, merge: ops.merge) { entries, below in
                ops.nodeSummary(entries?[key], below: below)
            }
            summaries[key] = (ops, summary)
        }
        return summaries
    }

    /// Summarizes a walk's nodes bottom-up: `summary(entries, below)` gives a node's summary from its
    /// entries and the merged summaries of its attached children (`nil`: none), which `merge` combines.
    static func summarize<Summary>(
        _ visited: [PropertyWalkNode], merge: (Summary, Summary) -> Summary,
        summary: (PropertyEntries?, Summary?) -> Summary
    ) -> Summary {
        // Preorder: each node comes after its parent, so one backward pass finishes every child first.
        var below = [Summary?](repeating: nil, count: visited.count)
        for index in visited.indices.reversed() {
            let node = visited[index]
            let own = summary(node.entries, below[index])
            guard node.parent >= 0 else { return own }
            below[node.parent] = below[node.parent].map { merge($0, own) } ?? own
        }
        preconditionFailure("a walk visits its root")
    }

    /// The nodes of this node's attached subtree in preorder, each with its property entries (a copy of the
    /// dictionary, as they were under its lock) and the index of its parent (-1 for this node): one node lock
    /// at a time, with an explicit stack (a 10,000-deep chain needs no deep stack). Children that finished
    /// and are only held (ProgressNode+HeldChildren.swift) are skipped: what they left is in their parent's
    /// entries, folded in the critical section that listed them as finished.
    func propertyWalk() -> [PropertyWalkNode] {
        var visited: [PropertyWalkNode] = []
        var stack: [(node: ProgressNode, parent: Int)] = [(self, -1)]
        while let (node, parent) = stack.popLast() {
            let (entries, children) = node.state.withLock { state -> (PropertyEntries?, [ProgressNode]) in
                node.settleFreshChildren(&state)
                let children = state.hasNoChildren ? [] : state.children.unfinishedEntries.map(\.node)
                return (state.propertyEntries, children)
            }
            let index = visited.count
            visited.append(PropertyWalkNode(entries: entries, parent: parent))
            for child in children.reversed() { stack.append((child, index)) }
        }
        return visited
    }
}

/// A node a property walk visited: its entries, and the index of its parent in the walk.
struct PropertyWalkNode {
    let entries: PropertyEntries?
    let parent: Int
}
