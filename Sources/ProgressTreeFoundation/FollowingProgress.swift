import Dispatch
import Foundation
import ProgressTree
import Synchronization

/// A `Foundation.Progress` that follows a node: what `ProgressNode.foundationProgress` hands out.
///
/// - Reads go to the node where Foundation lets a subclass answer: the counts, `isFinished`,
///   `isIndeterminate`, the descriptions, `kind`, `userInfo` (and `fractionCompleted` on Apple platforms).
/// - Foundation's own storage (its `fractionCompleted` on Linux, what a Foundation parent sees of it, and
///   `isCancelled`, `isPaused`) is written by an observation of the node's `snapshot`, delivered on a
///   queue of its own: one delivery per burst of the node's updates. The node's partial work in children
///   is a hidden Foundation child (`FoundationChildrenShare`), so the fraction includes it.
/// - Writes and calls go to the node: the counts, `kind`, the Foundation `userInfo` keys it knows,
///   `cancel()`, `pause()`, `resume()`, `addChild` (adopted as by `ProgressNode.addChild`), and
///   `becomeCurrent` (a `Progress(totalUnitCount:)` created then is adopted by the node).
///
/// The observation lives as long as this object: the node pays for it only while someone holds it.
///
/// `@unchecked Sendable` restates Foundation's conformance (its `Progress` is `@unchecked Sendable`);
/// what this subclass adds is `Sendable` itself: a `let` node, an `Atomic` and `Mutex`es.
final class FollowingProgress: Progress, @unchecked Sendable {
    let node: ProgressNode
    /// `false` while Foundation's initializer runs: its writes (`isCancellable = false`, …) stay Foundation's.
    private let isReady = Atomic<Bool>(false)
    private let observation = Mutex<ProgressObservation?>(nil)
    /// What the deliveries keep between them (they run one at a time, on `updates`).
    private let share = Mutex(FoundationChildrenShare())

    // What Apple platforms' `Progress` lets a subclass do beyond swift-corelibs-foundation's is in
    // FollowingProgress+KeyValueObservation.swift; here, only what an extension cannot hold.
    #if canImport(ObjectiveC)
    /// This progress's own states, observed (`observeOwnStates()`).
    let ownObservations = Mutex<[NSKeyValueObservation]>([])
    #else
    // Read-only in swift-corelibs-foundation (settable on Apple platforms, and overridden so there).
    override var localizedDescription: String! { node.localizedDescription }
    override var localizedAdditionalDescription: String! { node.localizedAdditionalDescription }
    #endif

    init(following node: ProgressNode) {
        self.node = node
        super.init(parent: nil, userInfo: nil)
        super.isCancellable = node.isCancellable
        super.isPausable = node.isPausable
        isReady.store(true, ordering: .sequentiallyConsistent)
        apply(node.snapshot)
        let updates = DispatchQueue(label: "ProgressTreeFoundation.FollowingProgress", target: .global())
        let token = node.observe(\.snapshot, on: updates) { [weak self] _, change in self?.apply(change.newValue) }
        observation.withLock { $0 = token }
        #if canImport(ObjectiveC)
        observeOwnStates()
        #endif
    }

    deinit {
        observation.withLock { $0 }?.invalidate()
        FollowingProgress.forget(self)
    }

    /// Whether Foundation's initializer has returned: from then on, writes go to the node.
    var ready: Bool { isReady.load(ordering: .sequentiallyConsistent) }

    // MARK: The node's state into Foundation's

    /// Writes `snapshot` into Foundation's storage: the children's share, then the counts (never through
    /// a finished state they do not have), then cancelled (also for failed: Foundation has no failure) and
    /// paused. Once the counts stored are finished they stay: Foundation credits a parent again for every
    /// update of a finished child, and finishing is permanent for the node's parent too.
    private func apply(_ snapshot: ProgressNode.Snapshot) {
        let (completed, total) = (snapshot.completedUnitCount, snapshot.totalUnitCount)
        if !ProgressReading.isFinished(completed: super.completedUnitCount, total: super.totalUnitCount) {
            let reading = ProgressReading(completed: completed, total: total, fraction: snapshot.fractionCompleted)
            share.withLock {
                $0.update(reading.childrenShare, total: total) { super.addChild($0, withPendingUnitCount: $1) }
            }
            storeCounts(completed: completed, total: total)
        }
        if (snapshot.isCancelled || snapshot.isFailed) && !super.isCancelled {
            super.cancel()
        } else if snapshot.isPaused && !super.isPaused {
            super.pause()
        } else if !snapshot.isPaused && super.isPaused && !super.isCancelled {
            super.resume()
        }
    }

