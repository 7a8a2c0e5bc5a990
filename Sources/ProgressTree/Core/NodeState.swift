/// The part of a node's state that changes with the shape of the tree, guarded by the node's lock.
///
/// The counts themselves live in atomics on the node so that updates never take this lock.
///
/// Nine bytes inside the lock, aligned to 4: one word for what most nodes never use, as an address in two
/// 32-bit halves, and the one-byte link. The lock (`Synchronization.Mutex`) puts its 4-byte word first and
/// this state at this state's alignment; with the address as a class reference (aligned to 8) that left 4
/// bytes of padding after the word. Aligned to 4, the lock takes 13 bytes, and the node packs its
/// `controlFlags` into the byte after it (see "What a node holds" in Docs/Architecture.md).
///
/// The word holds one of (objects are aligned to 16, so bit 0 is free for a tag):
/// - 0: nothing yet;
/// - a `NodeExtras`'s address (bit 0 clear): children, control state, observers, metadata, values;
/// - a `PropertyValues`'s address with bit 0 set: the node's property values, and nothing else, so that a
///   node that only sets a value pays for its values alone (a `NodeExtras` is a few hundred bytes).
/// The first write of anything but values turns the second into the first, the extras taking over the
/// values; the word never goes back. Either object is retained by this state (released in `deinit`).
///
/// The word is read and written only by this type's accessors, which lend what it holds without a reference
/// count. Contract: the object the word names is alive while this state is (it holds the reference), and
/// only the lock's holder reaches this state. Not copyable: it owns those references, and a copy would share
/// them outside the lock. Checked under PROGRESSTREE_INTERNAL_CHECKS: each object read from the word is a
/// live instance of the class its tag says (its first word is that class's metadata), and each value store
/// leaves one value a property (`PropertyValues` keys distinct).
struct NodeState: ~Copyable {
    /// The word (see above), in the bytes of two 32-bit halves, read and written as one unaligned word.
    private var extrasHalves: (UInt32, UInt32) = (0, 0)
    var link = ParentLink()

    /// Bit 0 of the word: it holds a `PropertyValues` alone.
    private static let valuesTag: UInt = 1

    /// The word, in one unaligned 8-byte load (halves composed by shifts cost three instructions more).
    private var word: UInt {
        @inline(__always) get { withUnsafeBytes(of: extrasHalves) { $0.loadUnaligned(as: UInt.self) } }
        set { withUnsafeMutableBytes(of: &extrasHalves) { $0.storeBytes(of: newValue, as: UInt.self) } }
    }

    /// The node's extras, `nil` until the first write of anything but values. The reference this state holds
    /// keeps it alive: read unretained, valid while the state is (it never replaces it).
    private var unmanagedExtras: Unmanaged<NodeExtras>? {
        @inline(__always) get {
            let bits = word
            guard bits & Self.valuesTag == 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
            Self.check(pointer, is: NodeExtras.self)
            return Unmanaged.fromOpaque(pointer)
        }
    }

    /// The values the word holds alone, `nil` when it holds something else.
    private var unmanagedValuesAlone: Unmanaged<PropertyValues>? {
        let bits = word
        guard bits & Self.valuesTag != 0 else { return nil }
        let pointer = UnsafeRawPointer(bitPattern: bits & ~Self.valuesTag).unsafelyUnwrapped
        Self.check(pointer, is: PropertyValues.self)
        return Unmanaged.fromOpaque(pointer)
    }

