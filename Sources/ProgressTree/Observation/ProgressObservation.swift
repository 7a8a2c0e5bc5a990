/// The token of an observation: it lasts until `invalidate()` is called or the token is released.
///
/// Thread-safe: `invalidate()` may be called from any thread, more than once, including from inside the
/// observation's own handler.
public final class ProgressObservation: Sendable {
    private let registration: any RegisteredObservation

    init(_ registration: any RegisteredObservation) {
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

    /// Waits until the observation has delivered its last value: the node has reached a final state
    /// (finished, cancelled or failed), the delivery of the value it has then has run and its handler has
    /// returned. (A delivery whose value equals the last one delivered calls no handler; it counts as
    /// delivered.) So a command-line program that observes can print its last line before it exits:
    ///
    /// ```swift
    /// for _ in 0..<4 { job.advance() }
    /// await observation.waitForLastDelivery()  // the handler has printed "100%"
    /// ```
    ///
    /// Like a read of the node, the wait covers the changes that returned before it: every change up to
    /// the one that made the node final has been delivered when it returns. Changes after that (a cancelled
    /// node whose work still counts) may still be delivered later.
    ///
    /// It also returns when no delivery can come any more: the observation is invalidated (after a handler
    /// still running has returned), or the node goes away without reaching a final state. It returns at
    /// once when the calling task is cancelled. Otherwise, while the node never reaches a final state, it
    /// waits. The handler runs on the observation's queue while this waits without blocking a thread, so
    /// any queue works, `DispatchQueue.main` included (when something runs the main queue).
    public func waitForLastDelivery() async {
        await registration.waitForLastDelivery()
    }

    /// Blocks the calling thread until the observation has delivered its last value, as
    /// `waitForLastDelivery()` does, or until `timeout` has passed.
    ///
    /// Deliveries run on the observation's queue, so do not call this on that queue, or from a handler
    /// that runs on it: the delivery it waits for could not start, and it returns `false` after the
    /// timeout. Called from inside this observation's own handler, it returns `false` at once (the next
    /// delivery comes after that handler returns).
    ///
    /// - Parameter timeout: the longest time to wait.
    /// - Returns: `true` when no delivery is left to wait for (the last value was delivered, the
    ///   observation was invalidated, or the node went away); `false` when the timeout passed first, or
    ///   when called from inside this observation's handler.
    @discardableResult
    public func waitForLastDelivery(timeout: Duration) -> Bool {
        registration.waitForLastDelivery(timeout: timeout)
    }

    /// How many waits for the last delivery are registered (for tests).
    var waiterCount: Int { registration.waiterCount }

    /// Takes the observation off its node, so that changes stop signalling it, without closing it: a
    /// delivery already scheduled or running goes on. Idempotent.
    func stopSignalling() {
        registration.stopSignalling()
    }

    deinit {
        registration.invalidate()
    }
}

/// What a token asks of its observation.
protocol RegisteredObservation: Sendable {
    func invalidate()
    func stopSignalling()
    func waitForLastDelivery() async
    func waitForLastDelivery(timeout: Duration) -> Bool
    var waiterCount: Int { get }
}
