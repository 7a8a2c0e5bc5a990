// photo-import — the main demo of ProgressTree.
//
// An album of photos imported concurrently. Each photo import is a download worth 9 units (a file node
// with bytes, an estimated throughput and its file name) plus a filter worth 1 unit that reports through
// implicit, task-local composition (`withCurrent`), as in Apple's PhotoProgress sample. The album's node
// composes the photos and the terminal renderer shows the whole tree live.
//
//   swift run photo-import [--photos N] [--speed X] [--fail-every N] [--progress auto|live|plain|json|none]
//
// Keys while live: p pause, r resume, c cancel. Ctrl-C cancels cleanly.
//
// `--fail-every N` makes every Nth download fail half way: that photo is marked failed (its download and
// filter are cancelled), the import goes on with the others, and at the end the album is failed too, since
// it is incomplete: "Imported 11 photos, 1 failed", exit status 1.

import Dispatch
import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreeTerminal
import Synchronization

@main
struct PhotoImport {
    static func main() async {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("photo-import: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.showHelp {
            print(Options.usage)
            return
        }

        // An album of no photos is one unit, completed at the end: a node of 0 units would never finish,
        // and the log would never say the import is done.
        let album = ProgressNode.discreteProgress(totalUnitCount: Int64(max(options.photos, 1)))
        if options.photos == 0 { album.localizedAdditionalDescription = "0 of 0" }
        album.localizedDescription = "Importing \(options.photos) photos"
        album.isPausable = true

        let keyReader = TerminalKeyReader()  // nil when standard input is not a terminal
        var display = TerminalRenderer.Options()
        display.hint = keyReader != nil ? "Keys: p pause · r resume · c cancel · Ctrl-C cancel" : nil
        let renderer = TerminalRenderer(album, mode: options.progress, options: display)
        let keys = renderer.mode == .live ? keyReader : nil
        let interrupts = InterruptHandler {
            album.cancel()
        } cleanUp: {
            renderer.stop()
            keys?.stop()
        }
        keys?.start { key in
            switch key {
            case "p": album.pause()
            case "r": album.resume()
            case "c": album.cancel()
            default: break
            }
        }

        let start = ContinuousClock.now
        renderer.start()
        let outcome = await Importer(options: options).importAlbum(into: album)
        let imported = outcome.imported
        if options.photos == 0 { album.completedUnitCount = 1 }
        if outcome.failed > 0 {
            // A failed photo is never counted as done, so the album cannot finish: we decide it failed.
            album.fail(IncompleteImport(failed: outcome.failed, photos: options.photos))
        }
        renderer.stop()
        keys?.stop()
        interrupts.stop()

        let elapsed = start.duration(to: .now)
        if album.isCancelled {
            let percent = Int((album.fractionCompleted * 100).rounded(.down))
            print("Cancelled at \(percent)%: \(imported) of \(options.photos) photos imported")
            exit(InterruptHandler.ExitStatus.interrupted)
        } else if outcome.failed > 0 {
            print("Imported \(imported) \(imported == 1 ? "photo" : "photos"), \(outcome.failed) failed, in \(seconds(elapsed)) s")
            exit(1)
        } else {
            print("Imported \(imported) \(imported == 1 ? "photo" : "photos") in \(seconds(elapsed)) s")
        }
    }

    /// Why the album failed: some of its photos did.
    struct IncompleteImport: Error, CustomStringConvertible {
        let failed: Int
        let photos: Int
        var description: String { "\(failed) of \(photos) photos failed" }
    }

    static func seconds(_ duration: Duration) -> String {
        let tenths = Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18) * 10)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
