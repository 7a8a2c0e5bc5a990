#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ProgressTree

/// A mount's map from the stream's node ids to the mirrored nodes, owned by the mount's reading thread
/// (never shared, so never locked).
///
/// Invariants:
/// - A node's parent is fixed by its first line and must be known then; so the mirrored nodes always form
///   a tree below the mount's node (a line that would move a node, and so could make a cycle, is refused).
/// - The mirrored root is the mount's node, taken by the first line without a parent; a second root is
///   refused.
/// - A mirrored node's completed count is the stream's (the last line of that node), except for the
///   moment a mirrored child finishes into it; a final mirrored node (finished, cancelled, failed) takes
///   no more lines.
/// - At most `maximumNodeCount` nodes are mirrored at once; nodes that ended are forgotten, and the ids
///   of the last `endedMemory` of them (and of nodes below them) kept, so that a line naming a node below
///   one is dropped as the rest of an ended subtree (a writer names the nodes a failure cancelled after
///   the failed node's line), not counted as bad input.
struct MountedNodeMap {
    /// A mirrored node (a reference: a line's lookup neither copies its last record nor retains its
    /// strings). Unchecked: like the tree that holds it, only the mount's reading thread touches it.
    final class Entry: @unchecked Sendable {
        let node: ProgressNode
        let parentID: Int?
        /// The pending count the node was attached with (a finished node's line may say 0: it left).
        let pending: Int64
        var last: ProgressWireRecord?

        init(node: ProgressNode, parentID: Int?, pending: Int64 = 0) {
            self.node = node
            self.parentID = parentID
            self.pending = pending
        }
    }

    /// How many ids of ended nodes are kept.
    static let endedMemory = 4096

    private(set) var rootID: Int?
    private var entries: [Int: Entry] = [:]
    private let root: ProgressNode
    /// The ids of the last `endedMemory` nodes forgotten because they ended, or dropped below one.
    private var ended = Set<Int>()
    /// `ended` in the order remembered, the oldest replaced first (at `endedNext`).
    private var endedOrder: [Int] = []
    private var endedNext = 0

    /// The mount's name, shown before the description of the stream's root.
    private let name: String
    /// The properties the mount sets on mirrored nodes (`ProgressMount.Options.properties`), by wire name.
    private let properties: [String: MountedProperty]
    /// While a snapshot of the tree is read over HTTP (between a connection's start and its `synced`
    /// event), the ids of the mirrored nodes it named; `nil` otherwise. At most the mirrored nodes.
    private var snapshotNames: Set<Int>?

    init(root: ProgressNode, name: String, properties: [any WireProgressProperty.Type] = []) {
        self.root = root
        self.name = name
        var byName: [String: MountedProperty] = [:]
        for property in properties { byName[property.wireName] = MountedProperty(property) }
        self.properties = byName
    }

