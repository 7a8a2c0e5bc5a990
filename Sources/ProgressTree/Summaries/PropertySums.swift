// The custom properties' side of a tracked node's kept summary (FileSums.swift): each member's contribution
// to each property, in a slot of that property's total (PropertyTotal.swift). Owned by the tree's domain
// lock, like the `ChildSums` and the `FileChangeLog` that hold it, and not by the node's lock as the files' side is: a value set
// walks up its path under the domain lock alone, so that it takes no ancestor's lock
// (Properties/ProgressNode+PropertyPath.swift).
//
// Invariants (under the domain lock):
// - Slots. A member of the node's `FileSums` has at most one slot, given the first time a holder of the
//   domain lock and of the node's lock writes one of its property contributions (a read, a writer's
//   `keepFileContribution(of:)`, a value set's walk); no other address has one, but a member that left
//   and is still on its `FileSums`' list of pending leaves. A slot goes back to the free list only when a
//   holder of both locks drains that list (`FileSums.drainPropertyLeaves()`), which resets the slot to the
//   default in every total first: so a slot read under the domain lock names the same member until the lock
//   is released, whatever the node's lock does meanwhile.
// - Totals. Each total holds, in each slot, the contribution of the member that has it (the default where
//   none does, or where the member never contributed the property).
// - Consistency with the node's entries. A member leaves the node's `FileSums` and folds what it leaves
//   behind into the node's entries under the node's lock alone (a finish never waits for the domain lock);
//   its slot keeps its contribution until the drain. So whoever computes the node's summary from its entries
//   and its totals holds both locks and drains first; a value set's walk that passes the node without its
//   lock reads only the totals, and only while the node has no entry and no pending leave (`NodeFlags`):
//   what it computes is the node's summary as of before those leaves, which marked the node, so that the
//   next read computes the node again.

/// The members' slots and the property totals of a node's kept summary (see the top of this file): reached
/// through the node's `ChildSums` (its log of changes holds it) and only under the tree's domain lock, which orders every access (so the
/// dynamic exclusivity checks are left out: `@exclusivity(unchecked)`).
final class PropertySums {
    /// For each property some member's subtree contributed, the merge of the members' summaries of it. An
    /// array, looked up by the property's key: a node's properties are usually one or two, and a scan of
    /// them costs less than hashing the key.
    @exclusivity(unchecked) private(set) var totals: [PropertyTotalStorage] = []
    /// Each slotted member's slot, by address.
    @exclusivity(unchecked) private var slots: [UInt: Int32] = [:]
    /// Slots released by a drain, for the next member to be given one.
    @exclusivity(unchecked) private var freeSlots: [Int32] = []
    /// The slots ever given out since the slots were last empty.
    @exclusivity(unchecked) private var slotEnd: Int32 = 0
    /// The member `slot(ofMember:)` found last, and its slot (address 0: none): a value set on one node
    /// walks the same path again and again, and finds each of its members here without hashing. Cleared
    /// when that member's slot is released.
    @exclusivity(unchecked) private var lastLookedUp: (address: UInt, slot: Int32) = (0, 0)

    /// The slot of the member at `address`, `nil` when it has none. One hashed look-up, none when it is the
    /// member found last.
    @inline(__always)
    func slot(ofMember address: UInt) -> Int? {
        if address == lastLookedUp.address { return Int(lastLookedUp.slot) }
        guard let slot = slots[address] else { return nil }
        lastLookedUp = (address, slot)
        return Int(slot)
    }

