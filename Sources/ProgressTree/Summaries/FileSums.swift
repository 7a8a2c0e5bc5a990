import ProgressTreePlatform

// The file summary a node keeps, so that reading it again costs O(changes since the last read) rather than
// O(children): a root over 100,000 files is read every frame (its descriptions, `fileTotalCount`,
// `throughput`, a renderer's details). How a read uses it: ProgressNode+FileSummary.swift.
//
// A node keeps one ("is tracked") from the first read of its summary that finds it with children, or from
// the first change of a child's metadata that can move the child's files (a kind to or from `.file`, a file
// count), whichever comes first; a read makes every member with children it computes tracked too. It holds:
// - under its own lock, `FileSums`: each member's last files (its *contribution*) and their exact total;
// - under its tree's domain lock, in its `ChildSums`, `FileChangeLog`: the children a refresh recorded in
//   its sums since the last read; and the log's `PropertySums`: the members' property contributions and
//   their totals (PropertySums.swift).
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
/// this file); their custom properties are counted in the node's `PropertySums`, under the domain lock
/// (PropertySums.swift). A reference, kept in `NodeExtras`, and never shared: only ever reached under the
/// node's lock, which orders every access, so the dynamic exclusivity checks are left out
/// (`@exclusivity(unchecked)`): a settle of 100,000 fresh children paid one per member joined.
final class FileSums {
    /// What a member contributes: its files as of the read that last computed them; and whether it has a
    /// slot in the node's `PropertySums` (set, under both locks, when it is given one; a slot is never
    /// taken back from a member).
    struct Member {
        var files = ProgressNode.FileSummary()
        var hasSlot = false
    }

    /// The node that keeps this summary, unretained: it holds this object.
    private let owner: Unmanaged<ProgressNode>
    /// The node's parent part, unretained: it lives as long as the node. Its `propertySums` belongs to the
    /// domain lock: only methods documented as running under it reach that.
    private let part: Unmanaged<ChildSums>

    /// Each member's files (as of the read that last computed them), by address.
    @exclusivity(unchecked) private(set) var members: [UInt: Member] = [:]
    /// The exact sum of `members`' files.
    @exclusivity(unchecked) private(set) var total = ExactFileTotal()
    /// Members that joined since the last read (their contribution is still zero); a member may have left
    /// since. While it is not empty, the node's `NodeFlags.membersJoined` is set (`setFlag(_:_:)`).
    @exclusivity(unchecked) private(set) var joined: [UInt] = []
    /// Members with a slot that left since the last drain: their slots still hold their contributions,
    /// until a holder of the domain lock drains them (`drainPropertyLeaves()`). While it is not empty, the
    /// node's `NodeFlags.propertyLeavesPending` is set. One entry per slot given out: bounded by the
    /// slotted members the last drain left.
    @exclusivity(unchecked) private(set) var pendingLeaves: [UInt] = []

    /// The summary `owner` keeps, `part` being its parent part.
    init(owner: ProgressNode, part: ChildSums) {
        self.owner = .passUnretained(owner)
        self.part = .passUnretained(part)
    }

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
        if node.mayHaveFiles {
            joined.append(address)
            if joined.count == 1 { setFlag(NodeFlags.membersJoined, true) }
        }
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

    /// Adds the node at `address` as a member of contribution zero.
    private func insert(_ address: UInt) {
        let replaced = members.updateValue(Member(), forKey: address)
        assert(replaced == nil, "a node joins one table once")
    }

    /// `node` leaves (its files are folded in the same critical section, or it failed); nothing when it was
    /// not a member (it joined no tracked table, or it left already). Under the node's lock alone: its
    /// property contributions leave at the next drain (see PropertySums.swift).
    func leave(_ node: ProgressNode) {
        let address = Self.address(of: node)
        guard let member = members.removeValue(forKey: address) else { return }
        total.subtract(member.files)
        if member.hasSlot {
            pendingLeaves.append(address)
            if pendingLeaves.count == 1 { setFlag(NodeFlags.propertyLeavesPending, true) }
        }
        // Memory follows the live children, as in `ChildTable`.
        if members.isEmpty && members.capacity > 64 { members = [:] }
    }

    /// Releases the slots of the members that left since the last drain (see PropertySums.swift). Under the
    /// domain lock and the node's lock, before anything reads or writes the property totals.
    @inline(__always)
    private func drainPropertyLeaves() {
        if !pendingLeaves.isEmpty { drainPendingLeaves() }
    }

    @inline(never)  // off the common path: no member left since
    private func drainPendingLeaves() {
        guard let sums = part._withUnsafeGuaranteedRef(\.propertySums) else {
            preconditionFailure("pending leaves without property sums")
        }
        for address in pendingLeaves { sums.release(address) }
        pendingLeaves.removeAll(keepingCapacity: pendingLeaves.count <= 64)
        setFlag(NodeFlags.propertyLeavesPending, false)
    }