    private func storeCounts(completed: Int64, total: Int64) {
        ProgressReading.writeCounts(
            completed: completed, total: total, over: (super.completedUnitCount, super.totalUnitCount),
            setCompleted: { super.completedUnitCount = $0 }, setTotal: { super.totalUnitCount = $0 })
    }

    // MARK: Reads from the node

    override var totalUnitCount: Int64 {
        get { node.totalUnitCount }
        set { if ready { node.totalUnitCount = newValue } else { super.totalUnitCount = newValue } }
    }

    override var completedUnitCount: Int64 {
        get { node.completedUnitCount }
        set { if ready { node.completedUnitCount = newValue } else { super.completedUnitCount = newValue } }
    }

    override var isFinished: Bool { node.isFinished }
    override var isIndeterminate: Bool { node.isIndeterminate }

    override var kind: ProgressKind? {
        get { node.kind.map { ProgressKind(rawValue: $0.rawValue) } }
        set {
            if ready {
                node.kind = newValue.map { ProgressNode.Kind(rawValue: $0.rawValue) }
            } else {
                super.kind = newValue
            }
        }
    }

    /// Foundation's own entries, and the node's over them.
    override var userInfo: [Foundation.ProgressUserInfoKey: Any] {
        super.userInfo.merging(CarriedMetadata.foundationUserInfo(node.userInfo)) { _, nodes in nodes }
    }

    /// Kept by Foundation; the keys a node knows (file operation, URL, counts, throughput, time remaining)
    /// go to the node too.
    override func setUserInfoObject(_ objectOrNil: Any?, forKey key: Foundation.ProgressUserInfoKey) {
        super.setUserInfoObject(objectOrNil, forKey: key)
        guard ready else { return }
        let nodeKey = ProgressNode.UserInfoKey(rawValue: key.rawValue)
        if let objectOrNil {
            if let value = CarriedMetadata.nodeValue(objectOrNil, forKey: key) {
                node.setUserInfoObject(value, forKey: nodeKey)
            }
        } else {
            node.setUserInfoObject(nil, forKey: nodeKey)
        }
    }

    // MARK: Calls to the node

    override func cancel() {
        super.cancel()
        if ready { node.cancel() }
    }

    override func pause() {
        super.pause()
        if ready { node.pause() }
    }

    override func resume() {
        super.resume()
        if ready { node.resume() }
    }

    /// Adopted by the node, as by `ProgressNode.addChild(_:withPendingUnitCount:)`.
    override func addChild(_ child: Progress, withPendingUnitCount inUnitCount: Int64) {
        node.addChild(child, withPendingUnitCount: inUnitCount)
    }

    /// Current for Foundation on this thread for `unitCount` of the node's units: the first
    /// `Progress(totalUnitCount:)` created on this thread before `resignCurrent()` is adopted by the node
    /// with them; if none is, they are credited to the node when the scope ends. (A `ProgressNode` created
    /// meanwhile does not attach: the node is current for Foundation only.)
    @available(*, noasync)
    override func becomeCurrent(withPendingUnitCount unitCount: Int64) {
        _ = ScopeProgress.becomeCurrent(for: ImplicitScope(node: node, pendingUnitCount: unitCount))
    }

    @available(*, noasync)
    override func resignCurrent() {
        guard let current = Progress.current() as? ScopeProgress, current.scope.node === node else {
            preconditionFailure("resignCurrent(): this Progress is not the current progress of this thread")
        }
        current.end()
        current.scope.end()
    }
}
