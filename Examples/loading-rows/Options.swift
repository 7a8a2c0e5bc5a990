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
        usage: loading-rows [--rows N] [--delay SECONDS] [--fail]
                            [--progress auto|live|plain|accessible|json|none]

          --rows N           how many rows to fetch (default 12)
          --delay SECONDS    how long the simulated archive takes to answer (default 2)
          --fail             make the archive fail: the load is shown as failed (exit
                             status 1)
          --progress M       how to show progress (default auto: accessible if
                             ACCESSIBLE is set, for a screen reader; else live on a
                             terminal, plain otherwise; accessible: sentences)

        Where it goes: the table on standard output, progress on standard error.
          loading-rows > rows.txt            only the table in the file
          loading-rows 2>&1 | cat            plain lines, as --progress plain
          loading-rows --progress json | jq  the JSON lines alone on standard output
                                             (the table then on standard error)
        A failed load is shown by the display with its reason (printed on standard
        error only with --progress none or json). Ctrl-C cancels the fetch; a second
        Ctrl-C ends it at once.
        Exit status: 0 loaded, 1 the archive failed, 2 bad arguments, 130 cancelled
        (Ctrl-C), 143 terminated (SIGTERM), 129 hung up (SIGHUP: the terminal closed).
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
