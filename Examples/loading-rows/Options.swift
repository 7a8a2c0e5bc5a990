import ExampleSupport
import ProgressTreeTerminal

/// The command line of loading-rows.
struct Options: ExampleOptions, Sendable {
    var rows = 12
    var delay = 2.0
    var fails = false
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: loading-rows [--rows N] [--delay SECONDS] [--fail] [--progress auto|live|plain|json|none]

          --rows N           how many rows to fetch (default 12)
          --delay SECONDS    how long the simulated archive takes to answer (default 2)
          --fail             make the archive fail: the load is shown as failed (exit status 1)
          --progress M       how to show progress (default auto: live on a terminal, plain otherwise)

        The rows are printed as a table on standard output; progress goes to standard error.
        Ctrl-C cancels the fetch; a second Ctrl-C ends it at once.
        Exit status: 0 loaded, 1 the archive failed, 2 bad arguments, 130 cancelled (Ctrl-C),
        143 terminated (SIGTERM), 129 hung up (SIGHUP: the terminal closed).
        """


    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--rows": rows = try reader.integer(of: argument, in: 0...10_000)
            case "--delay":
                guard let delay = Double(try reader.value(of: argument)), delay >= 0, delay <= 3600 else {
                    throw UsageError("--delay takes seconds from 0 to 3600")
                }
                self.delay = delay
            case "--fail": fails = true
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--help", "-h": showHelp = true
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}
