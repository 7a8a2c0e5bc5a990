#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import ProgressTreePlatform
import Synchronization

extension ProgressMount {
    // The mounted process: waiting for its exit, and the end of the mount once every part ended.

    func waitForProcess(_ pid: Int32) {
        if let descriptor = ChildProcess.descriptor(pid) {
            _ = StreamReactor.shared.watch(
                descriptor,
                readable: { [self] _ in
                    guard let status = ChildProcess.waitForExit(pid, blocking: false) else { return .keepWatching }
                    processEnded(status)
                    return .stopWatching
                },
                stopped: { FileDescriptor.close(descriptor) })
        } else {
            DetachedThread.start { [self] in processEnded(ChildProcess.waitForExit(pid) ?? .exited(-1)) }
        }
    }

    /// The process ended: its streams get a second to end too (a process it started may hold them), then
    /// are closed.
    func processEnded(_ status: ChildProcess.ExitStatus) {
        let description: String
        switch status {
        case .exited(let code): description = "exited with status \(code)"
        case .signalled(let signal): description = "exited with signal \(signal)"
        }
        shared.withLock { shared in
            shared.exitDescription = description
            shared.exitStatus = status
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [self] in
            let watches = shared.withLock { shared in
                [shared.streamWatch].compactMap { $0 } + shared.outputWatches
            }
            for watch in watches { StreamReactor.shared.stop(watch) }
        }
        partEnded()
    }

    /// One of the stream, the process and its outputs ended; after the last, the process's outcome is
    /// applied and the mount has ended.
    func partEnded() {
        let (last, status) = shared.withLock { shared in
            shared.openParts -= 1
            return (shared.openParts == 0, shared.exitStatus)
        }
        guard last else { return }
        if let status {
            if status != .exited(0) {
                node.fail(Failure(reason: "\(name) \(exitDescription ?? "")"))
            } else if !ProgressWireRecord.State.isFinalNode(node) {
                node.fail(Failure(reason: "\(name) exited before its work was done"))
            }
        }
        ended.leave()
    }
}
