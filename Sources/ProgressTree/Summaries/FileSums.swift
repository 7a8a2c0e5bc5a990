import ProgressTreePlatform

// The file summary a node keeps, so that reading it again costs O(changes since the last read) rather than
// O(children): a root over 100,000 files is read every frame (its descriptions, `fileTotalCount`,
// `throughput`, a renderer's details). How a read uses it: ProgressNode+FileSummary.swift.
//
// A node keeps one ("is tracked") from the first read of its summary that finds it with children, or from
// the first change of a child's metadata that can move the child's files (a kind to or from `.file`, a file
// count), whichever comes first; a read makes every member with children it computes tracked too. It holds:
// - under its own lock, `FileSums`: each member's last summary (its *contribution*) and their exact total;
// - under its tree's domain lock, in its `ChildSums`, `FileChangeLog`: the children a refresh recorded in
//   its sums since the last read.
//
// Invariants:
// - Members. Under the node's lock, the members are the children its summary counts as attached: every
//   child found in its table (settled, not listed as finished) when tracking began or inserted since
//   (`settleFreshChildren`, `addChild`: a child already listed as finished does not join), until it leaves
//   in the critical section that folds its files into the node's `finishedChildren` (a finishing child,
//   held or not) or removes it (a failing child, whose files leave the summary). So, under the node's lock,
//   each child is counted once: as a member, or folded (a failed one not at all). A held child that its
//   holder's table lets go of before its finish folds it (ProgressNode+HeldChildren.swift) stays a member
//   until that fold.
// - Lifetime. A member is alive while it is a member: its parent's table holds it, or, between a holder
//   letting go of it and its fold, the finish that is folding it does. So, under the node's lock, a
//   member's address is a valid reference.
// - Total. `total` is the exact sum of the members' contributions. A contribution is replaced only under
//   the domain lock (so two replacements never interleave) and the node's lock: by a read, or by a writer's
//   `keepFileContribution(of:)` (below). A member joins with contribution zero. That is its summary when
//   `mayHaveFiles` is false (no `describesFiles`, no `hasHadChildren`: no kind `.file`, no file count, no
//   child ever); otherwise it is listed as joined, and the next read or writer computes it.
// - Changes. Whatever a child's summary is made of changes only
//   - with its counts (a count setter marks it), its finished or attached children or anything below it (a
//     child attached to it, finishing into it or failing out of it marks it): the child is queued in the
//     node, or a path refresh records it, and a refresh records it in the node's `ChildSums` under the
//     domain lock after the change; `ChildSums.record` notes its address in the log while the node is
//     tracked. A read refreshes the node first, then takes the log under the domain lock;
//   - or with its metadata (its kind, its file counts): the setter, once the child's lock is released,
//     takes the domain lock and computes the child's contribution anew in its parent
//     (`keepFileContribution(of:)`, starting the parent's summary if need be), then marks the parent. A
//     child's metadata is not progress, so the child itself is not queued: 100,000 children given a kind
//     leave the next reader one marked parent, not 100,000 members to compute.
//   So every attached member whose summary may differ from its contribution has joined since the last read
//   or is in the log (but for a change whose path is still being marked, as for `fractionCompleted`, or a
//   metadata setter still waiting for the domain lock). A member that detached (finished or failed, its
//   fold or removal under way) no longer reports to the node: it is read as last computed until it leaves,
//   which replaces it by its fold or by nothing.
// - Addresses. The log holds addresses and never dereferences them: a read looks each one up among the
//   members, under the node's lock. The address of a child that went away finds nothing, or a new member
//   at that address, whose summary is then computed for nothing.
// - Gate. Nodes whose summary nobody reads and whose children never describe files pay nothing but one load
//   per record (`ChildSums.fileChanges` is `nil`) and, where a child joins or leaves a table under the
//   parent's lock, one look at the parent's extras: `advance(by:)`, the count setters and a clean read are
//   unchanged. A node with a child that describes files keeps a summary whether or not anybody reads it:
//   a member per live child (finished children are folded and leave).
// - Memory. The log keeps at most `limit` addresses (the members + 1,024, set at each read); past that it
//   only remembers that it overflowed, and the next read computes every member again: O(members), after
//   more changes than members.

/// What a tracked node's summary counts of its attached children, under the node's lock (see the top of
/// this file). A reference, kept in `NodeExtras`, and never shared: only ever reached under the node's lock,
/// which orders every access, so the dynamic exclusivity checks are left out (`@exclusivity(unchecked)`):
/// a settle of 100,000 fresh children paid one per member joined.
final class FileSums {
    /// What a member contributes: its files as of the read that last computed them, and the slot of its
    /// property contributions in `propertyTotals`.
    struct Member {
        var files = ProgressNode.FileSummary()
        let slot: Int32
    }

