import Foundation
import ProgressTree

extension ProgressNode {
    /// Whether a node made current on a thread is current for Foundation too, so that a
    /// `Foundation.Progress(totalUnitCount:)` created on that thread attaches to it with the pending count,
    /// as to a current NSProgress. `true` in a program that links this module, until you set it (set it
    /// once, early, for the whole process: `false` leaves Foundation's current progress alone and saves each
    /// scope the Foundation `Progress` it makes current).
    ///
    /// While it is `true`, `becomeCurrent(withPendingUnitCount:)` … `resignCurrent()`,
    /// `performAsCurrent(withPendingUnitCount:using:)` and the synchronous `withCurrent(pendingUnitCount:_:)`
    /// make a Foundation `Progress` current on their thread for their duration (`Progress.current()` returns
    /// it). The first `Progress` created in the scope through it — `Progress(totalUnitCount:)`,
    /// `Progress(parent: Progress.current())`, a `URLSessionTask` created there — claims the scope's
    /// pending count as the first `ProgressNode` created would, and is adopted by the node as by
    /// `addChild(_:withPendingUnitCount:)`. Only the first node or Progress created in a scope attaches.
    /// When the scope ends, the Progress is read once more on the scope's thread, so a Progress that
    /// finished in the scope is credited when the scope returns.
    ///
    /// The `async` `withCurrent(pendingUnitCount:_:)` never makes a Foundation `Progress` current:
    /// Foundation's current progress belongs to a thread, and a task leaves its thread at each `await`,
    /// where other tasks would find it current. Wrap the synchronous call that creates the Progress in a
    /// synchronous `withCurrent` (it runs on one thread), or adopt the Progress with `addChild`.
    ///
    /// A scope that began while it was `true` ends as it began, whatever it is set to meanwhile.
    ///
    /// Thread safety: any thread. Complexity: O(1); each scope then costs a Foundation `Progress` made
    /// current and resigned (a few microseconds).
    public static var adoptsImplicitFoundationChildren: Bool {
        get { ImplicitScope.companion != nil }
        set { ImplicitScope.companion = newValue ? ScopeProgress.companion : nil }
    }
}
