extension ProgressMount {
    // Over HTTP: what a mount of a served tree (`mountConnection(url:…)`) adds to a mount of a stream.

    /// Why `ProgressNode.mountConnection(url:…)` refused a URL: https (this module has no TLS), another
    /// scheme, or a URL it cannot read.
    public struct UnsupportedURL: Error, Sendable, Equatable, CustomStringConvertible {
        /// The URL as given.
        public var url: String
        /// Why it was refused, and what to do instead.
        public var reason: String

        /// A refusal of `url` because of `reason`.
        public init(url: String, reason: String) {
            self.url = url
            self.reason = reason
        }

        /// "https://host/events: https is not supported by ProgressTreeStreaming, …".
        public var description: String { "\(url): \(reason)" }
    }

    /// Applies a snapshot marker the HTTP client put in the stream, in order with the lines around it.
    func apply(_ marker: SnapshotMarker, to reading: inout MountReading) {
        switch marker {
        case .begins:
            reading.mirror.beginSnapshot()
        case .synced:
            _ = reading.mirror.endSnapshot(diagnostics: &reading.diagnostics)
        case .newRun:
            // The server serves another run: its ids name other nodes. The mirror starts again, and what
            // waits for a line of the run before (the root's id, commands sent) is forgotten.
            reading.mirror.beginRun()
            reading.announcedRootID = nil
            reading.announcedRootFinal = false
            shared.withLock { shared in
                shared.rootID = nil
                shared.streamRootIsFinal = false
                shared.sentCommands = [:]
            }
            hasSentCommands.store(false, ordering: .releasing)
        }
    }
}

/// A line that `HTTPEventClient` writes into a mount's stream among the server's lines: a NUL byte, which
/// no line of the format can start with (the client changes a server's line that does), then a letter.
enum SnapshotMarker: Equatable {
    /// A connection was answered: a snapshot of the tree begins (`MountedNodeMap.beginSnapshot()`).
    case begins
    /// The server's `synced` event: the snapshot is complete, and mirrored nodes it did not name finished.
    case synced
    /// The connection serves another run than the one before (its `run` event): the mirror starts again
    /// (`MountedNodeMap.beginRun()`), before that run's snapshot.
    case newRun

    /// The marker's line, with its newline.
    var line: [UInt8] {
        switch self {
        case .begins: [0, 0x62, 0x0A]
        case .synced: [0, 0x73, 0x0A]
        case .newRun: [0, 0x6E, 0x0A]
        }
    }

    /// The marker `line` is (without its newline), if it is one.
    init?(_ line: UnsafeRawBufferPointer) {
        guard line.count == 2, line[0] == 0 else { return nil }
        switch line[1] {
        case 0x62: self = .begins
        case 0x73: self = .synced
        case 0x6E: self = .newRun
        default: return nil
        }
    }
}