    /// Each member's contribution (its summary as of the read that last computed it), by address.
    @exclusivity(unchecked) private(set) var members: [UInt: Member] = [:]
    /// The exact sum of `members`' files.
    @exclusivity(unchecked) private(set) var total = ExactFileTotal()
    /// For each property some member's subtree contributed, the merge of the members' summaries of it
    /// (empty until one did: nodes without custom properties pay nothing for them). A member that does not
    /// contribute a property holds its default there. An array, looked up by the property's key
    /// (`propertyTotal(for:)`): a node's properties are usually one or two, and a scan of them costs less than
    /// hashing the key.
    @exclusivity(unchecked) private(set) var propertyTotals: [PropertyTotalStorage] = []
    /// Slots of members that left, for the next to join (a member's slot is fixed while it is one).
    @exclusivity(unchecked) private var freeSlots: [Int32] = []
    /// The slots ever given out since the members were last empty.
    @exclusivity(unchecked) private var slotEnd: Int32 = 0
    /// Members that joined since the last read (their contribution is still zero); a member may have left
    /// since.
    @exclusivity(unchecked) private var joined: [UInt] = []
    /// The member `slot(ofMember:)` found last, and its slot (0: none): a value set on one node walks the
    /// same path again and again, and finds each of its members here without hashing. Cleared when that
    /// member leaves (a member's slot is fixed while it is one, and its address names no other node then).
    @exclusivity(unchecked) private var lastLookedUp: (address: UInt, slot: Int32) = (0, 0)

    /// The first members, when the node starts keeping its summary: the unfinished children of its table.
    /// Not listed as joined: the read that starts keeping the summary computes every member that may have
    /// files (`membersThatMayHaveFiles()`).
    func begin(with table: ChildTable) {
        members.reserveCapacity(Int(table.liveCount))
        table.forEachUnfinished { node in insert(UInt(bitPattern: node.toOpaque())) }
    }

    /// `node` joins (inserted into the table; not listed as finished). Its contribution is zero until a read
    /// computes it; a node that may have no files (`mayHaveFiles`) is not listed for that read: zero is its
    /// summary.
    func join(_ node: ProgressNode) {
        let address = Self.address(of: node)
        insert(address)
        if node.mayHaveFiles { joined.append(address) }
    }

    /// The members whose summary may not be empty, for a read that computes every member: under the node's
    /// lock, where each member is alive.
    func membersThatMayHaveFiles() -> [UInt] {
        var addresses: [UInt] = []
        for address in members.keys {
            let member = Unmanaged<ProgressNode>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
            if member._withUnsafeGuaranteedRef(\.mayHaveFiles) { addresses.append(address) }
        }
        return addresses
    }

