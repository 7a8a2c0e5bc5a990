import Synchronization

/// What runs beside each synchronous scope of implicit composition, on the scope's thread:
/// `becomeCurrent` … `resignCurrent`, `performAsCurrent`, and the synchronous `withCurrent`. Called with the
/// scope when it begins; the action it returns is called on the same thread when the scope ends, before an
/// unclaimed pending count is credited.
///
/// `package`: ProgressTreeFoundation installs one to make a Foundation `Progress` current while a node is,
/// so that a `Progress(totalUnitCount:)` created on that thread claims the scope. The model knows nothing
/// of Foundation; without a companion (the default) a scope costs one uncontended lock more.
package typealias ThreadScopeCompanion = @Sendable (_ scope: ImplicitScope) -> (() -> Void)?

extension ImplicitScope {
    private static let installedCompanion = Mutex<ThreadScopeCompanion?>(nil)

    /// The companion of the scopes that begin from now on; `nil` for none. A scope that already began
    /// ends with the companion it began with.
    package static var companion: ThreadScopeCompanion? {
        get { installedCompanion.withLock { $0 } }
        set { installedCompanion.withLock { $0 = newValue } }
    }

    /// Tells the companion, if any, that `scope` begins on this thread; returns what to call when it ends.
    static func beginCompanion(of scope: ImplicitScope) -> (() -> Void)? {
        guard let companion = installedCompanion.withLock({ $0 }) else { return nil }
        return companion(scope)
    }
}