    /// Stops the process unless `pointer` is a live instance of `type` (PROGRESSTREE_INTERNAL_CHECKS).
    @inline(__always)
    private static func check(_ pointer: UnsafeRawPointer, is type: AnyClass) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        precondition(
            pointer.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(type)),
            "ProgressTree internal check failed: a node's state names no live \(type)")
        #endif
    }

    /// Runs `body` on the extras, if any, without a reference count: the reference this state holds keeps
    /// them alive for the call.
    @inline(__always)
    private func withExtras<Result>(_ body: (NodeExtras) -> Result) -> Result? {
        guard let extras = unmanagedExtras else { return nil }
        return extras._withUnsafeGuaranteedRef(body)
    }

    deinit {
        unmanagedExtras?.release()
        unmanagedValuesAlone?.release()
    }

    /// Whether children, control state, observers or metadata were ever written (otherwise all are the
    /// defaults).
    var hasExtras: Bool { unmanagedExtras != nil }

    /// The attached children (the strong references that keep them alive), but for the fresh children
    /// pushed onto the node's fresh stack (`ChildSums.freshChildren`) since the last look: read it only after
    /// `ProgressNode.settleFreshChildren(_:)`. Out of line, in `NodeExtras`: most nodes are leaves, and a
    /// leaf's table would be an empty array and a count in every node.
    var children: ChildTable {
        _read {
            if let extras = unmanagedExtras {
                // Unretained: this state's reference keeps the extras alive while the access lasts.
                unowned(unsafe) let borrowed = extras.takeUnretainedValue()
                yield borrowed.guarded.children
            } else {
                yield ChildTable()
            }
        }
        _modify { yield &guardedForWriting.children }
    }

    /// `children.isEmpty`, without making an empty table for a node without extras (a finishing leaf asks).
    var hasNoChildren: Bool { withExtras { $0.guarded.children.isEmpty } ?? true }

    var control: ControlState {
        get { withExtras { $0.guarded.control } ?? ControlState() }
        _modify { yield &guardedForWriting.control }
    }

    var observers: ObserverList {
        get { withExtras { $0.guarded.observers } ?? ObserverList() }
        _modify { yield &guardedForWriting.observers }
    }

    var metadata: Metadata {
        get { withExtras { $0.guarded.metadata } ?? Metadata() }
        _modify { yield &guardedForWriting.metadata }
    }

    /// What the file summary reads of the metadata (`ProgressNode.summaryParts`), `nil` when it describes no
    /// files: read in place, without a copy of the metadata (its dictionary's reference count).
    var fileMetadata: (isFile: Bool, counts: (total: Int?, completed: Int?)?)? {
        withExtras { extras in
            extras.guarded.metadata.describesFiles
                ? (extras.guarded.metadata.isFile, extras.guarded.metadata.fileCounts) : nil
        } ?? nil
    }

    /// The node's `ObservableProgress`, while someone holds it.
    var observable: ObservableProgress? {
        get { withExtras { $0.observable } ?? nil }
        set { extrasForWriting()._withUnsafeGuaranteedRef { $0.observable = newValue } }
    }

    /// This node's own values of its properties (Properties/PropertyValues.swift), `nil` when it set none.
    var propertyValues: PropertyValues? {
        if let alone = unmanagedValuesAlone { return alone.takeUnretainedValue() }
        return withExtras { $0.guarded.propertyValues } ?? nil
    }

    /// The node's values without a reference count, for the summary engine's parts (`SummaryParts`): valid
    /// while the node's lock is held, under which this state holds them and no writer replaces or changes
    /// them.
    var lentPropertyValues: Unmanaged<PropertyValues>? {
        if let alone = unmanagedValuesAlone { return alone }
        return withExtras { extras in extras.guarded.propertyValues.map { .passUnretained($0) } } ?? nil
    }

    /// The node's values, for a reader that reads them after the lock: marked lent, so that no writer
    /// changes them in place from now on (`PropertyValues`).
    func lendPropertyValues() -> PropertyValues? {
        let values = propertyValues
        values?.lent = true
        return values
    }

    /// Stores `value` as this node's value of `property`; returns the value it replaces (see
    /// `PropertyValues.store`). A node with nothing else keeps its values alone in the word.
    mutating func storePropertyValue(_ value: any Sendable, of property: any ProgressProperty.Type) -> (any Sendable)? {
        if let extras = unmanagedExtras {
            return extras._withUnsafeGuaranteedRef { extras in
                defer { Self.checkKeys(of: extras.guarded.propertyValues) }
                return PropertyValues.store(value, of: property, in: &extras.guarded.propertyValues)
            }
        }
        // The word's reference, taken for the store (which may replace the values), then given back.
        var values = takeValuesAlone()
        let replaced = PropertyValues.store(value, of: property, in: &values)
        Self.checkKeys(of: values)
        if let values { word = UInt(bitPattern: Unmanaged.passRetained(values).toOpaque()) | Self.valuesTag }
        return replaced
    }

    /// Stops the process if `values` holds two values of one property (PROGRESSTREE_INTERNAL_CHECKS).
    @inline(__always)
    private static func checkKeys(of values: PropertyValues?) {
        #if PROGRESSTREE_INTERNAL_CHECKS
        if let keys = values?.entries.map(\.type.key), Set(keys).count != keys.count {
            preconditionFailure("ProgressTree internal check failed: a node holds two values of one property")
        }
        #endif
    }

    /// The values the word holds alone, with the word's reference; the word is left empty.
    private mutating func takeValuesAlone() -> PropertyValues? {
        guard let alone = unmanagedValuesAlone else { return nil }
        word = 0
        return alone.takeRetainedValue()
    }

    /// The address of the parent that holds this node after it finished (see ProgressNode+HeldChildren.swift),
    /// 0 when none. Valid while it is read under this node's lock: a holder going away clears it there
    /// (`ProgressNode.orphan`) before its memory goes.
    var holderAddress: UInt {
        get { withExtras { $0.guarded.holderAddress } ?? 0 }
        set {
            if newValue == 0 && !hasExtras { return }
            extrasForWriting()._withUnsafeGuaranteedRef { $0.guarded.holderAddress = newValue }
        }
    }

    /// The weak link to the parent, where the runtime has no `swift_tryRetain` (see `NodeExtras`).
    var weakParent: ProgressNode? {
        get { withExtras { $0.parentReference } ?? nil }
        set { extrasForWriting()._withUnsafeGuaranteedRef { $0.parentReference = newValue } }
    }

    /// The fields of the extras, for a write (the extras are created by the first one): the one `_modify` the
    /// accessors of those fields reach them through, without a reference count.
    private var guardedForWriting: NodeExtras.Guarded {
        mutating get { extrasForWriting()._withUnsafeGuaranteedRef { $0.guarded } }
        _modify {
            unowned(unsafe) let extras = extrasForWriting().takeUnretainedValue()
            yield &extras.guarded
        }
    }

    /// The extras, created on the first write (taking over the values the word held alone, if any),
    /// unretained: this state's reference keeps them alive.
    private mutating func extrasForWriting() -> Unmanaged<NodeExtras> {
        if let extras = unmanagedExtras { return extras }
        let extras = NodeExtras()
        extras.guarded.propertyValues = takeValuesAlone()
        let created = Unmanaged.passRetained(extras)  // released in `deinit`
        word = UInt(bitPattern: created.toOpaque())
        return created
    }

    /// The state of a new node, attached to a parent or with none.
    init(attached: Bool, userInfo: [ProgressNode.UserInfoKey: any Sendable]?) {
        if attached { link.attach() }
        if let userInfo { metadata.replaceUserInfo(userInfo) }
    }
}
