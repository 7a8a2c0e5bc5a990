import Foundation
import ProgressTree
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ProgressNode {
    /// Adopts a `URLSessionTask` as a child standing for `pendingUnitCount` of this node's units, followed
    /// by the node this returns: the same on Linux and on Apple platforms.
    ///
    /// The node counts the task's body bytes: received, or sent for an upload task
    /// (`URLSessionUploadTask`). Its total is the length the server gave (`Content-Length`), or the body's
    /// size for an upload; without one it is indeterminate, bytes counted, until the task completes. It
    /// finishes only when the task completes: then at the bytes transferred (one unit for an empty body).
    /// On Linux, swift-corelibs-foundation counts a task's bytes only when its session has a delegate (the
    /// bytes received by a download task, the bytes sent by any task): a data task, or a task made with a
    /// completion handler, shows none of its total until it completes, and then finishes at the length
    /// expected. Apple's Foundation counts them for every task.
    /// When the task completes with an error, the node fails with it; when it was cancelled
    /// (`NSURLErrorCancelled`) by anyone, the node is cancelled. An HTTP error status is a response, and
    /// the task succeeds: with `failsOnHTTPStatus`, a status of 400 or more fails the node instead, with an
    /// `HTTPStatusError` ("HTTP 404 (Not Found)").
    ///
    /// Cancelling this node or an ancestor cancels the task, before that call returns; failing the node
    /// cancels it too. Pausing the node does not suspend the task.
    ///
    /// The task is read 20 times a second by a timer that runs only while a task (or, on Linux, a
    /// `Foundation.Progress`) is adopted, so a change shows within 50 ms: neither key-value observation nor
    /// the task's own `progress` works on Linux (swift-corelibs-foundation never updates it), and a
    /// session's delegate is the program's. A completion handler or a delegate's
    /// `urlSession(_:task:didCompleteWithError:)` runs before the task is `.completed` on Linux, so the node
    /// ends just after it: wait for the node (`snapshots`, `observe`), not for the handler, to see it end.
    /// The timer stops following the task when it completes, or when the node finishes, is cancelled,
    /// fails, or is held by nobody else.
    ///
    /// Adopt the task before resuming it or while it runs; one already completed ends its node at once.
    /// The node is yours to read and label (`kind`, `fileOperationKind`, `fileURL`, `localizedDescription`);
    /// its counts and its cancellation handler belong to the adoption.
    ///
    /// - Parameters:
    ///   - task: the task to follow.
    ///   - pendingUnitCount: the share of this node's units the task stands for.
    ///   - failsOnHTTPStatus: whether an HTTP status of 400 or more fails the node (default `false`: the
    ///     task succeeded, and so does the node).
    /// - Returns: the node that follows the task, attached to this node.
    /// - Precondition: `pendingUnitCount` is not negative; `task` is not adopted already.
    @discardableResult
    public func addChild(
        _ task: URLSessionTask, withPendingUnitCount pendingUnitCount: Int64, failsOnHTTPStatus: Bool = false
    ) -> ProgressNode {
        precondition(
            pendingUnitCount >= 0,
            "addChild(_:withPendingUnitCount:failsOnHTTPStatus:): the pending unit count must not be negative "
                + "(got \(pendingUnitCount))")
        let (mirror, node) = AdoptedTask.adopt(task, failsOnHTTPStatus: failsOnHTTPStatus)
        addChild(node, withPendingUnitCount: pendingUnitCount)
        // Attaching may have cancelled it (this node was): the first sample settles that, or a task done.
        if mirror.sample() { ProgressSampler.shared.add(mirror) }
        return node
    }
}
