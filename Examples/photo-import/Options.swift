import ExampleSupport
import Foundation
import ProgressTreeTerminal

/// The command line of photo-import.
struct Options: ExampleOptions, Sendable {
    var photos = 12
    var speed = 1.0
    var concurrentImports = 3
    /// Every Nth photo's download fails half way (`nil`: none).
    var failEvery: Int?
    /// Every Nth photo is in the library already and is skipped (`nil`: none).
    var skipEvery: Int?
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false
    /// `--workers N`: import in N worker processes of this program, shown as one tree.
    var workers: Int?
    /// `--worker I/N` (set by the parent for its workers): import every Nth photo from the Ith (0-based).
    var workerSlice: (index: Int, count: Int)?
    /// `--destination DIR`: write each photo imported there.
    var destination: String?

    /// The photos this process imports: all of them, or its worker slice.
    var photoIndices: [Int] {
        guard let slice = workerSlice else { return Array(0..<photos) }
        return Array(stride(from: slice.index, to: photos, by: slice.count))
    }

    static let usage = """
        usage: photo-import [--photos N] [--speed X] [--fail-every N] [--skip-every N]
                            [--workers N] [--destination DIR]
                            [--progress auto|live|plain|accessible|json|none]

          --photos N        how many photos to import (default 12)
          --speed X         how fast the simulated work goes (default 1.0; 10 is ten
                            times faster)
          --fail-every N    make every Nth photo's download fail half way: that photo
                            is marked failed, the others are imported, and the exit
                            status is 1
          --skip-every N    every Nth photo is in the library already: it is skipped,
                            and the album's line and the summary count it (3 skipped)
          --workers N       import in N worker processes of this program (each its
                            share of the album), shown as one tree: keys and Ctrl-C
                            reach every worker; a worker that dies is shown failed
                            while the others go on; workers end with the program,
                            however it ends
          --destination DIR write each photo imported to DIR (an existing directory),
                            saying so above the progress; a photo that fails or is
                            cancelled leaves no file behind
          --progress M      how to show progress (default auto: accessible if
                            ACCESSIBLE is set, for a screen reader; else live on a
                            terminal, plain otherwise; accessible: sentences at
                            milestones; json: a line for each change of any node,
                            for other programs)

        Where it goes: progress on standard error, the summary on standard output.
          photo-import 2>&1 | cat            plain lines, as --progress plain
          photo-import --progress json | jq  the JSON lines alone on standard output
                                             (the summary then on standard error)
        Keys while live: p pause, r resume, c cancel. Ctrl-C cancels; a second Ctrl-C
        ends it at once.
        Exit status: 0 imported, 1 some photos (or workers) failed, 2 bad arguments,
        3 cancelled with c, 130 cancelled with Ctrl-C, 143 terminated (SIGTERM),
        129 hung up (SIGHUP: the terminal closed).
        """

    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--photos": photos = try reader.integer(of: argument, in: 0...10_000)
            case "--speed": speed = try reader.positiveNumber(of: argument)
            case "--fail-every": failEvery = try reader.integer(of: argument, in: 1...10_000)
            case "--skip-every": skipEvery = try reader.integer(of: argument, in: 1...10_000)
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--workers": workers = try reader.integer(of: argument, in: 1...64)
            case "--destination":
                let directory = try reader.value(of: argument)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory),
                    isDirectory.boolValue
                else { throw UsageError("--destination needs an existing directory (got \(directory))") }
                destination = directory
            case "--worker":
                // Internal: how a parent started with --workers starts its workers.
                let value = try reader.value(of: argument)
                let parts = value.split(separator: "/").compactMap { Int($0) }
                guard parts.count == 2, parts[1] >= 1, (0..<parts[1]).contains(parts[0]) else {
                    throw UsageError("--worker needs I/N with 0 <= I < N (got \(value))")
                }
                workerSlice = (parts[0], parts[1])
            case "--help", "-h": showHelp = true
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}
