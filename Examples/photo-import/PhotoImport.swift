// photo-import — the main demo of ProgressTree.
//
// An album of photos imported concurrently. Each photo import is a download worth 9 units (a file node
// with bytes, an estimated throughput and its file name) plus a filter worth 1 unit that reports through
// implicit, task-local composition (`withCurrent`), as in Apple's PhotoProgress sample. The album's node
// composes the photos and the terminal renderer shows the whole tree live.
//
//   swift run photo-import [--photos N] [--speed X] [--fail-every N] [--skip-every N] [--workers N]
//                          [--destination DIR] [--progress auto|live|plain|accessible|json|none]
//
// `--workers N` imports in N worker processes of this same program, each its share of the album, and shows
// one live tree: each worker is a child of the album standing for its photos (`mountProcess`); its own
// renderer publishes to the parent instead of drawing (`PROGRESSTREE_FD`), and what it prints shows above
// the parent's live area after its name. Keys and Ctrl-C reach the workers through the mirrored nodes;
// `kill -9` on a worker shows it failed ("worker 2 exited with signal 9") while the others go on, and the
// exit status is then 1. `kill -9` on the parent ends the workers too: their reader went away (and, on
// Linux, they get SIGTERM), so they cancel, and leave no partial photo in `--destination`.
//
// `--destination DIR` writes each photo to DIR as it is imported (`PhotoFiles`).
//
// Keys while live: p pause, r resume, c cancel (exit status 3). Ctrl-C cancels cleanly (130).
//
// `--fail-every N` makes every Nth download fail half way: that photo is marked failed (its download and
// filter are cancelled), the import goes on with the others, and at the end the album is failed too, since
// it is incomplete: "Imported 11 photos, 1 failed", exit status 1.
//
// `--skip-every N` makes every Nth photo one the library has already: it is skipped, and counted through a
// custom property (`PhotosSkipped`, a `ProgressProperty`) that the photo sets and leaves in the album when
// it finishes. The album's line shows it with one line of code (`renderer.show`), "Importing 12 photos ·
// 3 skipped", and so does the summary: "Imported 9 photos, 3 skipped, in 1.4 s".

import Dispatch
import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreeStreaming
import ProgressTreeTerminal
import Synchronization

@main
struct PhotoImport {
    static func main() async {
        guard let options = Options.parseCommandLine(program: "photo-import") else { return }

        // An album of no photos is one unit, completed at the end: a node of 0 units would never finish,
        // and the log would never say the import is done.
        let album = ProgressNode.discreteProgress(totalUnitCount: Int64(max(options.photos, 1)))
        if options.photos == 0 { album.localizedAdditionalDescription = "0 of 0" }
        album.localizedDescription = "Importing \(options.photos) photos"
        album.isPausable = true

        let files = options.workers == nil ? options.destination.map(PhotoFiles.init(directory:)) : nil
        let display = ExampleDisplay(
            album, mode: options.progress, keys: .pauseResumeCancel,
            cleanUp: {
                WorkerProcesses.terminate()  // SIGTERM, SIGHUP or a second Ctrl-C: the workers end too
                files?.discardAll()  // and no partial photo stays behind
            })
        let renderer = display.renderer
        renderer.show(PhotosSkipped.self, PhotosSkipped.words)  // "Importing 12 photos · 3 skipped"

        let start = ContinuousClock.now
        if let workers = options.workers {
            renderer.start()
            let outcome = await importWithWorkers(workers, options: options, into: album, renderer: renderer)
            display.stop()
            let elapsed = start.duration(to: .now)
            if album.isCancelled {
                let percent = Int((album.fractionCompleted * 100).rounded(.down))
                display.report("Cancelled at \(percent)%: \(outcome.imported) of \(options.photos) photos imported")
                exit(display.exitStatusAfterCancelling)
            } else if outcome.failedWorkers > 0 {
                let failed = outcome.failedWorkers == 1 ? "1 worker" : "\(outcome.failedWorkers) workers"
                display.report(
                    "Imported \(outcome.imported) of \(options.photos) photos with \(workers) workers "
                        + "in \(seconds(elapsed)) s; \(failed) failed")
                exit(1)
            } else {
                display.report("Imported \(outcome.imported) photos with \(workers) workers in \(seconds(elapsed)) s")
            }
            return
        }
        if options.workerSlice != nil {
            // The parent shows the worker's name before it: "worker 2: Importing 3 photos".
            album.localizedDescription = "Importing \(options.photoIndices.count) photos"
            album.totalUnitCount = Int64(max(options.photoIndices.count, 1))
        }
        renderer.start()
        let importer = Importer(options: options, files: files, report: { renderer.print($0) })
        let outcome = await importer.importAlbum(into: album)
        let imported = outcome.imported
        if options.photoIndices.isEmpty { album.completedUnitCount = 1 }
        if outcome.failed > 0 {
            // A failed photo is never counted as done, so the album cannot finish: we decide it failed.
            album.fail(IncompleteImport(failed: outcome.failed, photos: options.photoIndices.count))
        }
        display.stop()

        let elapsed = start.duration(to: .now)
        let quiet = renderer.isPublishing  // a worker: its parent shows the tree and the summary
        // "3 skipped": the album's summary of the property, worded as on its line; nil when none was.
        let skipped = PhotosSkipped.words(album.summary(of: PhotosSkipped.self))
        if album.isCancelled {
            let percent = Int((album.fractionCompleted * 100).rounded(.down))
            let said = "Cancelled at \(percent)%: \(imported) of \(options.photos) photos imported"
            if !quiet { display.report(said + (skipped.map { ", " + $0 } ?? "")) }
            exit(display.exitStatusAfterCancelling)
        }
        // "Imported 9 photos, 3 skipped, in 1.4 s".
        var parts = ["Imported \(imported) \(imported == 1 ? "photo" : "photos")"]
        if let skipped { parts.append(skipped) }
        if outcome.failed > 0 { parts.append("\(outcome.failed) failed") }
        let said = parts.joined(separator: ", ") + (parts.count > 1 ? ", in " : " in ") + "\(seconds(elapsed)) s"
        if !quiet { display.report(said) }
        if outcome.failed > 0 { exit(1) }
    }