    /// Applies one record. A node it creates is given to `prepare` (with its mirrored parent) before it is
    /// published in its parent (`ProgressNode.init(totalUnitCount:parent:pendingUnitCount:prepare:)`):
    /// nobody can reach it before its command handlers are installed, so a pause or cancel made on it is
    /// always sent by them, in order.
    mutating func apply(
        _ incoming: ProgressWireRecord, diagnostics: inout ProgressMount.Diagnostics, maximumNodeCount: Int,
        sentCommand: (_ id: Int) -> (ProgressWireCommand, ContinuousClock.Instant)?,
        prepare: (_ node: ProgressNode, _ parent: ProgressNode) -> Void
    ) {
        var record = incoming
        diagnostics.cleanedStrings += Self.clean(&record)
        let entry: Entry
        var isCreated = false
        if let known = entries[record.id] {
            guard known.parentID == record.parentID else {
                diagnostics.cycleLines += 1
                return
            }
            entry = known
        } else if ended.contains(record.id) {
            return  // a later line of a node that ended (a cancelled node is read on by its writer)
        } else if let parentID = record.parentID {
            guard let parent = entries[parentID] else {
                // Once the mirrored root is final (cancelled here, say), lines the publisher wrote before it
                // learned so still arrive: a new node below a final node is dropped (below), and so are the
                // lines of its descendants, whose parent was never mirrored; they are not bad input.
                if ProgressWireRecord.State.isFinalNode(root) { return }
                // Below a node that ended: it ended with it.
                if ended.contains(parentID) {
                    remember(endedID: record.id)
                    return
                }
                diagnostics.unknownParentLines += 1
                return
            }
            guard entries.count < maximumNodeCount else {
                diagnostics.rejectedNodes += 1
                return
            }
            guard !ProgressWireRecord.State.isFinalNode(parent.node) else {
                remember(endedID: record.id)
                return  // its parent ended: it ended with it
            }
            let parentNode = parent.node
            let node = ProgressNode(totalUnitCount: 0, parent: parentNode, pendingUnitCount: record.pendingUnitCount) {
                prepare($0, parentNode)
            }
            entry = Entry(node: node, parentID: parentID, pending: record.pendingUnitCount)
            entries[record.id] = entry
            isCreated = true
        } else {
            guard rootID == nil else {
                diagnostics.rejectedNodes += 1
                return
            }
            rootID = record.id
            entry = Entry(node: root, parentID: nil)
            entries[record.id] = entry
        }
        let node = entry.node
        if ProgressWireRecord.State.isFinalNode(node) {
            forget(record.id)
            return
        }
        diagnostics.acceptedLines += 1
        applyMetadata(record, previous: entry.last, to: node)
        // Before the counts: a node the line finishes leaves its parent with its values set.
        applyProperties(record, previous: entry.last, to: node, diagnostics: &diagnostics)
        entry.last = record
        switch record.state {
        case .finished:
            finish(node, record: record, pending: entry.pending, parentID: entry.parentID)
        case .failed:
            setCounts(record, on: node, diagnostics: &diagnostics)
            node.fail(ProgressMount.Failure(reason: record.failureReason ?? "failed"))
        case .cancelled:
            setCounts(record, on: node, diagnostics: &diagnostics)
            node.cancel()
        case .paused, .running:
            setCounts(record, on: node, diagnostics: &diagnostics)
            guard (record.state == .paused) != node.isPaused else { break }
            // A node this line created was published above, before this point: a pause it has now was made
            // here (by a caller, or by a paused mirrored parent), after the line was written, and stands.
            if isCreated && node.isPaused { break }
            // A pause or resume sent and not confirmed yet is not undone by a line written before it arrived.
            // Looked up now, when the line disagrees: a command sent while this line was being applied is
            // seen (its node's state changed before its handler sent it).
            if let (command, deadline) = sentCommand(record.id), ContinuousClock.now < deadline,
                (command == .pause) != (record.state == .paused)
            {
                break
            }
            if record.state == .paused { node.pause() } else { node.resume() }
        }
        if ProgressWireRecord.State.isFinalNode(node) { forget(record.id) }
    }

    /// Counts as the stream says, the completed count held below the total while the state is not
    /// finished (so that a mirrored node never finishes before its publisher's does).
    private func setCounts(
        _ record: ProgressWireRecord, on node: ProgressNode, diagnostics: inout ProgressMount.Diagnostics
    ) {
        var completed = record.completedUnitCount
        let total = record.totalUnitCount
        if completed >= total && total > 0 {
            completed = total - 1
            diagnostics.outOfRangeLines += 1
        } else if total == 0 && completed > 0 {
            completed = 0
            diagnostics.outOfRangeLines += 1
        }
        // Ordered so that no intermediate pair of counts says finished; a count that did not change is not
        // written (most lines change one count).
        let currentTotal = node.totalUnitCount
        if total >= currentTotal {
            if total != currentTotal { node.totalUnitCount = total }
            if completed != node.completedUnitCount { node.completedUnitCount = completed }
        } else {
            if completed != node.completedUnitCount { node.completedUnitCount = completed }
            node.totalUnitCount = total
        }
    }

