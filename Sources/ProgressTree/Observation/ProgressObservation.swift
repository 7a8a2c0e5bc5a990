/// The token of an observation: it lasts until `invalidate()` is called or the token is released.
///
/// Thread-safe: `invalidate()` may be called from any thread, more than once, including from inside the
/// observation's own handler.
public final class ProgressObservation: Sendable {
    private let registration: any InvalidatableObservation

    init(_ registration: any InvalidatableObservation) {
        self.registration = registration
    }

    /// Ends the observation: once it returns, no new delivery starts, and a handler of this observation
    /// that was already running has returned — except in the two cases where waiting for it could never
    /// end, where it returns at once and that handler finishes afterwards:
    /// - called from inside this observation's own handler;
    /// - called from a handler (of an observation or a `LabelPacer`) that the running handler is itself
    ///   waiting for, as when two handlers invalidate each other: the second of the two calls returns at
    ///   once, the first waits until that handler has returned.
    public func invalidate() {
        registration.invalidate()
    }

    /// Takes the observation off its node, so that changes stop signalling it, without closing it: a
    /// delivery already scheduled or running goes on. Idempotent.
    func stopSignalling() {
        registration.stopSignalling()
    }

    deinit {
        registration.invalidate()
    }
}

protocol InvalidatableObservation: Sendable {
    func invalidate()
    func stopSignalling()
}