    /// The slot of the member at `address`, given one if it has none (its contribution the default in
    /// every total). The caller holds the node's lock too and knows `address` names a member.
    func slotAssigning(_ address: UInt) -> Int {
        if let slot = slot(ofMember: address) { return slot }
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slotEnd
            slotEnd += 1
        }
        slots[address] = slot
        lastLookedUp = (address, slot)
        return Int(slot)
    }

    /// Takes the slot of the member at `address` (which left) back, its contribution reset to the default
    /// in every total; nothing when it had none. Memory follows the slotted members: none left, none kept.
    func release(_ address: UInt) {
        guard let slot = slots.removeValue(forKey: address) else { return }
        if lastLookedUp.address == address { lastLookedUp = (0, 0) }
        for total in totals { total.set(Int(slot), to: nil) }
        freeSlots.append(slot)
        if slots.isEmpty {
            if slots.capacity > 64 { slots = [:] }
            freeSlots = []
            slotEnd = 0
            for total in totals { total.removeAll() }
        }
    }

    /// The total of the property `key` names, if a member contributed it, without a reference count: valid
    /// while the domain lock is held (this object holds the total, and totals are only ever added).
    @inline(__always)
    func unretainedTotal(for key: ObjectIdentifier) -> Unmanaged<PropertyTotalStorage>? {
        totals.withUnsafeBufferPointer { totals in
            for index in totals.indices where totals[index].key == key { return .passUnretained(totals[index]) }
            return nil
        }
    }

    /// The total of the property `key` names, if a member contributed it.
    func total(for key: ObjectIdentifier) -> PropertyTotalStorage? {
        unretainedTotal(for: key)?.takeUnretainedValue()
    }

    /// Adds the total a typed step made (Properties/PropertyPathStep.swift) when it found none for its
    /// property.
    func addTotal(_ total: PropertyTotalStorage) {
        assert(self.total(for: total.key) == nil, "one total per property")
        totals.append(total)
    }

    /// Replaces every property contribution of the member at `address` by `properties` (`nil`: none, the
    /// default in every total), creating the totals of properties no member contributed before. A member
    /// without a slot is given one only when it contributes something.
    func replaceProperties(ofMember address: UInt, by properties: PropertySummaries?) {
        guard let properties else {
            guard let slot = slot(ofMember: address) else { return }  // the default everywhere already
            for total in totals { total.set(slot, to: nil) }
            return
        }
        let slot = slotAssigning(address)
        for (key, property) in properties where total(for: key) == nil {
            totals.append(property.operations.makeTypedTotal())
        }
        for total in totals { total.set(slot, to: properties[total.key]?.summary) }
    }

    /// Replaces the member's contribution to the property `key` names by `property` (`nil`: the default),
    /// creating the property's total if no member contributed it before.
    func replaceProperty(_ key: ObjectIdentifier, ofMember address: UInt, by property: PropertySummary?) {
        guard let property else {
            guard let slot = slot(ofMember: address), let existing = total(for: key) else { return }
            existing.set(slot, to: nil)
            return
        }
        let slot = slotAssigning(address)
        if let existing = total(for: key) {
            existing.set(slot, to: property.summary)
        } else {
            let created = property.operations.makeTypedTotal()
            created.set(slot, to: property.summary)
            totals.append(created)
        }
    }
}

#if PROGRESSTREE_INTERNAL_CHECKS
extension PropertySums {
    /// The invariants of the slots (see the top of this file), one line each; empty when all hold:
    /// `slotted`, the members that `FileSums` marks as having a slot, each have one; every slot is one of
    /// theirs or of a member that left and is still `leaving` (pending); and the slots are distinct. Under
    /// the domain lock, for `ProgressNode.invariantViolations()` (Core/ProgressNode+Invariants.swift).
    func slotViolations(slotted: Set<UInt>, leaving: [UInt]) -> [String] {
        var violations: [String] = []
        let allowed = slotted.union(leaving)
        let strangers = slots.keys.filter { !allowed.contains($0) }.count
        if strangers > 0 { violations.append("\(strangers) property slots of nodes that are not members") }
        let missing = slotted.filter { slots[$0] == nil }.count
        if missing > 0 { violations.append("\(missing) members marked as slotted have no property slot") }
        let given = Set(slots.values)
        let free = Set(freeSlots)
        if given.count != slots.count { violations.append("two members share a property slot") }
        if !given.isDisjoint(with: free) || free.count != freeSlots.count {
            violations.append("a property slot is both given and free, or free twice")
        }
        if given.count + free.count != Int(slotEnd) || given.union(free).contains(where: { $0 < 0 || $0 >= slotEnd }) {
            violations.append("property slots given and free are not the \(slotEnd) slots given out")
        }
        if lastLookedUp.address != 0 && slots[lastLookedUp.address] != lastLookedUp.slot {
            violations.append("the property slot found last is stale")
        }
        return violations
    }
}
#endif
