import Dispatch
import Foundation
import ProgressTree
import ProgressTreePostgres
import Synchronization

/// `jobs-on-postgres worker`: one job, published, run, and its final tree printed.
struct Worker {
    let options: OptionList

    init(arguments: [String]) throws {
        options = try OptionList(
            arguments,
            known: ["--postgres", "--job", "--photos", "--step-ms", "--heartbeat-timeout", "--retention", "--fail"])
    }

    /// Why a photo failed (`--fail`).
    struct Unreadable: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name): unreadable (simulated with --fail)" }
    }

    /// Why the job failed: a photo did.
    struct Incomplete: Error, CustomStringConvertible {
        let failed: Int
        var description: String { "\(failed) photo\(failed == 1 ? "" : "s") failed" }
    }

    func run() async throws {
        let photos = try options.number("--photos", default: 6, in: 1...10_000)
        let step = try options.number("--step-ms", default: 100, in: 0...60_000)
        let failing = try options.number("--fail", default: 0, in: 0...10_000)
        var storeOptions = ProgressJobStore.Options()
        storeOptions.heartbeatTimeout = .seconds(try options.number("--heartbeat-timeout", default: 15, in: 1...3600))
        storeOptions.retention = .seconds(try options.number("--retention", default: 24 * 3600, in: 1...31_536_000))
        let jobID = options.last("--job")
        let store = try options.store(options: storeOptions)
        let running = Task { try await store.run() }

        let root = ProgressNode(totalUnitCount: Int64(photos))
        root.localizedDescription = "Resizing \(photos) photos"
        root.isPausable = true
        let job = try await store.publish(root, jobID: jobID)
        say(job.jobID)

        let stopped = Mutex<String?>(nil)
        let signals = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler {
                let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
                stopped.withLock { $0 = $0 ?? name }
                Task {
                    // Not a user's cancel: the job reads failed with this reason.
                    await job.interrupt(reason: "the worker was stopped (\(name))")
                    exit(number == SIGTERM ? 143 : 130)
                }
            }
            source.resume()
            return source
        }

        var failed = 0
        var nodes: [ProgressNode] = []
        for index in 0..<photos {
            guard !root.isCancelled, stopped.withLock({ $0 }) == nil else { break }
            let photo = ProgressNode(totalUnitCount: 10, parent: root, pendingUnitCount: 1)
            photo.localizedDescription = "photo-\(index + 1).jpg"
            nodes.append(photo)
            do {
                for unit in 0..<10 {
                    try await photo.checkpoint()  // waits while paused, throws when cancelled
                    if step > 0 { try await Task.sleep(for: .milliseconds(step)) }
                    if index + 1 == failing && unit == 5 { throw Unreadable(name: "photo-\(index + 1).jpg") }
                    photo.advance()
                }
            } catch let error as Unreadable {
                photo.fail(error)
                failed += 1
            } catch {
                break  // cancelled
            }
        }
        if stopped.withLock({ $0 }) != nil { try await Task.sleep(for: .seconds(3600)) }  // the handler exits
        if failed > 0 && !root.isCancelled { root.fail(Incomplete(failed: failed)) }
        await job.finish()
        _ = signals
        printTree(root, nodes)
        running.cancel()
        _ = await running.result
    }

    /// The tree as the worker knows it, one node a line: "name state completed/total".
    private func printTree(_ root: ProgressNode, _ photos: [ProgressNode]) {
        for node in [root] + photos {
            say(
                "\(node.localizedDescription ?? "") | \(Self.state(of: node)) | \(node.completedUnitCount)/\(node.totalUnitCount)"
            )
        }
    }

    static func state(of node: ProgressNode) -> String {
        if node.isFailed { return "failed" }
        if node.isCancelled { return "cancelled" }
        if node.isFinished { return "finished" }
        return node.isPaused ? "paused" : "running"
    }
}
