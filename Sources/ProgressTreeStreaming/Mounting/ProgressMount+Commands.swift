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
    // Commands: a cancel, pause or resume of a mirrored node, sent to the publisher.

    /// Sends `command` for remote node `id` (`nil`: the stream's root), unless the mount is applying a
    /// line (the state came from the publisher) or the stream ended.
    func send(_ command: ProgressWireCommand, remoteID: Int?) {
        guard commands != nil, !(applying.load(ordering: .relaxed) && StreamReactor.shared.isCurrent) else { return }
        let target = shared.withLock { shared -> Int? in
            guard !shared.hasEnded else { return nil }
            guard let id = remoteID ?? shared.rootID else {
                // The stream's root has not said its id yet: sent when it does.
                shared.commandsForRoot.append(command)
                if command == .cancel { shared.sentRootCancel = true }
                return nil
            }
            if command != .cancel {
                shared.sentCommands[id] = (command, .now + .seconds(1))
                hasSentCommands.store(true, ordering: .releasing)
            }
            if command == .cancel && remoteID == nil { shared.sentRootCancel = true }
            return id
        }
        if let target { transmit(command, id: target) }
    }

    /// Writes a command line on the command descriptor (one writer at a time; nothing once it is closed).
    func transmit(_ command: ProgressWireCommand, id: Int) {
        guard let commands else { return }
        let bytes = Array((command.line(id: id) + "\n").utf8)
        writeLock.withLock { closed in
            guard !closed else { return }
            _ = FileDescriptor.sendAll(commands, bytes)
        }
    }

    func installHandlers(on mirrored: ProgressNode, remoteID: Int?, mirrorParent: ProgressNode?) {
        let isRoot = remoteID == nil && mirrorParent == nil
        mirrored.cancellationHandler = { [weak self, weak mirrorParent] in
            // A cancellation that came down from a mirrored parent was sent for that parent already.
            if let parent = mirrorParent, parent.isCancelled { return }
            guard let self else { return }
            self.send(.cancel, remoteID: remoteID)
            // Cancelled here (not by a line of the publisher's, whose program then ends on its own): the
            // program's process group ends, the program given a moment to end by the command first.
            if isRoot, started != nil, !(applying.load(ordering: .relaxed) && StreamReactor.shared.isCurrent) {
                endProcessGroup(after: Self.cancelGrace)
            }
        }
        mirrored.pausingHandler = { [weak self, weak mirrorParent] in
            if let parent = mirrorParent, parent.isPaused { return }
            self?.send(.pause, remoteID: remoteID)
        }
        mirrored.resumingHandler = { [weak self] in
            self?.send(.resume, remoteID: remoteID)
        }
    }
}
