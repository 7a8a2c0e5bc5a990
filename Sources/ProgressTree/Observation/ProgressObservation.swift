/// The token of an observation: it lasts until `invalidate()` is called or the token is released.
///
/// Thread-safe: `invalidate()` may be called from any thread, more than once, including from inside the
/// observation's own handler.
public final class ProgressObservation: Sendable {
    private let registration: any InvalidatableObservation

    init(_ registration: any InvalidatableObservation) {
        self.registration = registration
    }

    /// Ends the observation: once it returns, no new delivery starts. Called from outside a handler, it
    /// also waits for a handler of this observation that is already running; called from inside any
    /// observation handler, it does not wait (so two handlers invalidating each other cannot deadlock).
    public func invalidate() {
        registration.invalidate()
    }

    deinit {
        registration.invalidate()
    }
}

protocol InvalidatableObservation: Sendable {
    func invalidate()
}
