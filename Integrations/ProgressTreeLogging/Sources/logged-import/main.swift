// logged-import: a small photo import that logs each photo's decisions through swift-log while its
// progress is live, every record printed above the tree by `ProgressLogHandler`.
//
//   swift run logged-import                     # live on a terminal, plain lines when piped
//   swift run logged-import --verbose           # debug records too
//   swift run logged-import --progress json     # JSON lines on standard output, records on standard error
//   swift run logged-import --photos 40 --delay-ms 20
//
// The root package's photo-import cannot depend on swift-log (the root keeps no dependencies), so this
// example lives in the integration package.

import Foundation
import Logging
import ProgressTree
import ProgressTreeLogging
import ProgressTreeTerminal

var arguments = CommandLine.arguments.dropFirst()
var verbose = false
var mode = TerminalRenderer.Mode.auto
var photoCount = 12
var delay = Duration.milliseconds(150)
while let argument = arguments.popFirst() {
    switch argument {
    case "--verbose", "-v": verbose = true
    case "--progress": mode = arguments.popFirst().flatMap(TerminalRenderer.Mode.init(rawValue:)) ?? mode
    case "--photos": photoCount = arguments.popFirst().flatMap { Int($0) }.map { max(1, $0) } ?? photoCount
    case "--delay-ms": delay = .milliseconds(arguments.popFirst().flatMap { Int($0) } ?? 150)
    case "--help", "-h":
        print(
            """
            usage: logged-import [--verbose] [--progress auto|live|plain|json|none] [--photos N] [--delay-ms MS]
            Imports N made-up photos, logging each decision through swift-log above the live progress.
            """)
        exit(0)
    default:
        FileDescriptorOutput.standardError.write("logged-import: unknown option \(argument)\n")
        exit(2)
    }
}

// One console for every logger, bootstrapped before the renderer exists; the renderer is attached below.
let console = ProgressLogConsole()
let level: Logger.Level = verbose ? .debug : .info
LoggingSystem.bootstrap { label in
    var handler = ProgressLogHandler(label: label, console: console)
    handler.logLevel = level
    handler.progressNode = .current
    return handler
}
let logger = Logger(label: "photo-import")

let album = ProgressNode.discreteProgress(totalUnitCount: Int64(photoCount))
album.localizedDescription = "Importing \(photoCount) photos"
// JSON lines alone on standard output; the records go to the console's fallback, standard error.
let renderer = TerminalRenderer(
    album, mode: mode, output: mode == .json ? FileDescriptorOutput.standardOutput : .standardError)
console.renderer = renderer

renderer.start()
logger.info("importing", metadata: ["photos": "\(photoCount)"])
for index in 1...photoCount {
    let name = "IMG_\(String(10000 + index).dropFirst()).jpg"
    let photo = ProgressNode(totalUnitCount: 4, parent: album, pendingUnitCount: 1)
    photo.localizedDescription = name
    photo.performAsCurrent(withPendingUnitCount: 0) {
        logger.debug("reading", metadata: ["photo": "\(name)"])
        for _ in 0..<4 {
            let (seconds, attoseconds) = delay.components
            Thread.sleep(forTimeInterval: (Double(seconds) + Double(attoseconds) / 1e18) / 4)
            // The decision is logged before the photo's last unit: while it is still part of the album,
            // so that its record names its place ("Importing 5 photos › IMG_0004.jpg").
            if photo.completedUnitCount == 3 {
                if index % 5 == 4 {
                    logger.warning("skipped \(name) (duplicate)", metadata: ["photo": "\(name)"])
                } else {
                    logger.debug("imported", metadata: ["photo": "\(name)"])
                }
            }
            photo.completedUnitCount += 1
        }
    }
}
logger.notice("done", metadata: ["imported": "\(photoCount - photoCount / 5)"])
renderer.stop()
// After stop(): still a whole line, written plainly below the final frame.
logger.info("bye")
