#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ProgressTree
import ProgressTreePlatform
import Synchronization

/// The state a mount shares between the reactor's thread, a process waiter and the threads that send
/// commands (guarded by the mount's lock; nodes are never touched under it).
struct MountShared: ~Copyable {
    var diagnostics = ProgressMount.Diagnostics()
    var rootID: Int?
    var isClosing = false
    var hasEnded = false
    var exitDescription: String?
    var exitStatus: ChildProcess.ExitStatus?
    /// The stream, the process and its outputs that have not ended yet.
    var openParts = 0
    var streamWatch: StreamReactor.Watch?
    var outputWatches: [StreamReactor.Watch] = []
    /// Pause and resume commands sent and not yet confirmed by a line: until then (at most a second),
    /// lines that say otherwise do not undo them (they were written before the command arrived).
    var sentCommands: [Int: (ProgressWireCommand, ContinuousClock.Instant)] = [:]
    /// Commands for the stream's root given before its first line said its id (sent in order then).
    var commandsForRoot: [ProgressWireCommand] = []
    /// Whether a cancel for the stream's root was sent (or queued in `commandsForRoot`).
    var sentRootCancel = false
    /// Whether the stream's last line for its root said it is final (the publisher's root is done).
    var streamRootIsFinal = false
    /// Why the transport gave up (over HTTP: "http://…/events: connection refused for 10 s"), set before
    /// it closes the stream: the reason the mirrored root fails with, instead of "… stopped before the end".
    var transportFailure: String?
}

/// What only the reactor's thread touches, under the mount's uncontended reading lock.
struct MountReading {
    var splitter = LineSplitter(maximumLineLength: ProgressMount.maximumLineLength)
    /// The last line read, so that the next is read only where it differs.
    var memo = WireLineMemo()
    var mirror: MountedNodeMap
    var outputSplitters: [LineSplitter]
    /// Counted since `diagnostics` last took them.
    var diagnostics = ProgressMount.Diagnostics()
    /// Why the stream ended, once it did (the reactor stopped watching it).
    var endReason: String?
    /// The root's id and final state as last written to `MountShared`.
    var announcedRootID: Int?
    var announcedRootFinal = false

    init(root: ProgressNode, name: String, outputCount: Int, properties: [any WireProgressProperty.Type] = []) {
        mirror = MountedNodeMap(root: root, name: name, properties: properties)
        outputSplitters = Array(
            repeating: LineSplitter(maximumLineLength: ProgressMount.maximumOutputLineLength, longLines: .cut),
            count: outputCount)
    }
}

extension ProgressMount.Diagnostics {
    mutating func merge(_ other: Self) {
        acceptedLines += other.acceptedLines
        malformedLines += other.malformedLines
        oversizedLines += other.oversizedLines
        outOfRangeLines += other.outOfRangeLines
        unknownParentLines += other.unknownParentLines
        cycleLines += other.cycleLines
        rejectedNodes += other.rejectedNodes
        cleanedStrings += other.cleanedStrings
        skippedProperties += other.skippedProperties
        reconnections += other.reconnections
        finishedWhileAway += other.finishedWhileAway
        failedCommands += other.failedCommands
        unsentCommands += other.unsentCommands
        if let version = other.unsupportedVersion { unsupportedVersion = version }
    }
}
