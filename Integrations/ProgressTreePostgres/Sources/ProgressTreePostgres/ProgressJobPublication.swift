import Logging
import ProgressTree
import ProgressTreeStreaming
import Synchronization

/// One job's tree, published into PostgreSQL by the process that runs it (`ProgressJobStore.publish(_:jobID:)`).
///
/// Its `ProgressPublisher` walks the tree every `ProgressJobStore.Options.interval` (250 ms); a writer
/// sends the lines that changed since its last statement as **one statement** (the changed nodes' rows,
/// the job's row, and the notification readers listen for), at most one an interval. When PostgreSQL
/// cannot be reached, the lines wait, each node's latest replacing its earlier ones, and go with the next
/// statement that succeeds: nothing final is lost, only steps between. With nothing to write, it writes a
/// heartbeat every third of the heartbeat timeout, so that readers know its process still runs.
///
/// Commands for the job (pause, resume, cancel, from any instance's page) reach its tree in the order they
/// were sent, through the publisher's command channel: their handlers run in this process.
///
/// End it with `finish()` once the root is final (finished, failed or cancelled): its final state is then
/// kept for the store's retention. Ending it otherwise says why, as the page shows it: `finish()` on a root
/// that is not final records the job failed ("the worker stopped before the end"), and
/// `interrupt(reason:)` records the process's own reason (a `SIGTERM`: "the worker was stopped"), never a
/// user's cancel.
///
/// Thread safety: every member may be called from any thread.
public final class ProgressJobPublication: Sendable {
    /// The job's id: the application's, or one the store minted.
    public let jobID: String
    /// This publication's run: 32 hexadecimal digits, new each time the job is published (a job run again
    /// under the same id is another run, whose node ids mean other nodes).
    public let run: String
    /// The token commands for this run carry: the same on every instance that serves the job.
    let token: String
    let store: ProgressJobStore
    let root: ProgressNode
    private let pipe: CommandPipe
    private let publisher: ProgressPublisher
    private let wakeups: AsyncStream<Void>.Continuation
    private let shared: SharedState
    private let writer: Mutex<Task<Void, Never>?>
    private let heartbeat: Mutex<Task<Void, Never>?>

    /// The state, in a box of its own so that the publisher's sink can hold it before `self` exists.
    final class SharedState: Sendable {
        private let mutex = Mutex(PublicationState())

        func withLock<Result: Sendable>(_ body: (inout PublicationState) -> Result) -> Result {
            mutex.withLock { body(&$0) }
        }
    }

    struct PublicationState: Sendable {
        var batch = JobBatch()
        var lastStatement = ContinuousClock.now
        /// Whether the job's row says it ended (written by this process, or by another: a sweep).
        var hasEnded = false
        var isFinishing = false
        /// Commands are being fetched; `commandsWanted`: fetch again after.
        var isFetchingCommands = false
        var commandsWanted = false
    }

    init(store: ProgressJobStore, root: ProgressNode, jobID: String, run: String, token: String, pipe: CommandPipe) {
        self.store = store
        self.root = root
        self.jobID = jobID
        self.run = run
        self.token = token
        self.pipe = pipe
        let shared = SharedState()
        self.shared = shared
        let (stream, wakeups) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wakeups = wakeups
        var publisherOptions = ProgressPublisher.Options()
        publisherOptions.interval = store.options.interval
        // The work goes on whether or not anyone reads: the channel is ours, not a reader's.
        publisherOptions.cancelsRootWhenDisconnected = false
        self.publisher = ProgressPublisher(root, commandDescriptor: pipe.readDescriptor, options: publisherOptions) {
            bytes in
            shared.withLock { $0.batch.take(bytes) }
            wakeups.yield()
            return true
        }
        self.writer = Mutex(nil)
        self.heartbeat = Mutex(nil)
        let writerTask = Task { [self] in await writeUntilFinished(stream) }
        writer.withLock { $0 = writerTask }
        let heartbeatTask = Task { [self] in await beatUntilCancelled() }
        heartbeat.withLock { $0 = heartbeatTask }
        publisher.start()
    }

    /// Whether the job's row says it ended: its final state was written, or another process ended it (it
    /// stopped reporting for longer than the timeout): this publication then writes nothing more.
    public var hasEnded: Bool {
        shared.withLock { $0.hasEnded }
    }

    /// Ends the publication: one last walk, its lines written (tried again while PostgreSQL cannot be
    /// reached, up to `ProgressJobStore.Options.finalWriteTimeout`), the command channel closed. When the root
    /// is not final, the job is recorded as failed, "the worker stopped before the end", its running nodes
    /// cancelled. Returns once that is written (or given up). Calling it again does nothing more.
    public func finish() async {
        await end(reason: "the worker stopped before the end")
    }

