import ProgressTreePlatform

/// What runs beside each synchronous scope of implicit composition, on the scope's thread:
/// `becomeCurrent` … `resignCurrent`, `performAsCurrent`, and the synchronous `withCurrent`. Called with the
/// scope when it begins; the action it returns is called on the same thread when the scope ends, before an
/// unclaimed pending count is credited.
///
/// `package`: ProgressTreeFoundation provides one that makes a Foundation `Progress` current while a node
/// is, so that a `Progress(totalUnitCount:)` created on that thread claims the scope. The model knows
/// nothing of Foundation; without a companion a scope costs one uncontended lock more.
package typealias ThreadScopeCompanion = @Sendable (_ scope: ImplicitScope) -> (() -> Void)?

/// A type of another module of this package that provides the companion the scopes have when nobody chose
/// one: `ProgressTreeFoundation.FoundationScopeCompanion`, found by its name (the Swift runtime's type
/// records) the first time a scope begins, so that a program linking that module gets Foundation children
/// of current nodes without a call, as a program using NSProgress does. Swift runs no code when a module is
/// loaded, and executables do not export their symbols, so a lookup by name is the one way to find it.
package protocol ThreadScopeCompanionProvider {
    static var defaultCompanion: ThreadScopeCompanion { get }
}

extension ImplicitScope {
    /// The companion, once chosen (by a setter, or by the first lookup of the provider): `nil` until then,
    /// `.some(nil)` when none was. A `Lock`, not a bare `Mutex`: ThreadSanitizer sees its critical sections
    /// (threads beginning scopes at once read it; a bare futex made those reads look like races).
    private static let installed = Lock<ThreadScopeCompanion??>(nil)

    /// The name `ThreadScopeCompanionProvider` is looked up by.
    static let providerTypeName = "ProgressTreeFoundation.FoundationScopeCompanion"

    /// The companion of the scopes that begin from now on; `nil` for none. Until it is set, the provider's
    /// (if its module is in the program). A scope that already began ends with the companion it began with.
    package static var companion: ThreadScopeCompanion? {
        get { currentCompanion() }
        set { installed.withLock { $0 = .some(newValue) } }
    }

    private static func currentCompanion() -> ThreadScopeCompanion? {
        if let chosen = installed.withLock({ $0 }) { return chosen }
        // The lookup runs outside the lock (it scans the program's type records); the first choice stays.
        let provided = (typeLinked(named: providerTypeName) as? any ThreadScopeCompanionProvider.Type)?.defaultCompanion
        return installed.withLock { chosen in
            let companion = chosen ?? provided
            chosen = .some(companion)
            return companion
        }
    }

    /// Forgets the companion chosen, so that the next scope looks the provider up again: for tests of what a
    /// program that never chose one gets.
    package static func forgetCompanionChoice() {
        installed.withLock { $0 = nil }
    }

    /// Tells the companion, if any, that `scope` begins on this thread; returns what to call when it ends.
    static func beginCompanion(of scope: ImplicitScope) -> (() -> Void)? {
        guard let companion = currentCompanion() else { return nil }
        return companion(scope)
    }
}
