import ExampleSupport
import ProgressTreeTerminal

/// The command line of photo-import.
struct Options: Sendable {
    var photos = 12
    var speed = 1.0
    var concurrentImports = 3
    /// Every Nth photo's download fails half way (`nil`: none).
    var failEvery: Int?
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: photo-import [--photos N] [--speed X] [--fail-every N] [--progress auto|live|plain|json|none]

          --photos N        how many photos to import (default 12)
          --speed X         how fast the simulated work goes (default 1.0; 10 is ten times faster)
          --fail-every N    make every Nth photo's download fail half way: that photo is marked failed,
                            the others are imported, and the exit status is 1
          --progress M      how to show progress (default auto: live on a terminal, plain otherwise)

        Keys while live: p pause, r resume, c cancel. Ctrl-C cancels; a second Ctrl-C ends it at once.
        Exit status: 0 imported, 2 bad arguments, 130 cancelled (Ctrl-C or c), 143 terminated (SIGTERM),
        129 hung up (SIGHUP: the terminal closed).
        """


    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--photos": photos = try reader.integer(of: argument, in: 0...10_000)
            case "--speed": speed = try reader.positiveNumber(of: argument)
            case "--fail-every": failEvery = try reader.integer(of: argument, in: 1...10_000)
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--help", "-h": showHelp = true
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}
