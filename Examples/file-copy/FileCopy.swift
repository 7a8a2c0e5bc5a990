// file-copy — copies a directory tree with byte-accurate progress.
//
//   swift run file-copy SOURCE DEST [--limit RATE] [--progress auto|live|plain|accessible|json|none]
//
// While SOURCE is searched (seconds for a large tree), the root is an indeterminate node: a spinner and
// the count found so far. Then the progress tree: the same root, now of kind `.file` (its units are the
// bytes of every file), that says it is copying (`fileOperationKind = .copying`) and how many files (`fileTotalCount`), and one child per file,
// also of kind `.file`, created when that file's copy starts, its units the file's bytes. The renderer
// labels the root "Copying 9 files…" with its throughput and time remaining, and each file "Copying
// “name”…" with its bytes.
//
// Per-file labels: live, file names also go to a `LabelPacer`, whose labels are printed above the live
// area (`renderer.print`). The live tree already shows the file being copied; the printed labels are the
// readable history: a folder of thousands of small files scrolls by at most four names a second instead of
// a blur, a big file's name is always printed, and the files the pacer skipped are accounted for in one
// line ("  5–7/8  3 more files (450 KB)", see `FileHistory`). Small files are offered to the pacer at most
// every 50 ms (it shows one each quarter-second at most): each offer is a hand-off to another thread,
// dearer than copying such a file. In plain mode (a log, read afterwards) every file gets its line, in
// order, before its own "started" line.
//
// The copy works like `cp -a`: each folder of SOURCE is read once (its names, then one `fstatat` each),
// each folder of SOURCE and DEST is opened once and its entries are reached from it (`openat`, `mkdirat`,
// `symlinkat`), file data moves inside the kernel (`copy_file_range`), and metadata is set on the open
// file (`fchown`, `fchmod`, `futimens`): about 10 system calls a small file, against `cp -a`'s 17.
// Benchmarks/file-copy-vs-cp.sh measures both side by side.
//
// Files are written under a temporary name (".name.file-copy-partial", shortened for a long name, never
// one that exists: see `PartialFile.create`) in their destination folder and renamed, without ever
// replacing an entry (`renameat2` with `RENAME_NOREPLACE`), when complete. Ctrl-C (or `c`) cancels: the
// files already copied stay, being complete; the one being copied is removed (130, or 3 for `c`); a copy
// stopped before its first file removes the DEST it created (folders only), so the command runs again.
// A second Ctrl-C, SIGTERM and SIGHUP exit at once, also removing it (130, 143, 129).
// An error (a file that cannot be read or written) stops the copy: the file's node fails with the error
// (the renderer marks it `!` with the reason), then the root; its partial copy is removed, the files
// already copied stay, and the exit status is 1.
//
// What `cp -a` keeps is kept: permissions and times of files, links and directories (a directory's are
// set once its contents are in), their owner and group where the process may set them (as root), the holes
// of sparse files, and hard links within the tree.

import Dispatch
import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreePresentation
import ProgressTreeTerminal
import Synchronization