    /// Ends the publication because this process stops before the job ends (a `SIGTERM`, a deploy): the
    /// lines are written as `finish()` does, then the job is recorded as failed with `reason` ("the worker
    /// was stopped (SIGTERM)"), its running nodes cancelled, unless the root was final. The tree itself is
    /// not cancelled: nothing reads as a user's cancel.
    public func interrupt(reason: String) async {
        await end(reason: reason)
    }

    private func end(reason: String) async {
        let first = shared.withLock { state in
            defer { state.isFinishing = true }
            return !state.isFinishing
        }
        if first {
            publisher.finish()
            wakeups.finish()
        }
        await writer.withLock { $0 }?.value
        heartbeat.withLock { $0 }?.cancel()
        guard first else { return }
        pipe.close()
        store.forget(self)
        // Ended already: its final lines were written, or another process ended it.
        guard !shared.withLock({ $0.hasEnded }) else { return }
        await store.endJobWithRetries(self, reason: reason)
    }

    /// Stops as a process that is killed does: nothing more is written, not even the end, and no
    /// heartbeat; commands are no longer read. For tests of what readers see then.
    func vanish() {
        shared.withLock { state in
            state.hasEnded = true
            state.isFinishing = true
        }
        heartbeat.withLock { $0 }?.cancel()
        publisher.finish()
        wakeups.finish()
        store.forget(self)
    }

    // MARK: Writing

    private func writeUntilFinished(_ wakeups: AsyncStream<Void>) async {
        for await _ in wakeups {
            // Paced: at most one statement an interval.
            let next = shared.withLock { $0.lastStatement } + store.options.interval
            if next > .now { try? await Task.sleep(until: next) }
            guard await writeBatch() else { return }
        }
    }

    /// Writes what was taken; `false` once the job's row says it ended.
    private func writeBatch() async -> Bool {
        let deadline = ContinuousClock.now + store.options.finalWriteTimeout
        var delay = Duration.milliseconds(200)
        while true {
            let batch = shared.withLock { state -> JobBatch? in
                guard !state.hasEnded else { return nil }
                state.lastStatement = .now
                return state.batch.drain()
            }
            guard let batch else { return false }
            guard !batch.isEmpty else { return true }
            do {
                let written = try await store.write(batch, of: self)
                if !written {
                    shared.withLock { $0.hasEnded = true }
                    store.logger.warning("progresstree: job \(jobID) ended elsewhere (stopped reporting): not written")
                    return false
                }
                if batch.root?.state.isFinal == true {
                    shared.withLock { $0.hasEnded = true }
                    return false
                }
                return true
            } catch {
                shared.withLock { $0.batch.restore(batch) }
                let finishing = shared.withLock { $0.isFinishing }
                if finishing && ContinuousClock.now >= deadline {
                    store.logger.error(
                        "progresstree: job \(jobID)'s last lines could not be written: \(String(reflecting: error))")
                    return false
                }
                store.logger.warning(
                    "progresstree: writing job \(jobID) failed, trying again: \(String(reflecting: error))")
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    private func beatUntilCancelled() async {
        let period = store.options.heartbeatTimeout / 3
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            guard !Task.isCancelled else { return }
            let due = shared.withLock { state in
                !state.hasEnded && ContinuousClock.now - state.lastStatement >= period
            }
            guard due else { continue }
            do {
                if try await !store.beat(self) {
                    shared.withLock { $0.hasEnded = true }
                    return
                }
            } catch {
                store.logger.warning("progresstree: job \(jobID)'s heartbeat failed: \(String(reflecting: error))")
            }
        }
    }

    // MARK: Commands

    /// Fetches and applies the commands waiting for this run, one fetch at a time, again if more came.
    func takeCommands() {
        let starts = shared.withLock { state in
            guard !state.isFinishing else { return false }
            state.commandsWanted = true
            guard !state.isFetchingCommands else { return false }
            state.isFetchingCommands = true
            return true
        }
        guard starts else { return }
        Task {
            while shared.withLock({ state in
                defer { state.commandsWanted = false }
                if !state.commandsWanted { state.isFetchingCommands = false }
                return state.commandsWanted
            }) {
                do {
                    let lines = try await store.takeCommands(of: self)
                    for line in lines { pipe.write(line: line) }
                    if !lines.isEmpty { store.state.withLock { $0.diagnostics.commandsApplied += lines.count } }
                } catch {
                    store.logger.warning(
                        "progresstree: reading job \(jobID)'s commands failed: \(String(reflecting: error))")
                }
            }
        }
    }
}
