// The file summary a node keeps once it is read, so that reading it again costs O(changes since the last
// read) rather than O(children): a root over 100,000 files is read every frame (its descriptions,
// `fileTotalCount`, `throughput`, a renderer's details). How a read uses it: ProgressNode+FileSummary.swift.
//
// A node keeps one ("is tracked") from the first read of its summary that finds it with children, and a
// read makes every member with children it computes tracked too. It holds:
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
// - Total. `total` is the exact sum of the members' contributions; a contribution is zero until a read
//   computes the member's summary, and only reads replace it, under the node's lock.
// - Changes. Whatever a child's summary is made of (its counts, its metadata, its finished children, its
//   members, anything below it) changes only with a count setter or a `markChanged()` of the child after
//   the change (a child attached to it, finishing into it or failing out of it marks it too). So the child
//   is queued in the node, or a path refresh records it, and a refresh records it in the node's
//   `ChildSums` under the domain lock after the change; `ChildSums.record` notes its address in the log
//   while the node is tracked. A read refreshes the node first, then takes the log under the domain lock:
//   every attached member whose summary may differ from its contribution has joined since the last read
//   or is in the log (but for a change whose path is still being marked, as for `fractionCompleted`). A
//   member that detached (finished or failed, its fold or removal under way) no longer reports to the node:
//   it is read as last computed until it leaves, which replaces it by its fold or by nothing.
// - Addresses. The log holds addresses and never dereferences them: a read looks each one up among the
//   members, under the node's lock. The address of a child that went away finds nothing, or a new member
//   at that address, whose summary is then computed for nothing.
// - Gate. Nodes nobody reads the summary of pay nothing but one load per record (`ChildSums.fileChanges`
//   is `nil`) and, where a child joins or leaves a table under the parent's lock, one look at the parent's
//   extras: `advance(by:)`, the count setters and a clean read are unchanged.
// - Memory. The log keeps at most `limit` addresses (the members + 1,024, set at each read); past that it
//   only remembers that it overflowed, and the next read computes every member again: O(members), after
//   more changes than members.

/// What a tracked node's summary counts of its attached children, under the node's lock (see the top of
/// this file). A reference, kept in `NodeExtras`, and never shared: only ever reached under the node's lock.
final class FileSums {
    /// Each member's contribution (its summary as of the read that last computed it), by address.
    private(set) var members: [UInt: ProgressNode.FileSummary] = [:]
    /// The exact sum of `members`' contributions.
    private(set) var total = ExactFileTotal()
    /// Members that joined since the last read (their contribution is still zero); a member may have left
    /// since.
    private var joined: [UInt] = []

    /// The first members, when the node starts keeping its summary: its attached children (`count` of
    /// them, or about). Not listed as joined: the read that starts keeping the summary computes every member.
    func begin(with nodes: some Sequence<ProgressNode>, count: Int) {
        members.reserveCapacity(count)
        for node in nodes { _ = insert(node) }
    }

    /// `node` joins (inserted into the table; not listed as finished). Its contribution is zero until a read
    /// computes it.
    func join(_ node: ProgressNode) {
        joined.append(insert(node))
    }

    /// Adds `node` as a member of contribution zero; its address.
    private func insert(_ node: ProgressNode) -> UInt {
        let address = Self.address(of: node)
        let replaced = members.updateValue(ProgressNode.FileSummary(), forKey: address)
        assert(replaced == nil, "a node joins one table once")
        return address
    }

    /// `node` leaves (its files are folded in the same critical section, or it failed); nothing when it was
    /// not a member (it joined no tracked table, or it left already).
    func leave(_ node: ProgressNode) {
        guard let contribution = members.removeValue(forKey: Self.address(of: node)) else { return }
        total.subtract(contribution)
        // Memory follows the live children, as in `ChildTable`.
        if members.isEmpty && members.capacity > 64 { members = [:] }
    }

    /// Replaces the contribution of the member at `address`, if it is still one (a read computed its
    /// summary, and it may have left meanwhile).
    func update(_ address: UInt, to summary: ProgressNode.FileSummary) {
        guard let index = members.index(forKey: address) else { return }
        let old = members.values[index]
        guard old != summary else { return }
        total.subtract(old)
        total.add(summary)
        members.values[index] = summary
    }

    /// The members that joined since the last call (some may have left since).
    func takeJoined() -> [UInt] {
        guard !joined.isEmpty else { return [] }
        defer { joined = [] }
        return joined
    }

    /// Whether the member at `address` is one: under the node's lock, it is then a live node.
    func isMember(_ address: UInt) -> Bool { members[address] != nil }

    static func address(of node: ProgressNode) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(node).toOpaque())
    }
}

/// The children a refresh recorded in a tracked node's sums since the last read of its summary (see the
/// top of this file): addresses, never dereferenced. Owned by the tree's domain lock, like the `ChildSums`
/// that holds it.
final class FileChangeLog {
    private var addresses: [UInt] = []
    /// The last address noted: a child recorded again and again (one updated between reads of its path)
    /// is noted once.
    private var lastAddress: UInt = 0
    private var overflowed = false
    /// How many addresses it keeps before it only remembers that it overflowed.
    var limit = 1_024

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
