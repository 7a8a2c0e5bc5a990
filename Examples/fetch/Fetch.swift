// fetch — downloads URLs with URLSession, each task a child of the tree shown.
//
//   swift run fetch URL… [--output DIR] [--progress auto|live|plain|accessible|json|none]
//
// The root stands for the downloads, one unit each. Each download is a `URLSessionDownloadTask`, adopted
// as the root's child with ProgressTreeFoundation's `addChild(_:withPendingUnitCount:failsOnHTTPStatus:)`:
// the node it returns follows the task's bytes received of the Content-Length (read 20 times a second, on
// Linux as on Apple platforms: on Linux the task's own `progress` is never updated), and finishes, fails
// (a refused connection, an HTTP status of 400 and above) or is cancelled with the task. It is labelled
// with the file's name and shows the bytes, throughput and time remaining.
//
// Cancelling (Ctrl-C: exit status 130, or `c` while live: 3) cancels the root; the cancellation reaches
// each task's node, whose cancellation handler cancels the task and closes its connection. A file appears
// under its name only once complete (see `SavedFile`), and an existing file is never overwritten.
// URLSession downloads into a temporary folder of fetch's own, removed when it ends (see
// `DownloadsFolder`).

import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreeFoundation
import ProgressTreeTerminal

@main
struct Fetch {
    static func main() async {
        guard let options = Options.parseCommandLine(program: "fetch") else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: options.output, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            fail("\(options.output) is not a folder", status: 1)
        }
        let folder = URL(fileURLWithPath: options.output, isDirectory: true).standardizedFileURL
        var names: [String: URL] = [:]
        for url in options.urls {
            let name = Options.fileName(of: url)
            if let other = names[name] { fail("\(other) and \(url) would both be saved as \(name)", status: 1) }
            names[name] = url
        }

        let count = options.urls.count
        let root = ProgressNode.discreteProgress(totalUnitCount: Int64(count))
        root.localizedDescription = "Downloading \(count) \(count == 1 ? "file" : "files")"
        DownloadsFolder.create()  // before the display starts threads that read the environment
        let display = ExampleDisplay(
            root, mode: options.progress, keys: .cancel,
            cleanUp: {
                SavedFile.removeAll()
                DownloadsFolder.remove()
            })
        let start = ContinuousClock.now
        display.renderer.start()

        let downloader = Downloader()
        let immediate = downloader.add(options.urls, into: folder, under: root)
        display.renderer.drawFrame()  // every download is in the log from its first line (plain, json)
        downloader.resume()
        await downloader.wait()
        DownloadsFolder.remove()  // every download is placed or failed: what is left there is not wanted
        let outcomes = immediate.compactMap { $0 } + downloader.outcomes
        let failed = outcomes.filter { if case .failed = $0 { true } else { false } }.count
        let saved = outcomes.compactMap { if case .saved(let bytes) = $0 { bytes } else { nil } }
        if failed > 0 && !root.isCancelled {
            root.fail(Downloader.Failure(description: "\(failed) of \(count) failed"))
        }
        display.stop()

        let bytes = saved.reduce(0, +)
        let amount =
            "\(saved.count) of \(count) \(count == 1 ? "file" : "files") (\(bytes == 0 ? "0 bytes" : ProgressFormat.byteCount(bytes)))"
        if root.isCancelled {
            let percent = Int((root.fractionCompleted * 100).rounded(.down))
            display.report("Cancelled at \(percent)%: \(amount) downloaded to \(folder.path)")
            exit(display.exitStatusAfterCancelling)
        }
        if failed > 0 {
            display.report("Downloaded \(amount) to \(folder.path), \(failed) failed")
            exit(1)
        }
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        display.report(
            "Downloaded \(count) \(count == 1 ? "file" : "files") (\(bytes == 0 ? "0 bytes" : ProgressFormat.byteCount(bytes))) "
                + "to \(folder.path) in \(String(format: "%.1f", seconds)) s")
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("fetch: \(TerminalText.printable(message))\n".utf8))
        exit(status)
    }
}