    /// Sets or clears one of the owner's flags that mirror this object's lists (`membersJoined`,
    /// `propertyLeavesPending`), under the node's lock with the list, for the code that looks without the
    /// lock (a value set's walk, a read of a current summary).
    private func setFlag(_ flag: UInt32, _ isSet: Bool) {
        owner._withUnsafeGuaranteedRef {
            if isSet {
                _ = $0.flags.bitwiseOr(flag, ordering: .sequentiallyConsistent)
            } else {
                _ = $0.flags.bitwiseAnd(~flag, ordering: .sequentiallyConsistent)
            }
        }
    }

    /// The node's `PropertySums`, drained, created if `creating` (else `nil` when there is none). Under the
    /// domain lock and the node's lock.
    private func propertySums(creating: Bool) -> PropertySums? {
        drainPropertyLeaves()
        return part._withUnsafeGuaranteedRef { part in
            if let existing = part.propertySums { return existing }
            guard creating else { return nil }
            // The read that started this summary made the log in the same critical section.
            guard let log = part.fileChanges else { preconditionFailure("a kept summary has its log") }
            return log.propertySumsCreatingIfNone()
        }
    }

    /// Replaces the contribution of the member at `address`, if it is still one (a read computed its
    /// summary, and it may have left meanwhile). Under the domain lock and the node's lock.
    func update(_ address: UInt, to summary: SubtreeSummary) {
        guard let index = members.index(forKey: address) else { return }
        replace(at: index, by: summary)
    }

    /// Replaces the contribution of the member at `index`, and the totals with it: every property's, or
    /// only `onlyProperty`'s when the others are known unchanged. Under the domain lock and the node's lock.
    private func replace(
        at index: [UInt: Member].Index, by summary: SubtreeSummary, onlyProperty: ObjectIdentifier? = nil
    ) {
        let (address, old) = members[index]
        if old.files != summary.files {
            total.subtract(old.files)
            total.add(summary.files)
            members.values[index].files = summary.files
        }
        // A member is given a slot when it contributes something (PropertySums.replaceProperty...).
        if let onlyProperty {
            let property = summary.properties?[onlyProperty]
            propertySums(creating: property != nil)?.replaceProperty(onlyProperty, ofMember: address, by: property)
            if property != nil { members.values[index].hasSlot = true }
        } else {
            propertySums(creating: summary.properties != nil)?.replaceProperties(
                ofMember: address, by: summary.properties)
            if summary.properties != nil { members.values[index].hasSlot = true }
        }
    }

    /// The property totals, for a read that computes the node's summary. Under the domain lock and the
    /// node's lock.
    var propertyTotals: [PropertyTotalStorage] { propertySums(creating: false)?.totals ?? [] }

    /// The total of the property `key` names (`nil`: no member contributed it), without a reference count:
    /// for the node's own level of a value set, and a read of a current summary. Under the domain lock and
    /// the node's lock, which keep it.
    @inline(__always)
    func levelTotal(for key: ObjectIdentifier) -> Unmanaged<PropertyTotalStorage>? {
        drainPropertyLeaves()
        return part._withUnsafeGuaranteedRef { $0.propertySums?.unretainedTotal(for: key) }
    }

    /// The slot of the member at `address` (given one if it has none) and this node's total of the property
    /// `key` names (`nil`: no member contributed it yet), or `nil` when `address` names no member: one level
    /// of a value set's walk up that takes the node's lock (Properties/ProgressNode+PropertyPath.swift).
    /// Under the domain lock and the node's lock.
    func pathLevel(ofMember address: UInt, key: ObjectIdentifier) -> PropertyLevel? {
        guard let index = members.index(forKey: address), let sums = propertySums(creating: true) else { return nil }
        members.values[index].hasSlot = true
        return PropertyLevel(slot: sums.slotAssigning(address), total: sums.unretainedTotal(for: key))
    }

    /// Adds the total a typed step made (Properties/PropertyPathStep.swift) when it found none for its
    /// property. Under the domain lock and the node's lock, after `pathLevel(ofMember:key:)`.
    func addPropertyTotal(_ total: PropertyTotalStorage) {
        guard let sums = propertySums(creating: false) else { preconditionFailure("a level has property sums") }
        sums.addTotal(total)
    }

    /// The members that joined since the last call (some may have left since).
    func takeJoined() -> [UInt] {
        guard !joined.isEmpty else { return [] }
        let taken = joined
        joined.removeAll(keepingCapacity: true)
        setFlag(NodeFlags.membersJoined, false)
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
        if wasJoined {
            joined.removeAll(keepingCapacity: true)
            setFlag(NodeFlags.membersJoined, false)
        }
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
    /// Once a member of the node's kept summary contributed a custom property: the property side of that
    /// summary (PropertySums.swift), owned by the domain lock as this log is. Kept here rather than in
    /// `ChildSums` because this log, like it, exists only while the node keeps a summary: a parent that
    /// keeps none pays nothing for it (`ChildSums` is in malloc's 144-byte class without it, 160 with).
    @exclusivity(unchecked) private(set) var propertySums: PropertySums?

    /// `propertySums`, created if need be.
    func propertySumsCreatingIfNone() -> PropertySums {
        if let propertySums { return propertySums }
        let created = PropertySums()
        propertySums = created
        return created
    }

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
