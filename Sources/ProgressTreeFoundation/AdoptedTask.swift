import Foundation
import ProgressTree
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLSessionTask` adopted as a weighted child, and the node that follows its bytes.
///
/// **Why the task, not its `progress`.** swift-corelibs-foundation never brings `URLSessionTask.progress`
/// up to date: its total stays -1 unless the client set `countOfBytesClientExpectsToReceive`, and it is not
/// seen finished when the task completes. The task's own counts and state are right on every platform.
///
/// **Why sampling.** Nothing tells a third party that a task moved: key-value observation of a task is not
/// available in swift-corelibs-foundation, a session's delegate is fixed when the session is made (and is
/// the program's), a task's own `delegate` would replace the program's, and a task made with a completion
/// handler calls no delegate at all. So the mirror is read by `ProgressSampler`'s timer, 20 times a second,
/// on Linux and on Apple platforms alike (one behaviour, tested here): a change reaches the node within
/// 50 ms. The timer stops when the last mirror ends: when the task completes, or when the node ends.
/// (swift-corelibs-foundation counts bytes only for a session with a delegate, so the counts of a
/// completion-handler task stay at 0 there until it completes: no public API reports them. A task's own
/// `delegate` is no way in either: it serves only the tasks of the `async` APIs, and must be set before
/// `resume()`.)
///
/// Task → node (`sample()`, on the sampler's queue or on the adopting thread before the sampler knows the
/// mirror): the counts (`TaskReading`), then, once the task is `.completed`, the outcome — finished at the
/// bytes transferred; cancelled, for a task cancelled with `NSURLErrorCancelled` (by whoever cancelled it);
/// failed with the task's error; failed with `HTTPStatusError` when asked and the status is 400 or more.
/// Node → task (the node's cancellation handler, on the thread that cancels the node or an ancestor):
/// `cancel()`. A node that fails, or is let go by everybody else, ends the mirror; failing cancels the task.
final class AdoptedTask: SampledMirror {
    private struct State {
        /// `nil` once the mirror ended.
        var task: URLSessionTask?
        /// Held strongly, so that a cheap test tells when nobody else holds it (see `AdoptedProgress`).
        var node: ProgressNode?
        var last: (completed: Int64, total: Int64) = (0, -1)
    }

    private let state: Mutex<State>
    private let followsSent: Bool
    private let failsOnHTTPStatus: Bool

    /// The tasks being followed: one node each.
    private static let adopted = Mutex<Set<ObjectIdentifier>>([])

    private init(task: URLSessionTask, node: ProgressNode, failsOnHTTPStatus: Bool) {
        state = Mutex(State(task: task, node: node))
        followsSent = task is URLSessionUploadTask
        self.failsOnHTTPStatus = failsOnHTTPStatus
    }

    var needsTicksEverywhere: Bool { true }

    /// A mirror of `task` and its node (indeterminate, not attached yet), read once.
    ///
    /// - Precondition: `task` is not adopted already.
    static func adopt(_ task: URLSessionTask, failsOnHTTPStatus: Bool) -> (mirror: AdoptedTask, node: ProgressNode) {
        let isNew = adopted.withLock { $0.insert(ObjectIdentifier(task)).inserted }
        precondition(
            isNew,
            "addChild(_:withPendingUnitCount:failsOnHTTPStatus:): this URLSessionTask is already the child of a "
                + "node; a task is adopted once")
        let node = ProgressNode.discreteProgress(totalUnitCount: -1)
        let mirror = AdoptedTask(task: task, node: node, failsOnHTTPStatus: failsOnHTTPStatus)
        node.cancellationHandler = { mirror.cancelTask() }
        return (mirror, node)
    }

    /// Reads the task and brings the node up to date; `false` once the mirror has ended.
    func sample() -> Bool {
        let current = state.withLock { state -> (URLSessionTask, ProgressNode, (Int64, Int64))? in
            guard let task = state.task, !isKnownUniquelyReferenced(&state.node), let node = state.node else {
                return nil
            }
            return (task, node, state.last)
        }
        guard let (task, node, last) = current else {
            end()
            return false
        }
        if node.isFailed || node.isCancelled || node.isFinished {
            end(cancellingTask: !node.isFinished)
            return false
        }
        let reading = TaskReading(task, followingSent: followsSent)
        guard reading.state == .completed else {
            let counts = reading.runningCounts
            if counts != last {
                state.withLock { $0.last = counts }
                AdoptedProgress.setCounts(of: node, completed: counts.completed, total: counts.total)
            }
            return true
        }
        // Completed: read after the state (see `TaskReading`), and ended before the node's handlers run.
        let error = task.error
        let response = task.response
        end()
        if let error {
            if (error as? URLError)?.code == .cancelled {
                node.cancel()
            } else {
                node.fail(TaskFailure(error))
            }
        } else if failsOnHTTPStatus, let response = response as? HTTPURLResponse, response.statusCode >= 400 {
            node.fail(HTTPStatusError(statusCode: response.statusCode))
        } else {
            let counts = reading.finishedCounts
            if node.totalUnitCount < 0 {
                // Indeterminate until it is finished: the bytes first (still indeterminate), then the total.
                node.completedUnitCount = counts.completed
                node.totalUnitCount = counts.total
            } else {
                AdoptedProgress.setCounts(of: node, completed: counts.completed, total: counts.total)
            }
        }
        return false
    }

    /// Cancels the task, unless the mirror has ended (the node's cancellation handler).
    private func cancelTask() {
        guard let task = state.withLock({ $0.task }) else { return }
        task.cancel()
    }

    /// Whether a running mirror follows `task`.
    static func isAdopted(_ task: URLSessionTask) -> Bool {
        adopted.withLock { $0.contains(ObjectIdentifier(task)) }
    }

    /// Lets the task and the node go (cancelling the task first if asked); later calls do nothing.
    func end(cancellingTask: Bool = false) {
        let (task, node) = state.withLock { state in
            defer {
                state.task = nil
                state.node = nil
            }
            return (state.task, state.node)
        }
        guard let task else { return }
        _ = Self.adopted.withLock { $0.remove(ObjectIdentifier(task)) }
        if cancellingTask { task.cancel() }
        withExtendedLifetime(node) {}  // released here, outside the lock: its deinit may run user code
    }
}
