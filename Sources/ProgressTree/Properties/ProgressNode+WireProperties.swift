// A node's own values of the properties that cross the wire format (`WireProgressProperty`), read for a
// line (`wireRecord`) and for the plain log: the node's values are copied under its lock, and encoded after
// it (`progressWireValue` is user code, which never runs under a lock of the tree). Which properties cross is
// told by a dynamic cast of each value's property type to `WireProgressProperty`.

extension ProgressNode {
    /// This node's own values of its `WireProgressProperty` properties, by wire name, and how many it set
    /// that cannot cross (a value that is not crossable, or an empty name): left out and counted.
    ///
    /// - Complexity: O(the properties set on this node); takes this node's lock once.
    package func wireProperties() -> (values: [String: ProgressWireValue], skipped: Int) {
        guard let values = ownPropertyValues() else { return ([:], 0) }
        var encoded: [String: ProgressWireValue] = [:]
        var skipped = 0
        for entry in values.entries {
            guard let property = entry.property as? any WireProgressProperty.Type else { continue }
            let name = property.wireName
            if !name.isEmpty, let wire = Self.wireValue(of: entry.value, as: property) {
                encoded[name] = wire
            } else {
                skipped += 1
            }
        }
        return (encoded, skipped)
    }

    /// `value`'s `progressWireValue`, as a value of `property`, if it can cross (`isCrossable`).
    private static func wireValue<Property: WireProgressProperty>(
        of value: any Sendable, as _: Property.Type
    ) -> ProgressWireValue? {
        guard let wire = (value as? Property.Value)?.progressWireValue, wire.isCrossable else { return nil }
        return wire
    }
}