    /// Finishes `node`: its parent's count is first lowered by the node's pending count, so that the
    /// credit the finish adds leaves the parent at the count its publisher last said.
    private func finish(_ node: ProgressNode, record: ProgressWireRecord, pending: Int64, parentID: Int?) {
        if let parentID, let parent = entries[parentID], let parentLast = parent.last,
            !ProgressWireRecord.State.isFinalNode(parent.node)
        {
            let lowered = parentLast.completedUnitCount - pending
            if lowered >= 0 { parent.node.completedUnitCount = lowered }
        }
        var total = record.totalUnitCount
        var completed = record.completedUnitCount
        if !(completed >= total && total > 0) && !(completed > 0 && total == 0) {
            total = max(total, 1)
            completed = total
        }
        node.totalUnitCount = total
        node.completedUnitCount = completed
        if let parentID, let parent = entries[parentID], let parentLast = parent.last,
            !ProgressWireRecord.State.isFinalNode(parent.node)
        {
            parent.node.completedUnitCount = parentLast.completedUnitCount
        }
    }

    /// Sets what changed since `previous` (everything for a node's first line): each set costs a lock of
    /// the node, and most lines change only counts (compared field by field, without copying either record).
    private func applyMetadata(_ record: ProgressWireRecord, previous: ProgressWireRecord?, to node: ProgressNode) {
        guard let previous else { return setMetadata(record, changedFrom: nil, on: node) }
        guard !previous.hasSameMetadata(as: record) else { return }
        setMetadata(record, changedFrom: previous, on: node)
    }

    /// Sets each field of `record` that differs from `previous` (every field when `previous` is `nil`).
    private func setMetadata(
        _ record: ProgressWireRecord, changedFrom previous: ProgressWireRecord?, on node: ProgressNode
    ) {
        if previous?.label != record.label || previous?.localizedDescription != record.localizedDescription
            || previous == nil
        {
            // The label of a generic node comes from the description set by its program. The stream's root
            // says whose it is: "worker 2: Importing 3 photos" (two mounts of one program read alike), the
            // name alone when its program sets no description.
            let description = record.localizedDescription ?? (record.kind == nil ? record.label : nil)
            if node === root {
                node.localizedDescription = description.map { "\(name): \($0)" } ?? name
            } else {
                node.localizedDescription = description
            }
        }
        if previous?.localizedAdditionalDescription != record.localizedAdditionalDescription || previous == nil {
            node.localizedAdditionalDescription = record.localizedAdditionalDescription
        }
        if previous?.kind != record.kind || previous == nil {
            node.kind = record.kind.map(ProgressNode.Kind.init(rawValue:))
        }
        if previous?.fileOperationKind != record.fileOperationKind || previous == nil {
            node.fileOperationKind = record.fileOperationKind.map(ProgressNode.FileOperationKind.init(rawValue:))
        }
        if previous?.fileURL != record.fileURL || previous == nil {
            node.fileURL = record.fileURL.flatMap { URL(string: $0) }
        }
        if previous?.fileTotalCount != record.fileTotalCount || previous == nil {
            node.fileTotalCount = record.fileTotalCount
        }
        if previous?.fileCompletedCount != record.fileCompletedCount || previous == nil {
            node.fileCompletedCount = record.fileCompletedCount
        }
        if previous?.throughput != record.throughput || previous == nil { node.throughput = record.throughput }
        if previous?.estimatedTimeRemaining != record.estimatedTimeRemaining || previous == nil {
            node.estimatedTimeRemaining = record.estimatedTimeRemaining
        }
        if previous?.isCancellable != record.isCancellable || previous == nil {
            node.isCancellable = record.isCancellable
        }
        if previous?.isPausable != record.isPausable || previous == nil { node.isPausable = record.isPausable }
    }

    /// Sets on `node` the values of the known properties that changed since `previous` (all of them for a
    /// node's first line): a line is an absolute snapshot, so a value a line no longer carries is the
    /// property's default again. A value that does not read as the property's `Value` leaves the node's as
    /// it was, and is counted, as are the values the line's reading skipped.
    private func applyProperties(
        _ record: ProgressWireRecord, previous: ProgressWireRecord?, to node: ProgressNode,
        diagnostics: inout ProgressMount.Diagnostics
    ) {
        diagnostics.skippedProperties += record.skippedProperties
        let before = previous?.properties ?? [:]
        guard !properties.isEmpty, !(record.properties.isEmpty && before.isEmpty), record.properties != before
        else { return }
        for (name, property) in properties {
            let value = record.properties[name]
            guard value != before[name] else { continue }
            if !property.set(value, on: node) { diagnostics.skippedProperties += 1 }
        }
    }

