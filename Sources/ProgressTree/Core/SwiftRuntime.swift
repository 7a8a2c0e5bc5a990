import ProgressTreePlatform

// Every use of the Swift runtime's entry points is in this file, and the standard library's underscored
// functions the core calls are named here, each with what it buys and what runs without it. A toolchain
// that drops one may cost speed, never correctness, and never a trap.
//
// What each buys, in instructions per operation (`Benchmarks/instructions.sh`, callgrind, release build,
// Swift 6.3.1 on Linux x86_64), against the public path put in its place:
//
// | entry point                | public path in its place      | clean read, 8 deep | a child's life cycle |
// |----------------------------|-------------------------------|--------------------|----------------------|
// | all in use                 |                               | 27                 | 985                  |
// | `_withUnsafeGuaranteedRef` | `body(takeUnretainedValue())` | 77                 | 1,025                |
// | `swift_tryRetain` and      | a weak link from each child   | 27                 | 2,455                |
// | `swift_nonatomic_retain`   | to its parent; a retain       |                    |                      |
//
// (`advance(by:)`, 20 instructions, uses none of them.) `_typeByName` buys no speed: it finds
// ProgressTreeFoundation's companion of scopes without a call by the program (see `typeLinked(named:)`).
//
// `_withUnsafeGuaranteedRef` (an inlinable function of the standard library, so never missing at run time)
// is the one entry point not wrapped here: it is called only inside the handles that lend an object without
// a reference count, each accessor naming what it reads (`UnownedNode`, `UnownedDomain`,
// `DomainAndParentPart` and `UnownedSums`, `NodeState`; the summary engine's `ColumnReference` and
// `_ProgressTreeColumnStep`). A generic wrapper (`Unmanaged.withUnretained`, calling it) compiled to the same
// instructions on most paths but let the optimizer retain and release a `ChildSums` inside
// `withRepresentativeLockIfAvailable` and `retire`: a wide tree's updates and reads (scenario 11, 100,000
// children) took 173-177 ms instead of 164-166 ms (AMD EPYC, `compare.sh --only 11`).

// `swift_tryRetain` and `swift_nonatomic_retain` are looked up by name in the running process (`dlsym`):
// Swift reserves their names for its runtime, so they are not declared with `@_silgen_name`. A program
// linked statically without exporting the runtime's symbols, or a runtime that renames them, gets the
// public paths, whose tests run the model-based sequences without them (RuntimeFallbackTests).

/// The Swift runtime's entry points that the core uses, found once per process.
enum SwiftRuntime {
    /// `HeapObject *swift_tryRetain(HeapObject *)`: retains the object and returns it, or returns null
    /// without retaining when its `deinit` has begun. Exported by the runtime of every platform (its
    /// `unowned` and Objective-C interoperability use it).
    typealias TryRetain = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
    /// `HeapObject *swift_nonatomic_retain(HeapObject *)`.
    typealias NonatomicRetain = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?

    struct EntryPoints: Sendable {
        var tryRetain: TryRetain?
        var nonatomicRetain: NonatomicRetain?
    }

    /// Looked up at the first use; one global access gives both (each access of a global checks that it
    /// is initialized). `usePublicFallbacks()` can replace them before any node exists.
    nonisolated(unsafe) static var entryPoints = EntryPoints(
        tryRetain: ProcessSymbols.address(of: "swift_tryRetain").map { unsafeBitCast($0, to: TryRetain.self) },
        nonatomicRetain: ProcessSymbols.address(of: "swift_nonatomic_retain").map {
            unsafeBitCast($0, to: NonatomicRetain.self)
        })

    /// `swift_tryRetain`, or `nil` where the runtime does not export it: then each attached node keeps a
    /// weak reference to its parent (`NodeState.weakParent`), and `retainNode(at:weakLink:)` loads it.
    @inline(__always)
    static var tryRetain: TryRetain? { entryPoints.tryRetain }

    /// For the tests of the public paths: forgets both entry points, as a runtime without them would have
    /// it. Only before the process creates its first node (a node attached before has no weak link to its
    /// parent), and before any other thread runs.
    package static func usePublicFallbacks() {
        entryPoints = EntryPoints()
    }

    /// Whether the entry points are in use (`false` after `usePublicFallbacks()` or on a runtime without
    /// them).
    package static var usesEntryPoints: Bool { entryPoints.tryRetain != nil }
}

/// Retains the node at `address` (a parent or a holder) unless its `deinit` has begun, and returns it (the
/// caller owns the reference: `takeRetained()`), for code holding the lock of a node below it: under that lock the address is either 0 or the node's memory
/// is allocated, because a node going away clears the addresses of its children under their locks before
/// its memory goes (`ProgressNode.orphan`). `link` is that child's weak reference to the same node, which
/// exists only where the runtime has no `swift_tryRetain` (`NodeState.weakParent`).
@inline(__always)
func retainNode(at address: UInt, weakLink link: @autoclosure () -> ProgressNode?) -> UnownedNode? {
    guard let pointer = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
    if let tryRetain = SwiftRuntime.tryRetain { return tryRetain(pointer) == nil ? nil : UnownedNode(address: address) }
    // A weak load is the language's own "retain unless deinit has begun".
    guard let node = link(), UnownedNode(node).address == address else { return nil }
    let retained = UnownedNode(node)
    retained.retain()
    return retained
}

/// Retains `child`, which no other thread can reach yet (it is in its initializer and not published), for
/// `parent`'s stack of fresh children, with the runtime's non-atomic `swift_nonatomic_retain`: no other
/// thread reads or writes its reference count until the push that publishes it, which orders this retain
/// before any other thread's access. Where the runtime has no `swift_tryRetain`, also gives the child its weak
/// link to `parent` (`NodeState.weakParent`), under its lock, which nobody else can take yet.
@inline(__always)
func retainUnpublished(_ child: UnownedNode, childOf parent: ProgressNode) {
    let entryPoints = SwiftRuntime.entryPoints
    if entryPoints.tryRetain == nil { linkWeakly(child, to: parent) }
    guard let retain = entryPoints.nonatomicRetain else { return child.retain() }
    _ = retain(UnsafeMutableRawPointer(bitPattern: child.address).unsafelyUnwrapped)
}

/// The public path of `retainUnpublished`: out of line, so that the usual path stays small.
@inline(never)
private func linkWeakly(_ child: UnownedNode, to parent: ProgressNode) {
    child.node.state.withLock { $0.weakParent = parent }
}

/// The type named `name` (a module-qualified name) if the program links it: the standard library's
/// `_typeByName` (underscored: public, not yet stable). Finds `ProgressTreeFoundation`'s companion of
/// scopes (see `ThreadScopeCompanionProvider`). Where it finds nothing, scopes have no companion until the
/// program sets `ProgressNode.adoptsImplicitFoundationChildren = true` (ProgressTreeFoundation): until then
/// a `Foundation.Progress` created inside a node's scope does not join the node.
func typeLinked(named name: String) -> Any.Type? {
    _typeByName(name)
}
