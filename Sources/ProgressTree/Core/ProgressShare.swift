/// Some of a node's units, handed to a function that reports its own progress for them: the function turns
/// the share into its own node, a child of the node the share was made from, exactly once.
///
/// A function that takes a share needs neither a parent node nor a current one (`becomeCurrent`,
/// `withCurrent`): the caller decides how much of its work the call stands for, the function how it
/// counts that work.
///
/// ```swift
/// func importPhoto(_ name: String, progress: consuming ProgressShare?) {
///     let node = progress?.start(totalUnitCount: 2) ?? .discreteProgress(totalUnitCount: 2)
///     node.advance()  // downloaded
///     node.advance()  // filtered
/// }
///
/// let album = ProgressNode(totalUnitCount: 3)
/// importPhoto("a.jpg", progress: album.share(pendingUnitCount: 1))
/// importPhoto("b.jpg", progress: album.share(pendingUnitCount: 1))
/// importPhoto("c.jpg", progress: nil)  // reports to no one
/// print(album.completedUnitCount)      // 2
/// ```
///
/// The rules:
/// - `start(totalUnitCount:)` consumes the share: a second `start`, or any use after it, does not compile.
///   The node it returns is attached to the share's node for the share's units, as
///   `ProgressNode(totalUnitCount:parent:pendingUnitCount:)` attaches it, whatever node is current
///   where it is called.
/// - A share that is dropped unstarted (its function returned or threw without starting it, or it was
///   never handed on) credits its units to its node at once, as a child that finished would, and as a
///   `withCurrent` scope in which no node attached does. To leave the units not done (the work was
///   cancelled or failed), start the share and cancel or fail the node it returns. A started node that is
///   dropped unfinished credits nothing, like any child.
/// - While a share is outstanding (made, and neither started nor dropped), its units count as not done:
///   the node's `fractionCompleted` is what it would be with a child at 0 for those units, and its
///   `completedUnitCount` does not include them. The share is not a child: the node does not list it in
///   `children`, and a share does not claim a current node's pending count.
/// - The node started from a share of a cancelled or paused node (cancelled or paused when the share was
///   made or since) starts cancelled or paused, as a child added to that node would; one of a failed node
///   starts cancelled.
/// - A share keeps its node alive until it is started or dropped, so its units always reach that node.
///
/// A share is `Sendable`, checked by the compiler: it is made of a node (a `Sendable` class) and a count.
/// It can be started or dropped on any thread or task, and sent across isolation domains by anything that
/// moves a value (a parameter of an actor's method, a mutex's value). Swift 6 cannot move a non-copyable
/// value into an escaping closure, such as a `Task`'s or a task group's: make the share inside the closure
/// (`group.addTask { await importPhoto(name, progress: album.share(pendingUnitCount: 1)) }`), or start it
/// and hand the task the node.
///
/// - Complexity: Making a share retains its node: no allocation, no lock. Starting it is creating the child
///   (`init(totalUnitCount:parent:pendingUnitCount:)`); dropping it is `advance(by:)` on its node.
public struct ProgressShare: ~Copyable, Sendable {
    /// The node the units are shared from. `nil` only from `start` taking it to the end of the consumed
    /// share, which no other code sees: `deinit` then credits nothing.
    private var node: ProgressNode?
    /// The node's units this share stands for, not negative.
    private let pendingUnitCount: Int64

    fileprivate init(node: ProgressNode, pendingUnitCount: Int64) {
        self.node = node
        self.pendingUnitCount = pendingUnitCount
    }

    /// Turns the share into a node for `totalUnitCount` units of the caller's own, attached to the share's
    /// node where it stands for the share's units; consumes the share.
    ///
    /// The node is a child like one made with `init(totalUnitCount:parent:pendingUnitCount:)`: its
    /// progress counts in its parent's `fractionCompleted` weighted by the share's units, and when it
    /// finishes, those units are credited to the parent's `completedUnitCount` and the parent lets it go.
    /// It starts cancelled or paused when the share's node is (see the type's rules).
    ///
    /// - Parameter totalUnitCount: the work of the function that started the share, in its own units (any
    ///   value, as `totalUnitCount`: a negative one makes the node indeterminate).
    /// - Returns: the new node.
    /// - Complexity: O(1), that initializer's: no lock.
    public consuming func start(totalUnitCount: Int64) -> ProgressNode {
        ProgressNode(totalUnitCount: totalUnitCount, parent: node.take()!, pendingUnitCount: pendingUnitCount)
    }

    /// A share dropped unstarted credits its units to its node, as a child that finished would
    /// (`advance(by:)`: atomic, safe on any thread).
    deinit {
        node?.advance(by: pendingUnitCount)
    }
}

extension ProgressNode {
    /// Makes a share of `pendingUnitCount` of this node's units, for a function that reports its own
    /// progress for them: it calls `start(totalUnitCount:)` once to get its node, a child of this one
    /// standing for those units; a share it drops unstarted credits them (see `ProgressShare`).
    ///
    /// The units count as not done until the share is started and its node finishes, or the share is
    /// dropped: meanwhile, this node's fraction is what it would be with a child at 0 for them. As with
    /// `addChild(_:withPendingUnitCount:)`, nothing checks that the units are still free: shares and
    /// children that stand for more than this node's total clamp its fraction at 1 (see Composition,
    /// "Re-weighting when totals change"). A share of 0 units is allowed (its node weighs nothing), and so is
    /// a share of a finished node (its units count on top, as a child added to it would). Making a share
    /// does not claim a pending count this node has as the current node.
    ///
    /// - Precondition: `pendingUnitCount` is not negative.
    /// - Complexity: O(1): a retain of this node, no allocation, no lock.
    public func share(pendingUnitCount: Int64) -> ProgressShare {
        Self.checkPendingUnitCount(pendingUnitCount, in: "share(pendingUnitCount:)")
        return ProgressShare(node: self, pendingUnitCount: pendingUnitCount)
    }
}
