import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an adopted `URLSessionTask`'s mirror reads on every sample: its state, and the byte counts of the
/// direction it follows (received, or sent for an upload task).
///
/// **Why these reads are sound from the sampler's thread.** On Apple platforms a task's properties are
/// atomic. In swift-corelibs-foundation, `state`, `response`, `countOfBytesReceived` and `countOfBytesSent`
/// are read and written through the task's own serial queue (`syncQ`); `countOfBytesExpectedToReceive` and
/// `countOfBytesExpectedToSend` are plain `Int64`s written on the task's work queue, so a read racing with a
/// write returns the value before or after it (an aligned load on a 64-bit platform: never torn), and the
/// next sample reads the rest. `state` is read first: once it is `.completed`, every write the task made
/// before completing — its `error` (a reference, never read before), its final counts — happened before the
/// write of that state, which the read of it through the same queue orders before our reads.
struct TaskReading: Equatable, Sendable {
    var state: URLSessionTask.State
    /// Body bytes transferred so far.
    var transferred: Int64
    /// Body bytes expected (from the Content-Length, or the body's size for an upload); 0 or less when not
    /// known (`NSURLSessionTransferSizeUnknown` is -1).
    var expected: Int64

    init(_ task: URLSessionTask, followingSent: Bool) {
        state = task.state
        if followingSent {
            transferred = task.countOfBytesSent
            expected = task.countOfBytesExpectedToSend
        } else {
            transferred = task.countOfBytesReceived
            expected = task.countOfBytesExpectedToReceive
        }
    }

    /// The node's counts while the task runs: the bytes so far of the bytes expected, indeterminate (a
    /// total of -1) when the length is not known. The node finishes only when the task completes, so the
    /// completed count stays one short of a known total until then: the last bytes arrive before the task
    /// says how it ended (an HTTP error, a failure to save).
    var runningCounts: (completed: Int64, total: Int64) {
        let completed = max(transferred, 0)
        guard expected > 0 else { return (completed, -1) }
        return (min(completed, expected - 1), expected)
    }

    /// The node's counts once the task succeeded: the bytes counted, of as many; when none were counted
    /// (swift-corelibs-foundation counts only for a session with a delegate), the bytes expected; when
    /// neither is known, one unit of one, so that an empty or uncounted body finishes the node too.
    var finishedCounts: (completed: Int64, total: Int64) {
        let bytes = transferred > 0 ? transferred : expected > 0 ? expected : 1
        return (bytes, bytes)
    }
}
