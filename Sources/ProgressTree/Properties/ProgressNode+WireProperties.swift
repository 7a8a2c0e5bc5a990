// A node's own values of the properties that cross the wire format (`WireProgressProperty`), read for a
// line (`wireRecord`) and for the plain log.
//
// The one place that reads the property store for the wire: the node's entries are copied under its lock,
// and the values encoded after it (`progressWireValue` is user code, which never runs under a lock of the
// tree). Which properties cross is told by the store's type-erased operations: `PropertyOperationsOf<P>`
// conforms to `WirePropertyOperations` exactly when `P` is a `WireProgressProperty`, a conformance checked
// by a dynamic cast.

/// The wire's operations of a property, reached without its type (see the top of this file).
protocol WirePropertyOperations {
    /// `WireProgressProperty.wireName`.
    static var wireName: String { get }
    /// The value's `progressWireValue` if it can cross (`isCrossable`), else `nil`.
    static func wireValue(of value: any Sendable) -> ProgressWireValue?
}

extension PropertyOperationsOf: WirePropertyOperations where Property: WireProgressProperty {
    static var wireName: String { Property.wireName }

    static func wireValue(of value: any Sendable) -> ProgressWireValue? {
        guard let value = value as? Property.Value, let wire = value.progressWireValue, wire.isCrossable else {
            return nil
        }
        return wire
    }
}

extension ProgressNode {
    /// This node's own values of its `WireProgressProperty` properties, by wire name, and how many it set
    /// that cannot cross (a value that is not crossable, or an empty name): left out and counted. Empty
    /// (and nothing read) until some property was set in the process.
    ///
    /// - Complexity: O(the properties set on this node); takes this node's lock once.
    package func wireProperties() -> (values: [String: ProgressWireValue], skipped: Int) {
        guard PropertyGate.anySet else { return ([:], 0) }
        guard let entries = state.withLock({ $0.propertyEntries }) else { return ([:], 0) }
        var values: [String: ProgressWireValue] = [:]
        var skipped = 0
        for (_, entry) in entries {
            guard let value = entry.value, let wire = entry.operations as? any WirePropertyOperations.Type else {
                continue
            }
            let name = wire.wireName
            if !name.isEmpty, let encoded = wire.wireValue(of: value) {
                values[name] = encoded
            } else {
                skipped += 1
            }
        }
        return (values, skipped)
    }
}
