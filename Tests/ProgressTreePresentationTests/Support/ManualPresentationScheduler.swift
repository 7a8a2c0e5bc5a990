import ProgressTree
import ProgressTreePresentation
import ProgressTreePlatform

/// A `PresentationScheduler` whose time moves only when the test advances it. Due actions run on the
/// advancing thread, in deadline order (ties in scheduling order), with `now` set to their deadline.
final class ManualPresentationScheduler: PresentationScheduler {
    let origin = ContinuousClock.now

    private struct Item {
        var deadline: ContinuousClock.Instant
        var sequence: Int
        var action: @Sendable () -> Void
    }

    private struct State {
        var now: ContinuousClock.Instant
        var items: [Item] = []
        var nextSequence = 0
    }

    private let state: Lock<State>

    init() {
        state = Lock(State(now: origin))
    }

    var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// The time since the scheduler was created.
    var elapsed: Duration { now - origin }

    var scheduledActionCount: Int { state.withLock { $0.items.count } }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.items.append(
                Item(deadline: state.now + max(delay, .zero), sequence: state.nextSequence, action: action))
            state.nextSequence += 1
        }
    }

    /// Runs every action due up to `now + interval` (also those scheduled meanwhile), then sets the time.
    func advance(by interval: Duration) {
        let end = state.withLock { $0.now } + max(interval, .zero)
        while let action = state.withLock({ state -> (@Sendable () -> Void)? in
            guard
                let index = state.items.indices.filter({ state.items[$0].deadline <= end })
                    .min(by: {
                        (state.items[$0].deadline, state.items[$0].sequence) < (
                            state.items[$1].deadline, state.items[$1].sequence
                        )
                    })
            else { return nil }
            let item = state.items.remove(at: index)
            state.now = max(state.now, item.deadline)
            return item.action
        }) {
            action()
        }
        state.withLock { $0.now = end }
    }

    /// Advances to `elapsed` milliseconds after the origin.
    func advance(toMilliseconds milliseconds: Int) {
        advance(by: origin + .milliseconds(milliseconds) - now)
    }
}
