import ProgressTree
import ProgressTreeStreaming
import ProgressTreeWeb
import Synchronization

/// One job served by this process from PostgreSQL: its rows, relayed to the job's readers as the event
/// stream of a tree (`ProgressEventStream.init(relayingRun:options:)`), with the routes that serve it. Its
/// run names the job's run, then this relay (`<job run>.<8 digits>`): another instance, or this one after
/// the store reconnected, is another run for a reader of the stream, which starts again from its state.
///
/// Thread safety: every member may be called from any thread.
final class JobRelay: Sendable {
    let jobID: String
    /// The job's run this relay serves.
    let run: String
    let events: ProgressEventStream
    let routes: ProgressWebRoutes
    private let shared: Mutex<RelayState>

    struct RelayState {
        /// The highest `seq` relayed: the job's rows up to it were read.
        var lastSeq: Int64 = -1
        /// The highest `seq` a notification named.
        var wantedSeq: Int64 = -1
        /// The highest `seq` a finished fetch covered: every notification is sent once its statement
        /// committed, so a fetch that began after one came read its rows.
        var coveredSeq: Int64 = -1
        /// What the fetch under way covers, once it ends.
        var fetchCovers: Int64 = -1
        var isFetching = false
        /// When the relay last had no subscriber, while it has none (`nil` while it has some).
        var idleSince: ContinuousClock.Instant?
    }

    init(
        jobID: String, run: String, token: String, options: ProgressWebRoutes.Options,
        sendCommand: @escaping ProgressWebRoutes.CommandSender
    ) {
        self.jobID = jobID
        self.run = run
        let nonce = RunIdentity.make().prefix(8)
        var streamOptions = ProgressEventStream.Options()
        streamOptions.keepAliveInterval = options.eventStream.keepAliveInterval
        streamOptions.maximumBufferedBytes = options.eventStream.maximumBufferedBytes
        self.events = ProgressEventStream(relayingRun: "\(run).\(nonce)", options: streamOptions)
        self.routes = ProgressWebRoutes(
            relaying: events, token: options.isReadOnly ? nil : token, options: options, sendCommand: sendCommand)
        self.shared = Mutex(RelayState())
    }

    /// Relays rows read, whose highest `seq` is `seq`.
    func relay(_ bytes: [UInt8], upTo seq: Int64) {
        if !bytes.isEmpty { events.relay(bytes) }
        shared.withLock { $0.lastSeq = max($0.lastSeq, seq) }
    }

    /// Notes that rows up to `seq` were written; `true` when the caller is to fetch them (`beginFetch()`,
    /// then `endFetch()` until it says no more).
    func want(_ seq: Int64) -> Bool {
        shared.withLock { state in
            state.wantedSeq = max(state.wantedSeq, seq)
            guard !state.isFetching, state.wantedSeq > state.coveredSeq else { return false }
            state.isFetching = true
            return true
        }
    }

    /// Starts a fetch: the `seq` to read rows above.
    func beginFetch() -> Int64 {
        shared.withLock { state in
            state.fetchCovers = state.wantedSeq
            return state.lastSeq
        }
    }

    /// Ends a fetch (`read`: it read the rows); `true` when another is wanted (a notification came meanwhile).
    func endFetch(read: Bool) -> Bool {
        shared.withLock { state in
            if read { state.coveredSeq = max(state.coveredSeq, state.fetchCovers) }
            guard state.wantedSeq > state.coveredSeq else {
                state.isFetching = false
                return false
            }
            return true
        }
    }

    /// The highest `seq` relayed.
    var lastSeq: Int64 {
        shared.withLock { $0.lastSeq }
    }

    /// Whether the relay has had no subscriber for `lifetime`, as of `now` (noted at each sweep).
    func isIdle(for lifetime: Duration, now: ContinuousClock.Instant) -> Bool {
        let readers = events.subscriberCount
        return shared.withLock { state in
            guard readers == 0 else {
                state.idleSince = nil
                return false
            }
            let since = state.idleSince ?? now
            state.idleSince = since
            return now - since >= lifetime
        }
    }
}

/// The lines a relay hands its readers from a job's rows, in an order a reader of the wire format takes
/// them in (`Docs/JobsOnPostgreSQL.md`, "How readers read"): by node id (a node's id is above its
/// parent's: parents come first), the root's line last when it is final (it ends the stream), after a
/// twin of it that is not final when other lines come with it (so that they have their parent). A row that
/// is not its node's progress line (not a line of this format, another id than its row's, a newline inside,
/// which would break the event stream's framing) is skipped and reported.
struct RelayLines {
    /// One row: its node id and its line.
    struct Row {
        var nodeID: Int
        var line: String
    }

    /// The bytes to relay (lines ending with a newline), and the node ids of the rows skipped.
    static func assemble(_ rows: [Row]) -> (bytes: [UInt8], skipped: [Int]) {
        var bytes: [UInt8] = []
        var finalRoot: String?
        var skipped: [Int] = []
        for row in rows.sorted(by: { $0.nodeID < $1.nodeID }) {
            let utf8 = Array(row.line.utf8)
            guard !utf8.contains(0x0A), !utf8.contains(0x0D), let record = try? ProgressWireRecord(line: utf8),
                record.id == row.nodeID
            else {
                skipped.append(row.nodeID)
                continue
            }
            if record.parentID == nil && record.state.isFinal {
                finalRoot = row.line
                continue
            }
            bytes.append(contentsOf: utf8)
            bytes.append(0x0A)
        }
        if let finalRoot {
            if !bytes.isEmpty, var twin = try? ProgressWireRecord(line: Array(finalRoot.utf8)) {
                // The nodes below must come after a line of their root (a reader drops a line whose parent
                // it does not know), and the root's final line ends the stream: its twin, still running, goes
                // first, as the writer's earlier line of the root did.
                twin.state = .running
                twin.failureReason = nil
                bytes.insert(contentsOf: Array((twin.line + "\n").utf8), at: 0)
            }
            bytes.append(contentsOf: finalRoot.utf8)
            bytes.append(0x0A)
        }
        return (bytes, skipped)
    }
}
