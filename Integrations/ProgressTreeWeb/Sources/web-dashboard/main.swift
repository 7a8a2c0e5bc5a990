// web-dashboard: photo-import's job, served as a live page (ProgressTreeWeb).
//
//   swift run --package-path Integrations/ProgressTreeWeb web-dashboard [--port N] [--photos N] [--speed X]
//       [--fail-every N] [--read-only] [--host ADDRESS]
//
// Its first line on standard output is the page's URL, http://127.0.0.1:PORT/ (--port 0, the default: any
// free port): the page at /, the event stream at /events (`curl -N URL/events`). It keeps serving the final
// state after the job ends, until Ctrl-C (exit status 130) or SIGTERM (143). --host names another address
// to listen on (0.0.0.0: every interface; whoever reaches it can read the tree, and with the token, which
// the page gets from the server, cancel it); --read-only serves no token, so nobody can.

import Dispatch
import ProgressTree
import ProgressTreeStreaming
import ProgressTreeWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: web-dashboard [--port N] [--photos N] [--speed X] [--fail-every N] [--read-only] [--host ADDRESS]

      --port N          the port to listen on (default 0: any free port)
      --photos N        how many photos to import (default 12)
      --speed X         how fast the simulated work goes (default 1.0; 10 is ten times faster)
      --fail-every N    make every Nth photo's download fail half way
      --read-only       serve no token: the page shows the job, nobody can cancel or pause it
      --host ADDRESS    the numeric address to listen on (default 127.0.0.1)

    The first line on standard output is the page's URL. It serves the final state after the job
    ends, until Ctrl-C (exit status 130) or SIGTERM (143).
    """

/// Writes `text` to standard error (unbuffered).
func printError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

func fail(_ message: String) -> Never {
    printError("web-dashboard: \(message)\n\(usage)\n")
    exit(2)
}

var job = PhotoJob()
var port = 0
var host = "127.0.0.1"
var readOnly = false
var arguments = CommandLine.arguments.dropFirst()
func value(of argument: String, from arguments: inout ArraySlice<String>) -> String {
    guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
    return value
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--port":
        guard let number = Int(value(of: argument, from: &arguments)), (0...65535).contains(number) else {
            fail("bad --port")
        }
        port = number
    case "--photos":
        guard let number = Int(value(of: argument, from: &arguments)), (0...10_000).contains(number) else {
            fail("bad --photos")
        }
        job.photos = number
    case "--speed":
        guard let number = Double(value(of: argument, from: &arguments)), number > 0, number.isFinite else {
            fail("bad --speed")
        }
        job.speed = number
    case "--fail-every":
        guard let number = Int(value(of: argument, from: &arguments)), (1...10_000).contains(number) else {
            fail("bad --fail-every")
        }
        job.failEvery = number
    case "--read-only": readOnly = true
    case "--host": host = value(of: argument, from: &arguments)
    case "--help", "-h":
        print(usage)
        exit(0)
    default: fail("unknown argument \(argument)")
    }
}

let album = ProgressNode.discreteProgress(totalUnitCount: Int64(max(job.photos, 1)))
album.localizedDescription = "Importing \(job.photos) photos"
album.isPausable = true
var options = ProgressWebRoutes.Options()
options.isReadOnly = readOnly
let server = ProgressWebServer(
    album, port: port, address: host == "127.0.0.1" ? .loopback : .unprotected(host), options: options)
do {
    try await server.start()
} catch {
    printError("web-dashboard: cannot listen on \(host):\(port): \(error)\n")
    exit(1)
}
// The first line on standard output, written at once (not through the buffer of `print`).
_ = "\(server.url ?? "")\n".withCString { write(1, $0, strlen($0)) }

// Ctrl-C and SIGTERM: the job is cancelled, the streams end, the server stops, and the status says which.
let signals = [(SIGINT, Int32(130)), (SIGTERM, Int32(143))].map { signalNumber, status in
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        album.cancel()
        Task {
            // A server that does not stop within 2 seconds does not keep the program.
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { exit(status) }
            await server.stop()
            exit(status)
        }
    }
    source.resume()
    return source
}

let outcome = await job.run(into: album)
if album.isCancelled {
    // Its final line says so.
} else if outcome.failed > 0 {
    // Incomplete: the album fails too, as photo-import's does.
    album.fail(PhotoJob.Incomplete(failed: outcome.failed, cancelled: outcome.cancelled, photos: job.photos))
} else if outcome.cancelled > 0 {
    // Photos cancelled on their own (a Cancel on a photo's row) were taken out of the work: the album is
    // done with the others. A cancelled photo is never counted as done, so the album finishes by hand, its
    // counts saying what was imported (the page adds "1 cancelled").
    album.localizedAdditionalDescription = "\(outcome.imported) of \(job.photos) imported"
    album.completedUnitCount = album.totalUnitCount
} else if job.photos == 0 {
    album.completedUnitCount = 1
}
printError("web-dashboard: the job ended; serving its final state until Ctrl-C\n")
while true {
    try? await Task.sleep(for: .seconds(3600))
}