    /// Adds the node at `address` as a member of contribution zero, in a free slot.
    private func insert(_ address: UInt) {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slotEnd
            slotEnd += 1
        }
        let replaced = members.updateValue(Member(slot: slot), forKey: address)
        assert(replaced == nil, "a node joins one table once")
    }

    /// `node` leaves (its files are folded in the same critical section, or it failed); nothing when it was
    /// not a member (it joined no tracked table, or it left already).
    func leave(_ node: ProgressNode) {
        let address = Self.address(of: node)
        guard let member = members.removeValue(forKey: address) else { return }
        if lastLookedUp.address == address { lastLookedUp = (0, 0) }
        total.subtract(member.files)
        for propertyTotal in propertyTotals { propertyTotal.set(Int(member.slot), to: nil) }
        freeSlots.append(member.slot)
        // Memory follows the live children, as in `ChildTable`.
        if members.isEmpty {
            if members.capacity > 64 { members = [:] }
            freeSlots = []
            slotEnd = 0
            for propertyTotal in propertyTotals { propertyTotal.removeAll() }
        }
    }

    /// Replaces the contribution of the member at `address`, if it is still one (a read computed its
    /// summary, and it may have left meanwhile).
    func update(_ address: UInt, to summary: SubtreeSummary) {
        guard let index = members.index(forKey: address) else { return }
        replace(at: index, by: summary)
    }

    /// Replaces the contribution of the member at `index`, and the totals with it: every property's, or
    /// only `onlyProperty`'s when the others are known unchanged.
    private func replace(
        at index: [UInt: Member].Index, by summary: SubtreeSummary, onlyProperty: ObjectIdentifier? = nil
    ) {
        let old = members.values[index]
        if old.files != summary.files {
            total.subtract(old.files)
            total.add(summary.files)
            members.values[index].files = summary.files
        }
        if let onlyProperty {
            replaceProperty(onlyProperty, inSlot: Int(old.slot), by: summary.properties?[onlyProperty])
        } else if summary.properties != nil || !propertyTotals.isEmpty {
            replaceProperties(inSlot: Int(old.slot), by: summary.properties ?? [:])
        }
    }

    /// Puts `properties` in `slot` of every property total (creating the totals of properties no member
    /// contributed before), and the default in the others.
    private func replaceProperties(inSlot slot: Int, by properties: PropertySummaries) {
        for (key, property) in properties where propertyTotal(for: key) == nil {
            propertyTotals.append(property.operations.makeTypedTotal())
        }
        for propertyTotal in propertyTotals { propertyTotal.set(slot, to: properties[propertyTotal.key]?.summary) }
    }

    /// Puts `property` in `slot` of its total (created if no member contributed it before; `nil`: the
    /// default).
    private func replaceProperty(_ key: ObjectIdentifier, inSlot slot: Int, by property: PropertySummary?) {
        if let existing = propertyTotal(for: key) {
            existing.set(slot, to: property?.summary)
        } else if let property {
            let created = property.operations.makeTypedTotal()
            created.set(slot, to: property.summary)
            propertyTotals.append(created)
        }
    }

    /// The total of the property `key` names, if a member contributed it.
    @inline(__always)
    func propertyTotal(for key: ObjectIdentifier) -> PropertyTotalStorage? {
        unretainedPropertyTotal(for: key)?.takeUnretainedValue()
    }

    /// `propertyTotal(for:)` without a reference count: valid while the node's lock is held (this object
    /// holds the total, and totals are only ever added).
    @inline(__always)
    func unretainedPropertyTotal(for key: ObjectIdentifier) -> Unmanaged<PropertyTotalStorage>? {
        propertyTotals.withUnsafeBufferPointer { totals in
            for index in totals.indices where totals[index].key == key { return .passUnretained(totals[index]) }
            return nil
        }
    }

    /// The slot of the member at `address` and this node's total of the property `key` names (`nil`: no
    /// member contributed it yet), or `nil` when `address` names no member: one level of a value set's walk
    /// up (Properties/ProgressNode+PropertyPath.swift), under the node's lock.
    @inline(__always)
    func pathLevel(ofMember address: UInt, key: ObjectIdentifier) -> PropertyLevel? {
        guard let slot = slot(ofMember: address) else { return nil }
        return PropertyLevel(slot: slot, total: unretainedPropertyTotal(for: key))
    }

    /// Adds the total a typed step made (Properties/PropertyPathStep.swift) when it found none for its
    /// property.
    func addPropertyTotal(_ total: PropertyTotalStorage) {
        assert(propertyTotal(for: total.key) == nil, "one total per property")
        propertyTotals.append(total)
    }

    /// The slot of the member at `address`, `nil` when it is none (see
    /// Properties/ProgressNode+PropertyPath.swift). One hashed look-up, none when it is the member found
    /// last.
    @inline(__always)
    func slot(ofMember address: UInt) -> Int? {
        if address == lastLookedUp.address { return Int(lastLookedUp.slot) }
        guard let member = members[address] else { return nil }
        lastLookedUp = (address, member.slot)
        return Int(member.slot)
    }

    /// The members that joined since the last call (some may have left since).
    func takeJoined() -> [UInt] {
        guard !joined.isEmpty else { return [] }
        let taken = joined
        joined.removeAll(keepingCapacity: true)
        return taken
    }

    /// Replaces the contribution of the member at `address` by `summary` when no other member waits to be
    /// computed (the one at `address` may: it is computed now), and returns `true`; otherwise changes
    /// nothing and returns `false` (not a member, or others joined: a read's work). One hashed look-up.
    /// `onlyProperty`: see `replace(at:by:onlyProperty:)`.
    func replaceIfNoOtherJoined(
        _ address: UInt, by summary: SubtreeSummary, onlyProperty: ObjectIdentifier? = nil
    ) -> Bool {
        guard joined.allSatisfy({ $0 == address }), let index = members.index(forKey: address) else { return false }
        let wasJoined = !joined.isEmpty  // joined with contribution zero: every property is new
        joined.removeAll(keepingCapacity: true)
        replace(at: index, by: summary, onlyProperty: wasJoined ? nil : onlyProperty)
        return true
    }

    /// Whether no member waits to be computed by a read.
    var hasNoneJoined: Bool { joined.isEmpty }

    /// Whether the member at `address` is one: under the node's lock, it is then a live node.
    func isMember(_ address: UInt) -> Bool { members[address] != nil }

    static func address(of node: ProgressNode) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(node).toOpaque())
    }
}

