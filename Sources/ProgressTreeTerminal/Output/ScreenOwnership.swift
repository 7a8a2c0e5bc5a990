import Synchronization

/// Who may write to the terminal whose cursor is hidden: a renderer drawing a frame, or a signal handler
/// giving the terminal back (Ctrl-Z, `SIGTERM`…). Never both at once.
///
/// A handler knows what is on screen only from what the renderer recorded (`liveAreaLines`). While a frame
/// is being written, that record and the screen disagree: the frame may have been written and not yet
/// recorded, or recorded and not yet written, and a frame composed before a stop moves up over lines the
/// shell printed while the process was stopped. So a handler that arrives during a frame does not touch
/// the terminal: it leaves its signal to the renderer, which acts on it as soon as its frame is written
/// and recorded (`end`). A frame that begins while a handler acts waits for it (the handler writes a few
/// bytes, then stops or ends the process; a stopped process's threads wait with it).
///
/// A pure state machine over one atomic word: each transition returns what to do. One signal waits at a
/// time: a second signal that arrives while one waits, or while a handler acts, is acted on at once (the
/// person insists; a frame whose write is blocked, by a terminal paused with Ctrl-S, must not hold Ctrl-Z
/// for ever).
///
/// Memory ordering: sequentially consistent, for the reason `SignalRestoration` gives (the order of these
/// transitions and the writes to the terminal around them is what matters, and a system call is not a
/// memory operation).
struct ScreenOwnership: ~Copyable {
    /// The owner of the screen.
    enum State: Int {
        /// Nobody writes.
        case idle = 0
        /// A renderer writes a frame.
        case drawing = 1
        /// A renderer writes a frame, and a signal waits for it to end (`deferredSignal`).
        case drawingWithSignalWaiting = 2
        /// A signal handler writes.
        case handling = 3
    }

    /// What a handler does about its signal.
    enum HandlerAction: Equatable {
        /// Act now: the handler owns the screen; call `endHandling()` if it returns.
        case actOwning
        /// Act now, without owning the screen (a second signal, see the type's notes).
        case actForced
        /// Nothing now: the renderer acts when its frame is written.
        case deferred
    }

    private let state = Atomic<Int>(State.idle.rawValue)
    private let deferredSignal = Atomic<Int32>(0)

    /// The state, for tests.
    var current: State { State(rawValue: state.load(ordering: .sequentiallyConsistent))! }

    /// A renderer is about to draw: `true` once it owns the screen, `false` while a handler acts (try again,
    /// yielding).
    func tryBeginDrawing() -> Bool {
        state.compareExchange(
            expected: State.idle.rawValue, desired: State.drawing.rawValue, ordering: .sequentiallyConsistent
        ).exchanged
    }

    /// The renderer's frame is written and recorded: the screen is free, and `nil` is returned; or a
    /// signal waited for the frame, and is returned: the renderer now owns the screen as its handler
    /// would, acts on it, and calls `endHandling()` if the process continues.
    func endDrawing() -> Int32? {
        if state.compareExchange(
            expected: State.drawing.rawValue, desired: State.idle.rawValue, ordering: .sequentiallyConsistent
        ).exchanged {
            return nil
        }
        // A signal waits (a handler seeing this state changes nothing: it acts, forced).
        state.store(State.handling.rawValue, ordering: .sequentiallyConsistent)
        return deferredSignal.exchange(0, ordering: .sequentiallyConsistent)
    }

    /// `signalNumber` arrived (in its handler). Async-signal-safe.
    func signalArrived(_ signalNumber: Int32) -> HandlerAction {
        while true {
            let observed = state.load(ordering: .sequentiallyConsistent)
            switch State(rawValue: observed) {
            case .idle:
                if state.compareExchange(
                    expected: observed, desired: State.handling.rawValue, ordering: .sequentiallyConsistent
                ).exchanged {
                    return .actOwning
                }
            case .drawing:
                // Stored before the state says it waits: the renderer reads it only after seeing that.
                deferredSignal.store(signalNumber, ordering: .sequentiallyConsistent)
                if state.compareExchange(
                    expected: observed, desired: State.drawingWithSignalWaiting.rawValue,
                    ordering: .sequentiallyConsistent
                ).exchanged {
                    return .deferred
                }
            case .drawingWithSignalWaiting, .handling, nil:
                return .actForced
            }
        }
    }

    /// The handler that owned the screen is done (the process continued after a stop).
    func endHandling() {
        _ = state.compareExchange(
            expected: State.handling.rawValue, desired: State.idle.rawValue, ordering: .sequentiallyConsistent)
    }
}