    /// How an import with worker processes ended.
    struct WorkersOutcome {
        var imported = 0
        var failedWorkers = 0
    }

    /// Starts `count` worker processes of this program, each importing its slice of the album, mounted as
    /// children of `album` standing for their photos; waits for them all.
    static func importWithWorkers(
        _ count: Int, options: Options, into album: ProgressNode, renderer: TerminalRenderer
    ) async -> WorkersOutcome {
        let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        var mounts: [(ProgressMount, Int)] = []
        for index in 0..<count {
            var workerOptions = options
            workerOptions.workerSlice = (index, count)
            let photos = workerOptions.photoIndices.count
            var arguments = [
                "--worker", "\(index)/\(count)", "--photos", "\(options.photos)", "--speed", "\(options.speed)",
            ]
            if let failEvery = options.failEvery { arguments += ["--fail-every", "\(failEvery)"] }
            if let skipEvery = options.skipEvery { arguments += ["--skip-every", "\(skipEvery)"] }
            if let destination = options.destination { arguments += ["--destination", destination] }
            do {
                // What a worker prints (its renderer's `print`, or its standard error) shows above the live
                // area, after its name.
                let mount = try album.mountProcess(
                    path: executable, arguments: arguments, pendingUnitCount: Int64(max(photos, 1)),
                    name: "worker \(index + 1)", outputLines: renderer.print)
                mounts.append((mount, photos))
            } catch {
                renderer.print("photo-import: cannot start worker \(index + 1): \(error)")
            }
        }
        WorkerProcesses.started(mounts.compactMap { $0.0.processIdentifier })
        // Cancelling reaches the workers as commands; one that does not end within 5 s is terminated.
        album.cancellationHandler = {
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { WorkerProcesses.terminate() }
        }
        // The album's count says how many photos the workers imported so far. A mount credits its photos
        // to the album only when its worker ends, so the album's own count would read "0 of 12" at 80%.
        // A worker's count only grows (a mirrored node's count dips for the moment a child finishes into
        // it: the highest seen is kept).
        let done = Mutex([Int64](repeating: 0, count: mounts.count))
        let total = options.photos
        if !mounts.isEmpty { album.localizedAdditionalDescription = "0 of \(total)" }
        let observations = mounts.enumerated().map { index, entry in
            let photos = Int64(entry.1)
            return entry.0.node.observe(\.completedUnitCount) { _, change in
                done.withLock { done in
                    done[index] = max(done[index], min(photos, change.newValue))
                    album.localizedAdditionalDescription = "\(done.reduce(0, +)) of \(total)"
                }
            }
        }
        var outcome = WorkersOutcome()
        for (mount, photos) in mounts {
            await mount.ended()
            // A worker's album counts one unit per photo imported: all of them, or those done before it
            // failed or was cancelled.
            outcome.imported +=
                mount.node.isFinished ? photos : Int(max(0, min(Int64(photos), mount.node.completedUnitCount)))
            if mount.node.isFailed { outcome.failedWorkers += 1 }
        }
        WorkerProcesses.started([])
        for observation in observations { observation.invalidate() }
        if !mounts.isEmpty { album.localizedAdditionalDescription = "\(outcome.imported) of \(total)" }
        if outcome.failedWorkers > 0 && !album.isCancelled {
            album.fail(IncompleteImport(failed: outcome.failedWorkers, photos: count, unit: "workers"))
        }
        if mounts.isEmpty { album.fail(IncompleteImport(failed: count, photos: count, unit: "workers")) }
        return outcome
    }

    /// Why the album failed: some of its photos did.
    struct IncompleteImport: Error, CustomStringConvertible {
        let failed: Int
        let photos: Int
        var unit = "photos"
        var description: String { "\(failed) of \(photos) \(unit) failed" }
    }

    static func seconds(_ duration: Duration) -> String {
        let tenths = Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18) * 10)
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// The worker processes running, so that a parent ended by a signal ends them too.
enum WorkerProcesses {
    private static let running = Mutex<[Int32]>([])

    static func started(_ identifiers: [Int32]) {
        running.withLock { $0 = identifiers }
    }

    static func terminate() {
        for pid in running.withLock({ $0 }) { kill(pid, SIGTERM) }
    }
}