/// The children a refresh recorded in a tracked node's sums since the last read of its summary (see the
/// top of this file): addresses, never dereferenced. Owned by the tree's domain lock, like the `ChildSums`
/// that holds it.
///
/// Only ever reached under the domain lock, which orders every access: its fields leave out the dynamic
/// exclusivity checks (a value set's read of the root asks `isEmpty` each time).
final class FileChangeLog {
    @exclusivity(unchecked) private var addresses: [UInt] = []
    /// The last address noted: a child recorded again and again (one updated between reads of its path)
    /// is noted once.
    @exclusivity(unchecked) private var lastAddress: UInt = 0
    @exclusivity(unchecked) private var overflowed = false
    /// How many addresses it keeps before it only remembers that it overflowed.
    @exclusivity(unchecked) var limit = 1_024

    /// Notes that a refresh recorded `child`.
    @inline(__always)
    func note(_ child: Unmanaged<ProgressNode>) {
        let address = UInt(bitPattern: child.toOpaque())
        guard address != lastAddress, !overflowed else { return }
        lastAddress = address
        if addresses.count < limit {
            addresses.append(address)
        } else {
            overflowed = true
            addresses = []
        }
    }

    /// Whether nothing was noted since the last `take()`.
    var isEmpty: Bool { addresses.isEmpty && !overflowed }

    /// The addresses noted since the last call, or `nil` when more were noted than it keeps (every member
    /// must then be computed again); empties the log.
    func take() -> [UInt]? {
        lastAddress = 0
        if overflowed {
            overflowed = false
            return nil
        }
        guard !addresses.isEmpty else { return [] }
        let taken = addresses
        addresses = []
        return taken
    }
}

/// The exact sum of file summaries that members join and leave. Saturating sums cannot be undone, so
/// each field is a 128-bit integer, saturated only when read; every field of a summary is ≥ 0, so the
/// saturated exact sum is what adding saturated one summary at a time gives (FileSummary.swift).
struct ExactFileTotal {
    private var fileTotalCount: Int128 = 0
    private var fileCompletedCount: Int128 = 0
    private var totalByteCount: Int128 = 0
    private var completedByteCount: Int128 = 0
    private var filesOfUnknownSize: Int128 = 0

    mutating func add(_ summary: ProgressNode.FileSummary) {
        fileTotalCount += Int128(summary.fileTotalCount)
        fileCompletedCount += Int128(summary.fileCompletedCount)
        totalByteCount += Int128(summary.totalByteCount)
        completedByteCount += Int128(summary.completedByteCount)
        filesOfUnknownSize += Int128(summary.filesOfUnknownSize)
    }

    mutating func subtract(_ summary: ProgressNode.FileSummary) {
        fileTotalCount -= Int128(summary.fileTotalCount)
        fileCompletedCount -= Int128(summary.fileCompletedCount)
        totalByteCount -= Int128(summary.totalByteCount)
        completedByteCount -= Int128(summary.completedByteCount)
        filesOfUnknownSize -= Int128(summary.filesOfUnknownSize)
    }

    /// The sum, each field saturated.
    var summary: ProgressNode.FileSummary {
        ProgressNode.FileSummary(
            fileTotalCount: Int(clamping: fileTotalCount), fileCompletedCount: Int(clamping: fileCompletedCount),
            totalByteCount: Int64(clamping: totalByteCount), completedByteCount: Int64(clamping: completedByteCount),
            filesOfUnknownSize: Int(clamping: filesOfUnknownSize))
    }
}

#if PROGRESSTREE_INTERNAL_CHECKS
/// For `ProgressNode.invariantViolations()` (Core/ProgressNode+Invariants.swift): a total against the sum
/// of the members' contributions, field by field, before saturation.
extension ExactFileTotal: Equatable {}
#endif

extension ProgressNode {
    /// Whether this node's summary may not be empty: it described files (`describesFiles`), held a custom
    /// property (`hasProperties`) or had children (files or properties below it, or folded). Without any,
    /// its summary is empty: no kind `.file`, no file count, no property, nothing folded, nothing attached
    /// (FileFacts.swift). Lock-free; a change after this load is
    /// announced to the parent's summary afterwards (a metadata setter's `keepFileContribution(of:)`, an
    /// attach's mark).
    var mayHaveFiles: Bool {
        flags.load(ordering: .sequentiallyConsistent)
            & (NodeFlags.describesFiles | NodeFlags.hasHadChildren | NodeFlags.hasProperties) != 0
    }
}
