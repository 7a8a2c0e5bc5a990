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
    // The mounted process: waiting for its exit, ending its process group, and the end of the mount once
    // every part ended.

    /// How long a program cancelled (or whose mount was closed) has to end on the cancel command before
    /// its process group gets SIGTERM: 0.5 s. With `ChildProcess.groupGrace` before SIGKILL, nothing of the
    /// group is left 1.5 s after the cancel.
    static let cancelGrace = Duration.milliseconds(500)

    /// Ends the program's process group (`mountProcess`) once, `delay` from now: its watcher sends SIGTERM
    /// to the group, and SIGKILL `ChildProcess.groupGrace` later. Nothing when the group was ended already
    /// (a program that ended meanwhile ended it).
    func endProcessGroup(after delay: Duration = .zero) {
        guard let started else { return }
        guard delay > .zero else {
            if !groupEnded.exchange(true, ordering: .acquiringAndReleasing) { ChildProcess.endGroup(started) }
            return
        }
        let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
            endProcessGroup()
        }
    }

    /// Reaps the group's watcher (a child of this process) once it ended, after its group did.
    func reapWatcher(_ watcher: Int32) {
        if let descriptor = ChildProcess.descriptor(watcher) {
            _ = StreamReactor.shared.watch(
                descriptor,
                readable: { _ in
                    ChildProcess.waitForExit(watcher, blocking: false) == nil ? .keepWatching : .stopWatching
                },
                stopped: { FileDescriptor.close(descriptor) })
        } else {
            DetachedThread.start { _ = ChildProcess.waitForExit(watcher) }
        }
    }

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

    /// The process ended: its process group ends, and its streams get a second to end too (a process it
    /// started may hold them), then are closed.
    func processEnded(_ status: ChildProcess.ExitStatus) {
        // What the program started ends with it: SIGTERM now (its streams may then end before the second
        // below runs out), SIGKILL a second later.
        endProcessGroup()
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