@main
struct FileCopy {
    static func main() async {
        guard let options = Options.parseCommandLine(program: "file-copy") else { return }

        // Everything that can be checked is checked before anything is created: the arguments first, at
        // once, then every entry of SOURCE.
        do {
            try CopyPlan.checkArguments(source: options.source, destination: options.destination)
        } catch {
            fail("\(error)", status: 1)
        }

        // While SOURCE is searched (seconds for a large tree), the root is indeterminate: a spinner and
        // the count found so far. Then it becomes the copy's: its units the bytes of every file.
        let root = ProgressNode.discreteProgress(totalUnitCount: -1)
        root.localizedDescription = "Looking for files in \(TerminalText.printable(options.source))…"
        root.isPausable = true

        let partialFile = PartialFile()
        // A second Ctrl-C, SIGTERM (kill, timeout, a service manager) and SIGHUP (the terminal closed) end
        // the program at once: the file being copied is removed, and the status is 130, 143 or 129.
        let display = ExampleDisplay(
            root, mode: options.progress, keys: .pauseResumeCancel,
            cleanUp: { partialFile.removeForGood() })
        let renderer = display.renderer
        let labelQueue = DispatchQueue(label: "file-copy.labels")
        let files = FileHistory()
        let pacer = LabelPacer(queue: labelQueue) { display in
            guard let label = display.label else { return }
            for line in files.lines(showing: label) { renderer.print(line) }
        }
        func stopShowing() {
            display.stop()
        }

        renderer.start()
        let plan: CopyPlan
        do {
            plan = try await scan(options, showingOn: root)
        } catch is CancellationError {
            stopShowing()
            display.report("Cancelled while looking for files in \(options.source): nothing was copied.")
            exit(display.exitStatusAfterCancelling)
        } catch {
            root.cancel()  // the display marks the search as stopped
            stopShowing()
            fail("\(error)", status: 1)
        }
        // For its owner only until the copy ends and it gets SOURCE's permissions; kept open, so that each
        // folder in it is reached from it.
        let destinationFolder =
            mkdir(plan.destination, 0o700) == 0
            ? open(plan.destination, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1
        guard destinationFolder >= 0 else {
            let reason = String(cString: strerror(errno))
            root.cancel()
            stopShowing()
            fail("cannot create \(plan.destination): \(reason)", status: 1)
        }

        root.localizedDescription = nil  // the default label: "Copying 9 files…"
        root.kind = .file
        root.fileOperationKind = .copying
        root.fileTotalCount = plan.fileCount
        root.fileCompletedCount = 0  // counted as files finish; the root line says "3 of 9 files"
        // A tree without a single byte still shows its files: one unit, completed at the end.
        root.totalUnitCount = max(plan.totalBytes, 1)

        files.fileCount = plan.fileCount
        let copier = Copier(
            plan: plan, partialFile: partialFile,
            onFileStart: { number, path, size in
                if renderer.mode == .plain {
                    // A log is read afterwards, not as it scrolls: every file, in order, before its own
                    // "started" line (printed now, before its node exists).
                    renderer.print(files.label(number: number, path: path(), size: size))
                } else if files.started(number: number, size: size) {
                    // A name is one line, whatever it holds (the renderer would split it at a line break).
                    let label = files.label(number: number, path: path(), size: size)
                    files.offered(number: number, label: label)
                    pacer.send(progress: nil, label: label)
                }
            },
            limit: options.limit, pauseAfterBytes: options.pauseAfterBytes, failAfterBytes: options.failAfterBytes)

        let start = ContinuousClock.now
        let outcome = await copier.copy(into: root, destinationFolder: destinationFolder)
        close(destinationFolder)
        if let error = outcome.error { root.fail(error) }  // the copy stopped on an error: failed, with it
        if plan.totalBytes == 0 && !root.isCancelled && !root.isFailed { root.completedUnitCount = 1 }
        pacer.invalidate()
        labelQueue.sync {}  // a label being printed lands before the final frame
        for line in files.remainingLines() { renderer.print(line) }  // the files the pacer did not show
        stopShowing()

        let copied =
            "\(ProgressFormat.count(outcome.filesCopied)) of \(ProgressFormat.count(plan.fileCount)) files "
            + "(\(bytes(outcome.bytesCopied)))"
        let removed = outcome.interruptedFile.map { "; the partial copy of \($0) was removed" } ?? ""
        // A stopped copy that copied no file takes back the folders it made, so that the same command works
        // again; one that copied some keeps them, and says how to go on (file-copy never overwrites).
        let stopped = outcome.error != nil || outcome.isCancelled
        let next =
            !stopped
            ? ""
            : outcome.filesCopied == 0 && removeFoldersOnly(plan.destination)
                ? " Nothing was copied: \(plan.destination) was removed, run the same command to start again."
                : " To copy again, remove \(plan.destination) or give another destination."
        if let error = outcome.error {
            fail("\(error)\n\(copied) were copied to \(plan.destination)\(removed).\(next)", status: 1)
        }
        if outcome.isCancelled {
            let percent = Int((root.fractionCompleted * 100).rounded(.down))  // as the bar shows it
            display.report("Cancelled at \(percent)%: \(copied) copied to \(plan.destination)\(removed).\(next)")
            exit(display.exitStatusAfterCancelling)
        }
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let bytesPerSecond = seconds > 0 ? Int(Double(plan.totalBytes) / seconds) : 0
        let rate = ProgressFormat.throughput(bytesPerSecond).map { ", \($0)" } ?? ""
        display.report(
            "Copied \(ProgressFormat.count(plan.fileCount)) \(plan.fileCount == 1 ? "file" : "files") "
                + "(\(bytes(plan.totalBytes))) to \(plan.destination) "
                + "in \(String(format: "%.1f", seconds)) s\(rate)")
        if !plan.skipped.isEmpty {
            let some = plan.skipped.prefix(3).joined(separator: ", ")
            display.report("Skipped \(plan.skipped.count) special files (sockets, FIFOs, devices): \(some)")
        }
    }

    /// Removes `destination`, which this run created, if it holds folders only (no file, link or other
    /// entry: nothing was copied into it); returns whether it is gone. Anything else is left as it is.
    static func removeFoldersOnly(_ destination: String) -> Bool {
        let files = FileManager.default
        guard let entries = files.enumerator(atPath: destination)?.allObjects as? [String] else { return false }
        for entry in entries {
            let type = (try? files.attributesOfItem(atPath: destination + "/" + entry))?[.type] as? FileAttributeType
            guard type == .typeDirectory else { return false }
        }
        return (try? files.removeItem(atPath: destination)) != nil
    }

    /// Finds what to copy, on a thread of its own, writing the count found so far into `root`'s label;
    /// `root.cancel()` stops it (`CancellationError`).
    static func scan(_ options: Options, showingOn root: ProgressNode) async throws -> CopyPlan {
        let label = root.localizedDescription ?? ""
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try CopyPlan(
                            source: options.source, destination: options.destination,
                            onFound: { found in
                                guard found > 0 else { return }
                                root.localizedDescription = label + " \(ProgressFormat.count(found)) found"
                            },
                            isCancelled: { root.isCancelled }, pauseAfterEntries: options.pauseAfterEntries)
                    })
            }
        }
    }

    /// A byte count as the summaries say it: like the display ("4.2 MB"), but "0 bytes" for nothing (the
    /// display's formatter says "Zero KB", as Apple's does).
    static func bytes(_ count: Int64) -> String {
        FileHistory.bytes(count)
    }

    /// Reports an error and exits. The message's lines are kept; control characters in them (from paths)
    /// are shown as spaces.
    static func fail(_ message: String, status: Int32) -> Never {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map {
            TerminalText.printable(String($0))
        }
        FileHandle.standardError.write(Data("file-copy: \(lines.joined(separator: "\n"))\n".utf8))
        exit(status)
    }
}