    // MARK: Snapshots over HTTP

    /// A connection starts sending a snapshot of the tree (`Docs/WireFormat.md`, "Over HTTP").
    mutating func beginSnapshot() {
        snapshotNames = []
    }

    /// Notes that the snapshot being read named `id`, if it is a mirrored node.
    mutating func noteNamed(_ id: Int) {
        guard snapshotNames != nil, entries[id] != nil else { return }
        snapshotNames?.insert(id)
    }

    /// The snapshot ended (`synced`): every mirrored node it did not name ended while the reader was away
    /// and left the tree, so it finished. They are finished here, each after its mirrored descendants, as a
    /// writer's last lines come; returns how many. Nothing without a snapshot begun.
    mutating func endSnapshot(diagnostics: inout ProgressMount.Diagnostics) -> Int {
        guard let named = snapshotNames else { return 0 }
        snapshotNames = nil
        var unnamed: [(depth: Int, id: Int, record: ProgressWireRecord)] = []
        for (id, entry) in entries where id != rootID && !named.contains(id) {
            guard let last = entry.last, !ProgressWireRecord.State.isFinalNode(entry.node) else { continue }
            var depth = 0
            var parent = entry.parentID
            while let parentID = parent, depth <= entries.count {
                depth += 1
                parent = entries[parentID]?.parentID
            }
            var record = last
            record.state = .finished
            unnamed.append((depth, id, record))
        }
        unnamed.sort { ($0.depth, $0.id) > ($1.depth, $1.id) }
        var scratch = ProgressMount.Diagnostics()
        var finished = 0
        for (_, id, record) in unnamed where entries[id] != nil {
            // A known node's line: it creates nothing, so there is nothing to prepare.
            apply(record, diagnostics: &scratch, maximumNodeCount: .max, sentCommand: { _ in nil }) { _, _ in }
            finished += 1
        }
        diagnostics.finishedWhileAway += finished
        return finished
    }

    /// The stream serves another run (over HTTP: a server that restarted, or another instance): its ids
    /// name other nodes, so the mirror starts again, as a new mount's would (`Docs/Mounting.md`, "Over
    /// HTTP"). The mount's node goes back to what a new mount's node is before its first line: no counts
    /// (indeterminate), the mount's name, none of the run's metadata or property values. The mirrored nodes
    /// of the run before that had not ended leave it without an outcome: their metadata, files and property
    /// values are cleared first (so that nothing of them is folded into an ancestor), then each, from the
    /// deepest, finishes and leaves (not failed, not cancelled: the work they stood for is not done, and is
    /// the new run's to do). The credit a finish gives lands in the mount's node while its total is
    /// unknown, and is taken back: nothing of the run before counts in the mount's node or its ancestors.
    /// What that run reported while it ran (a node that failed, the files of a node that finished) happened,
    /// and stays counted above, as an ended node's always does. Called while a read is applied: the
    /// finishes send no command. The ids of the run before are forgotten.
    mutating func beginRun() {
        var lost: [(depth: Int, id: Int, node: ProgressNode)] = []
        for (id, entry) in entries where id != rootID && !ProgressWireRecord.State.isFinalNode(entry.node) {
            var depth = 0
            var parent = entry.parentID
            while let parentID = parent, depth <= entries.count {
                depth += 1
                parent = entries[parentID]?.parentID
            }
            lost.append((depth, id, entry.node))
        }
        lost.sort { ($0.depth, $0.id) > ($1.depth, $1.id) }
        // The mount's node first: indeterminate (a total below 0), so that the credits below can neither
        // finish it nor move its ancestors.
        if !ProgressWireRecord.State.isFinalNode(root) { root.totalUnitCount = -1 }
        for (_, id, node) in lost {
            clearValues(of: node, last: entries[id]?.last)
        }
        for (_, _, node) in lost where !ProgressWireRecord.State.isFinalNode(node) {
            // Counts that only finish it: 0 of 1, then 1 of 1 (a credit from below may have finished it).
            if node.completedUnitCount != 0 { node.completedUnitCount = 0 }
            node.totalUnitCount = 1
            node.completedUnitCount = 1
        }
        if let rootID, let entry = entries[rootID], !ProgressWireRecord.State.isFinalNode(root) {
            clearValues(of: root, last: entry.last)
            root.localizedDescription = name
            root.completedUnitCount = 0
        }
        entries = [:]
        rootID = nil
        ended = []
        endedOrder = []
        endedNext = 0
        if snapshotNames != nil { snapshotNames = [] }
    }

