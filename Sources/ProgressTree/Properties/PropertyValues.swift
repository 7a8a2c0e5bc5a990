// A node's own values of its properties (`node[Property.self] = value`): what the summary engine reduces
// into the node's summary (Summaries/). Kept in the node's extras, under the node's lock; a node that never
// sets a value has none and pays nothing.

/// A node's own values of its properties, by property type: a few entries in an array, in the order they
/// were first set, found by a scan (a node holds one or two; a scan of one key is a compare). A property has
/// at most one entry.
///
/// A class, copied on write: a reader takes a reference under the node's lock and reads it afterwards (the
/// summary engine lends it on without a reference count, SummaryStep.swift), while a writer, under the lock,
/// changes it in place only when the node holds the one reference (`isKnownUniquelyReferenced`) and replaces
/// it with a changed copy otherwise. So a box a reader holds never changes: that is the proof behind
/// `@unchecked Sendable`.
@usableFromInline
final class PropertyValues: @unchecked Sendable {
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let type: PropertyType
        /// A `type.property.Value`.
        @usableFromInline var value: any Sendable

        /// The property.
        @inlinable var property: any ProgressProperty.Type { type.property }
    }

    @usableFromInline private(set) var entries: [Entry]

    private init(entries: [Entry]) { self.entries = entries }

    /// The value of `Property`, `nil` when it has none.
    @inlinable
    func value<Property: ProgressProperty>(of _: Property.Type) -> Property.Value? {
        let key = ObjectIdentifier(Property.self)
        for entry in entries where entry.type.key == key { return entry.value as? Property.Value }
        return nil
    }

    /// Stores `value` as the value of `property` in `values` (made if `nil`, copied first if anyone else holds
    /// it); returns the value it replaces, for the caller to release after the lock (its `deinit` may be user
    /// code). Under the node's lock.
    static func store(
        _ value: any Sendable, of property: any ProgressProperty.Type, in values: inout PropertyValues?
    ) -> (any Sendable)? {
        if values == nil {
            values = PropertyValues(entries: [])
        } else if !isKnownUniquelyReferenced(&values!) {
            values = PropertyValues(entries: values!.entries)
        }
        return values!.store(value, of: property)
    }

    private func store(_ value: any Sendable, of property: any ProgressProperty.Type) -> (any Sendable)? {
        let key = ObjectIdentifier(property)
        for index in entries.indices where entries[index].type.key == key {
            var replaced: any Sendable = value
            swap(&replaced, &entries[index].value)
            return replaced
        }
        entries.append(Entry(type: PropertyType(property), value: value))
        return nil
    }
}

/// A property type as the engine keeps it: the metatype, whose witnesses the engine calls, and its key.
///
/// `@unchecked Sendable`: a metatype is a reference to immutable type metadata, safe to share between threads
/// but for one case Swift 6.2 names (`SendableMetatype`, SE-0470): a conformance isolated to an actor, whose
/// witnesses may run only there. `ProgressProperty` rules that out in its documentation (its functions are
/// called from any thread); the package builds with Swift 6.0, which cannot spell the constraint.
@usableFromInline
struct PropertyType: @unchecked Sendable {
    @usableFromInline let property: any ProgressProperty.Type
    /// `ObjectIdentifier(property)`.
    @usableFromInline let key: ObjectIdentifier

    init(_ property: any ProgressProperty.Type) {
        self.property = property
        key = ObjectIdentifier(property)
    }
}
