import ProgressTree

/// A property a mount sets on its mirrored nodes (`ProgressMount.Options.properties`), reached by its wire
/// name without its type.
struct MountedProperty: Sendable {
    /// Sets the node's value from a line's value, or to the default for none; `false` (and nothing set)
    /// when the value does not read as the property's `Value`.
    let set: @Sendable (ProgressWireValue?, ProgressNode) -> Bool

    init<Property: WireProgressProperty>(_ property: Property.Type) {
        set = { value, node in
            guard let value else {
                node[Property.self] = Property.defaultValue
                return true
            }
            guard let typed = Property.Value(progressWireValue: value) else { return false }
            node[Property.self] = typed
            return true
        }
    }

    /// Sets `value` (the default for `nil`) on `node`; `false` when it does not read as the property's value.
    func set(_ value: ProgressWireValue?, on node: ProgressNode) -> Bool {
        set(value, node)
    }
}