    /// Sets a mirrored node's metadata (but its description) and the values of the properties its last
    /// line carried back to a new node's: what the node would otherwise leave in its ancestors' summaries.
    private func clearValues(of node: ProgressNode, last: ProgressWireRecord?) {
        node.localizedAdditionalDescription = nil
        node.kind = nil
        node.fileOperationKind = nil
        node.fileURL = nil
        node.fileTotalCount = nil
        node.fileCompletedCount = nil
        node.throughput = nil
        node.estimatedTimeRemaining = nil
        guard let values = last?.properties else { return }
        for name in values.keys {
            _ = properties[name]?.set(nil, on: node)
        }
    }

    private mutating func forget(_ id: Int) {
        guard id != rootID else { return }
        entries[id] = nil
        remember(endedID: id)
    }

    private mutating func remember(endedID id: Int) {
        guard ended.insert(id).inserted else { return }
        if endedOrder.count < Self.endedMemory {
            endedOrder.append(id)
        } else {
            ended.remove(endedOrder[endedNext])
            endedOrder[endedNext] = id
            endedNext = (endedNext + 1) % Self.endedMemory
        }
    }

    /// Replaces control characters (C0, DEL, C1) and whole escape sequences (CSI, OSC) in the record's
    /// strings by a space; returns how many strings changed.
    static func clean(_ record: inout ProgressWireRecord) -> Int {
        var count = 0
        func fix(_ text: inout String?) {
            guard let original = text else { return }
            let cleaned = cleaned(original)
            if cleaned != original {
                text = cleaned
                count += 1
            }
        }
        fix(&record.label)
        fix(&record.localizedDescription)
        fix(&record.localizedAdditionalDescription)
        fix(&record.failureReason)
        fix(&record.kind)
        fix(&record.fileOperationKind)
        fix(&record.fileURL)
        return count
    }

    static func cleaned(_ text: String) -> String {
        // Control characters are C0 and DEL (one byte each) or C1 (0xC2 then 0x80...0x9F): a look at the
        // bytes finds the usual text clean without decoding it.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }),
            text.unicodeScalars.contains(where: isControl)
        else { return text }
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard isControl(scalar) else {
                out.append(scalar)
                continue
            }
            out.append(" ")
            if scalar == "\u{1B}" || scalar == "\u{9B}" || scalar == "\u{9D}" {
                // Drop the rest of the sequence: CSI up to its final byte, OSC up to BEL or ST.
                var kind: Unicode.Scalar? = scalar == "\u{9B}" ? "[" : scalar == "\u{9D}" ? "]" : scalars.next()
                if kind == "[" {
                    while let next = scalars.next(), !(0x40...0x7E).contains(next.value) {}
                } else if kind == "]" {
                    var previous: Unicode.Scalar?
                    while let next = scalars.next() {
                        if next == "\u{7}" || next == "\u{9C}" || (previous == "\u{1B}" && next == "\\") { break }
                        previous = next
                    }
                }
                kind = nil
            }
        }
        return String(out)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

extension ProgressWireRecord {
    /// Whether every field `MountedNodeMap.setMetadata` sets is equal in `other`.
    fileprivate func hasSameMetadata(as other: ProgressWireRecord) -> Bool {
        label == other.label && localizedDescription == other.localizedDescription
            && localizedAdditionalDescription == other.localizedAdditionalDescription && kind == other.kind
            && fileOperationKind == other.fileOperationKind && fileURL == other.fileURL
            && fileTotalCount == other.fileTotalCount && fileCompletedCount == other.fileCompletedCount
            && throughput == other.throughput && estimatedTimeRemaining == other.estimatedTimeRemaining
            && isCancellable == other.isCancellable && isPausable == other.isPausable
    }
}
