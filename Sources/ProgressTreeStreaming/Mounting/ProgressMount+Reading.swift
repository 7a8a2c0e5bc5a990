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
    // Reading: the stream's lines applied to the mirrored nodes, on the reactor's thread.

    /// On the reactor's thread: reads what came on the stream and applies its lines.
    func readStream(into buffer: UnsafeMutableRawBufferPointer) -> StreamReactor.Next {
        let count = FileDescriptor.read(input, into: buffer)
        if count < 0 {
            let error = ErrorNumber.last
            if error == ErrorNumber.wouldBlock { return .keepWatching }
            reading.withLock { $0.endReason = "\(name): \(ErrorNumber.text(error))" }
            return .stopWatching
        }
        if count == 0 {
            reading.withLock { reading in
                if reading.splitter.remainder() != nil { reading.diagnostics.malformedLines += 1 }  // a line cut short
                reading.endReason = "\(name) stopped before the end"
            }
            mergeDiagnostics()
            return .stopWatching
        }
        return applyRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// What a read of `bytes` from the stream does, on the thread that reads it: its lines applied, the
    /// diagnostics merged, the commands waiting sent.
    func applyRead(_ bytes: UnsafeRawBufferPointer) -> StreamReactor.Next {
        applying.store(true, ordering: .relaxed)
        let next = reading.withLock { reading in apply(bytes, to: &reading) }
        applying.store(false, ordering: .relaxed)
        mergeDiagnostics()
        sendEarlyCommands()
        if next == .keepWatching { askForInterval() }
        return next
    }

    /// Asks the publisher for the interval the process wants now (`ReadPacing`), when it differs from the
    /// one last asked for: one short line at each change of the process's load, none while it holds.
    func askForInterval() {
        guard options.pacesPublisher, let commands else { return }
        let wanted = StreamReactor.shared.requestedIntervalMilliseconds
        guard wanted != sentInterval.load(ordering: .relaxed) else { return }
        let bytes = Array((WireIntervalRequest(milliseconds: wanted).line + "\n").utf8)
        // Never waits on this thread, which reads every stream: a publisher that reads no commands and
        // let them fill its channel is asked again at a later read.
        let sent = writeLock.withLock { closed -> Bool in
            guard !closed else { return true }
            switch FileDescriptor.send(commands, bytes, from: 0, blocking: false) {
            case .wrote(let count):
                // A line is written whole: the rest of a short write (a few bytes at most) follows at once.
                if count < bytes.count { _ = FileDescriptor.sendAll(commands, Array(bytes[count...])) }
                return true
            case .full: return false
            case .failed: return true  // the publisher went away: the end of the stream says so
            }
        }
        if sent { sentInterval.store(wanted, ordering: .relaxed) }
    }

    /// A mount of no descriptor, whose reads are handed in by `applyMeasuredRead(_:)`: the reading path
    /// without a socket or a thread, for measuring what a line costs.
    package static func unread(below parent: ProgressNode, name: String) -> ProgressMount {
        ProgressMount(
            parent: parent, pendingUnitCount: 1, name: name, input: -1, commands: nil, options: Options())
    }

    /// Applies `bytes` as if read from the stream (see `unread(below:name:)`); `false` once the mount would
    /// stop reading.
    package func applyMeasuredRead(_ bytes: UnsafeRawBufferPointer) -> Bool {
        applyRead(bytes) == .keepWatching
    }

    /// Splits `bytes` into lines and applies them in order, as the publisher wrote them (parents before
    /// children); `.stopWatching` after a line of another major version, or once the stream's root is
    /// final (its work is over, whether or not the publisher closes the stream).
    func apply(_ bytes: UnsafeRawBufferPointer, to reading: inout MountReading) -> StreamReactor.Next {
        var records: [ProgressWireRecord] = []
        // Snapshot markers (over HTTP), each with the number of records read before it.
        var markers: [(before: Int, marker: SnapshotMarker)] = []
        var stops = false
        var found = Diagnostics()
        // Out of `reading` while its splitter runs (moved, not copied), back once the lines are read.
        var memo = WireLineMemo()
        swap(&memo, &reading.memo)
        defer { swap(&memo, &reading.memo) }
        reading.splitter.forEachPiece(in: bytes) { piece in
            guard !stops else { return }
            switch piece {
            case .oversized:
                found.oversizedLines += 1
            case .line(let line):
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank lines are allowed
                if readsSnapshotMarkers, line.first == 0, let marker = SnapshotMarker(line) {
                    markers.append((records.count, marker))
                    return
                }
                do throws(ProgressWireError) {
                    records.append(try memo.record(line))
                } catch .unsupportedVersion(let version) {
                    found.unsupportedVersion = version
                    stops = true
                } catch .outOfRange {
                    found.outOfRangeLines += 1
                } catch {
                    found.malformedLines += 1
                }
            }
        }
        reading.diagnostics.merge(found)
        if markers.isEmpty {
            for record in records { apply(record, to: &reading) }
        } else {
            var next = 0
            for index in 0...records.count {
                while next < markers.count && markers[next].before == index {
                    apply(markers[next].marker, to: &reading)
                    next += 1
                }
                if index < records.count { apply(records[index], to: &reading) }
            }
        }
        if let version = found.unsupportedVersion {
            reading.endReason = "\(name): " + ProgressWireError.unsupportedVersion(version).description
            return .stopWatching
        }
        return ProgressWireRecord.State.isFinalNode(node) ? .stopWatching : .keepWatching
    }

    /// Applies one record to the mirror, installs the handlers of a node it creates (before the node is
    /// attached), and notes what the commands sent wait for.
    func apply(_ record: ProgressWireRecord, to reading: inout MountReading) {
        reading.mirror.apply(
            record, diagnostics: &reading.diagnostics, maximumNodeCount: options.maximumNodeCount,
            sentCommand: { id in shared.withLock { $0.sentCommands[id] } }
        ) { mirrored, parent in
            installHandlers(on: mirrored, remoteID: record.id, mirrorParent: parent)
        }
        if readsSnapshotMarkers { reading.mirror.noteNamed(record.id) }
        // What the command senders read: the root's id once known, whether its publisher's root is final,
        // the commands this line confirms. Taken under the shared lock only when one of them changes.
        let rootID = reading.mirror.rootID
        let isRootLine = record.id == rootID
        guard
            reading.announcedRootID != rootID || (isRootLine && reading.announcedRootFinal != record.state.isFinal)
                || hasSentCommands.load(ordering: .acquiring)
        else { return }
        reading.announcedRootID = rootID
        if isRootLine { reading.announcedRootFinal = record.state.isFinal }
        shared.withLock { shared in
            if shared.rootID == nil, let rootID { shared.rootID = rootID }
            if record.id == shared.rootID { shared.streamRootIsFinal = record.state.isFinal }
            // A line that agrees with a command sent ends the wait for it.
            if let (command, _) = shared.sentCommands[record.id],
                (command == .pause) == (record.state == .paused) || record.state.isFinal
            {
                shared.sentCommands[record.id] = nil
                if shared.sentCommands.isEmpty { hasSentCommands.store(false, ordering: .releasing) }
            }
        }
    }

    /// Counts what the last read found, where `diagnostics` reads it.
    func mergeDiagnostics() {
        let found = reading.withLock { reading -> Diagnostics? in
            guard reading.diagnostics != Diagnostics() else { return nil }
            defer { reading.diagnostics = Diagnostics() }
            return reading.diagnostics
        }
        if let found { shared.withLock { $0.diagnostics.merge(found) } }
    }

    /// Sends the commands given before the root's id was known (a Ctrl-C right after starting a worker).
    func sendEarlyCommands() {
        let early = shared.withLock { shared -> (Int, [ProgressWireCommand])? in
            guard let root = shared.rootID, !shared.commandsForRoot.isEmpty else { return nil }
            defer { shared.commandsForRoot = [] }
            return (root, shared.commandsForRoot)
        }
        if let (root, commands) = early {
            for command in commands { transmit(command, id: root) }
        }
    }

    /// On the reactor's thread, once: the stream ended (its end, an error, its root final, `close()`, or
    /// the time given to a process's descendants after it exited ran out).
    func streamEnded() {
        mergeDiagnostics()
        let (closing, transportFailure) = shared.withLock { ($0.isClosing, $0.transportFailure) }
        let reason =
            reading.withLock {
                $0.endReason.map { closing ? "\(name) was closed before the end" : transportFailure ?? $0 }
            } ?? "\(name) was closed before the end"
        let waitsForProcess = processIdentifier != nil
        let isFinal = ProgressWireRecord.State.isFinalNode(node)
        let unsupported = shared.withLock { $0.diagnostics.unsupportedVersion != nil }
        if !isFinal && (!waitsForProcess || unsupported) {
            shared.withLock { $0.hasEnded = true }
            node.fail(Failure(reason: reason))
        }
        // `cancel()` marks a node cancelled before it runs the handler that sends the command: when
        // `node` was cancelled in this process, the stream can end here (its root is final) before that
        // handler runs, and the handler then sends nothing. The command is sent here instead, before the
        // command descriptor closes, unless it was sent already or the publisher's root is final (exactly
        // once: `send` checks `hasEnded` and marks `sentRootCancel` under the same lock).
        let cancelledHere = node.isCancelled
        let lateCancel = shared.withLock { shared -> Int? in
            shared.hasEnded = true
            shared.streamWatch = nil
            guard cancelledHere, !shared.sentRootCancel, !shared.streamRootIsFinal, let root = shared.rootID
            else { return nil }
            shared.sentRootCancel = true
            return root
        }
        if let lateCancel { transmit(.cancel, id: lateCancel) }
        writeLock.withLock { closed in
            guard !closed else { return }
            closed = true
            if let commands, commands != input { FileDescriptor.close(commands) }
        }
        // The mount owns its descriptors: closing them tells the publisher its reader went away.
        FileDescriptor.close(input)
        partEnded()
    }
}
