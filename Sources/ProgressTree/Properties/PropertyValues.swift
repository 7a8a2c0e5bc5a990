// A node's own values of its properties (`node[Property.self] = value`): what the summary engine reduces
// into the node's summary (Summaries/). Kept under the node's lock (NodeState.swift: alone in its word, or in
// its extras); a node that never sets a value has none and pays nothing.

/// A node's own values of its properties, by property type, in the order they were first set: the first in
/// the object itself (one allocation of 80 bytes for a node's one value, the usual case), any others in an
/// array beside it. Found by a scan (a node holds one or two; a scan of one key is a compare). A property has
/// at most one entry.
///
/// Copied on write: a reader that reads it after the node's lock is released takes it lent
/// (`NodeState.lendPropertyValues()`, which sets `lent` under the lock; the summary engine lends it on
/// without a reference count, SummaryStep.swift), and a writer, under the lock, changes it in place only when
/// it was never lent and the node holds the one reference, and replaces it with a changed copy otherwise. So
/// an object a reader holds never changes, and the lock orders the reader's taking before the writer's
/// choice (a reference count dropped on another thread would not: the runtime's count is no ordering that
/// ThreadSanitizer sees). That is the proof behind `@unchecked Sendable`.
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

    // Without the dynamic exclusivity checks: the one writer changes an object only under the node's lock and
    // while nobody else holds it (above), so no two accesses to one object ever overlap.

    /// The entry of the first property set.
    @usableFromInline @exclusivity(unchecked) var first: Entry
    /// The entries of the others, in the order they were first set.
    @usableFromInline @exclusivity(unchecked) var others: [Entry] = []
    /// Whether a reader took it to read after the lock: it never changes again. Under the node's lock.
    @exclusivity(unchecked) var lent = false

    private init(first: Entry, others: [Entry]) {
        self.first = first
        self.others = others
    }

    /// The entries, in the order their properties were first set.
    var entries: [Entry] { [first] + others }

    /// The property of each entry, in that order, without making an array of them (the engine's steps).
    func forEachProperty(_ body: (PropertyType) -> Void) {
        body(first.type)
        for entry in others { body(entry.type) }
    }

    /// Whether it holds a value of the property `key` names.
    func contains(_ key: ObjectIdentifier) -> Bool {
        first.type.key == key || others.contains { $0.type.key == key }
    }

    /// The value of `Property`, `nil` when it has none.
    @inlinable
    func value<Property: ProgressProperty>(of _: Property.Type) -> Property.Value? {
        let key = ObjectIdentifier(Property.self)
        if first.type.key == key { return Self.cast(first.value, to: Property.Value.self) }
        for entry in others where entry.type.key == key { return Self.cast(entry.value, to: Property.Value.self) }
        return nil
    }

    /// `value` as a `Value`, `nil` when it is of another type. The value is opened from its box first (the
    /// argument is an existential): a cast from its own type to the same type is the runtime's quick case,
    /// where a cast from the box looks into it first (most of a summary's cost at a node with a value).
    @inlinable
    static func cast<Stored, Value>(_ value: Stored, to _: Value.Type) -> Value? { value as? Value }

    /// Stores `value` as the value of `property` in `values` (made if `nil`, copied first if anyone else holds
    /// it); returns the value it replaces, for the caller to release after the lock (its `deinit` may be user
    /// code). Under the node's lock.
    static func store(
        _ value: any Sendable, of property: any ProgressProperty.Type, in values: inout PropertyValues?
    ) -> (any Sendable)? {
        let entry = Entry(type: PropertyType(property), value: value)
        guard values != nil else {
            values = PropertyValues(first: entry, others: [])
            return nil
        }
        if values!.lent || !isKnownUniquelyReferenced(&values!) {
            values = PropertyValues(first: values!.first, others: values!.others)
        }
        return values!.store(entry)
    }

    /// Stores `entry`, in place of the entry of its property if there is one, whose value it returns.
    private func store(_ entry: Entry) -> (any Sendable)? {
        var replaced: any Sendable = entry.value
        if first.type.key == entry.type.key {
            swap(&replaced, &first.value)
            return replaced
        }
        for index in others.indices where others[index].type.key == entry.type.key {
            swap(&replaced, &others[index].value)
            return replaced
        }
        others.append(entry)
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
