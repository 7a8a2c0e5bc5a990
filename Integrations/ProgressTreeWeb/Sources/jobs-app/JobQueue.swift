import ProgressTree
import ProgressTreeWeb
import Synchronization

/// The application's jobs, as a server models them (`Docs/WebDashboard.md`, "How a server models jobs"):
///
/// - One long-lived root, "All jobs", served at `/progress/all/`. Its total is one unit per job given to it
///   plus one that stays open while the application takes jobs, so it never finishes between jobs: its
///   stream keeps going, and jobs added after others finished appear.
/// - Each job is a child of it (one unit), made when the job is queued, with no units of its own yet
///   (0 of 0), which the page shows as queued; the job sets its total when it starts.
/// - Each job's tree is also served on its own (`ProgressWebRoutes`), at `/progress/jobs/ID/`: one run per
///   job. When the job ends (finished, failed, or cancelled, running or queued), its routes are finished:
///   their walks and keep-alives stop, a page open gets the final state then `ended`, and so does a page
///   opened later, as long as the job is kept.
/// - The last `keptJobs` jobs that ended are kept (the API lists them, their pages answer); an older one is
///   forgotten, its page then answering 404. So the queue holds at most the jobs queued, the jobs running
///   and `keptJobs` others, however many jobs the application runs (the root's own count grows by a unit
///   per job: a number, not a node).
///
/// Jobs run `concurrency` at a time, in the order they were queued.
///
/// Thread safety: every member may be called from any thread.
final class JobQueue: Sendable {
    struct Job: Sendable {
        let id: Int
        let node: ProgressNode
        let routes: ProgressWebRoutes
        let work: ResizeJob
    }

    private struct State {
        var jobs: [Int: Job] = [:]
        var queued: [Int] = []
        var running = 0
        var nextID = 1
        /// The ids of the kept jobs that ended, in the order they ended: at most `keptJobs`.
        var ended: [Int] = []
        /// How many jobs that ended were forgotten.
        var forgotten = 0
    }

    /// Every job's node is a child of this one.
    let allJobs: ProgressNode
    /// `allJobs`' tree, served.
    let allRoutes: ProgressWebRoutes
    private let options: ProgressWebRoutes.Options
    private let concurrency: Int
    private let keptJobs: Int
    private let state = Mutex(State())

    init(options: ProgressWebRoutes.Options, concurrency: Int, keptJobs: Int) {
        let root = ProgressNode.discreteProgress(totalUnitCount: 1)  // the unit that stays open
        root.localizedDescription = "All jobs"
        root.isCancellable = false
        allJobs = root
        allRoutes = ProgressWebRoutes(root, options: options)
        self.options = options
        self.concurrency = max(1, concurrency)
        self.keptJobs = max(0, keptJobs)
    }

    /// Queues `work`: its node appears at once (queued), and it starts when a place is free.
    @discardableResult
    func add(_ work: ResizeJob) -> Job {
        let job = state.withLock { state -> Job in
            let id = state.nextID
            state.nextID += 1
            // The root's total first, so that it never reads as finished in between.
            allJobs.totalUnitCount += 1
            let node = ProgressNode(totalUnitCount: 0, parent: allJobs, pendingUnitCount: 1)
            node.localizedDescription = "Job \(id): resizing \(work.images) images"
            node.isPausable = true
            let job = Job(id: id, node: node, routes: ProgressWebRoutes(node, options: options), work: work)
            state.jobs[id] = job
            state.queued.append(id)
            return job
        }
        startQueued()
        return job
    }

    /// The root's counts in words ("2 of 5 jobs ended, 1 running, 2 queued"): its units count the open
    /// queue too, and a failed job's unit is never done, so its "N of M" would say less.
    private func describe(_ state: State) {
        let ended = state.forgotten + state.jobs.values.filter(\.hasEnded).count
        var words = ["\(ended) of \(state.forgotten + state.jobs.count) jobs ended"]
        if state.running > 0 { words.append("\(state.running) running") }
        if !state.queued.isEmpty { words.append("\(state.queued.count) queued") }
        allJobs.localizedAdditionalDescription = words.joined(separator: ", ")
    }

    /// The job `id`, if there is one.
    func job(_ id: Int) -> Job? {
        state.withLock { $0.jobs[id] }
    }

    /// Every job, in the order they were queued.
    var jobs: [Job] {
        state.withLock { $0.jobs.values.sorted { $0.id < $1.id } }
    }

    private func startQueued() {
        let (starting, cancelled) = state.withLock { state -> ([Job], [Job]) in
            var starting: [Job] = []
            var cancelled: [Job] = []
            while state.running < concurrency, !state.queued.isEmpty {
                let id = state.queued.removeFirst()
                guard let job = state.jobs[id] else { continue }
                if job.node.isCancelled {  // cancelled while queued: never starts
                    ended(job, in: &state)
                    cancelled.append(job)
                    continue
                }
                state.running += 1
                starting.append(job)
            }
            describe(state)
            return (starting, cancelled)
        }
        for job in cancelled { job.routes.finish() }
        for job in starting {
            Task {
                await job.work.run(into: job.node)
                state.withLock { state in
                    state.running -= 1
                    ended(job, in: &state)
                }
                // Its last walk sends its final state, then each reader's stream ends with `ended`.
                job.routes.finish()
                startQueued()
            }
        }
    }

    /// Notes that `job` ended (its caller finishes its routes, outside the lock): it is kept with the last
    /// `keptJobs` jobs that ended, and the oldest beyond them is forgotten.
    private func ended(_ job: Job, in state: inout State) {
        state.ended.append(job.id)
        while state.ended.count > keptJobs {
            state.jobs[state.ended.removeFirst()] = nil
            state.forgotten += 1
        }
    }
}

extension JobQueue.Job {
    /// Whether the job's work is over: finished, failed or cancelled.
    var hasEnded: Bool { node.isFinished || node.isFailed || node.isCancelled }
}
