#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// The Swift runtime's `swift_tryRetain`: retains `object` and returns `true`, or returns `false` without
/// retaining when the object's `deinit` has begun. `object` must point to allocated memory (for a parent:
/// inside a walk, see `ProgressNode.parentAddress`).
///
/// The runtime exports it on every platform (its `unowned` and Objective-C interoperability machinery use
/// it) as `HeapObject *swift_tryRetain(HeapObject *)`: the object when retained, null when not (the runtimes
/// of the platforms this package supports, Swift 5.9 and later). Swift reserves the name for its runtime,
/// so it is looked up once in the running process instead of being declared with `@_silgen_name`.
func swiftTryRetain(_ object: UnsafeMutableRawPointer) -> Bool {
    SwiftRuntime.tryRetain(object) != nil
}

/// Retains `node`, which no other thread can reach yet (it is in its initializer and not published), with
/// the runtime's non-atomic `swift_nonatomic_retain`: no other thread reads or writes its reference count
/// until the store that publishes it, which a lock release (or any release) orders after this one. Falls
/// back to an ordinary retain where the runtime does not export it.
func retainUnpublished(_ node: Unmanaged<ProgressNode>) -> Unmanaged<ProgressNode> {
    guard let retain = SwiftRuntime.nonatomicRetain else { return node.retain() }
    _ = retain(node.toOpaque())
    return node
}

private enum SwiftRuntime {
    static let tryRetain: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = {
        guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "swift_tryRetain") else {
            preconditionFailure("ProgressTree: the Swift runtime does not export swift_tryRetain")
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    }()

    /// `HeapObject *swift_nonatomic_retain(HeapObject *)`, if the runtime exports it.
    static let nonatomicRetain: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?)? = {
        guard let process = dlopen(nil, RTLD_LAZY), let symbol = dlsym(process, "swift_nonatomic_retain") else {
            return nil
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    }()
}
