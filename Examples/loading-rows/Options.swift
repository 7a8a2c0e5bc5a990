import ProgressTreeTerminal

/// The command line of loading-rows.
struct Options: Sendable {
    var rows = 12
    var delay = 2.0
    var fails = false
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: loading-rows [--rows N] [--delay SECONDS] [--fail] [--progress auto|live|plain|json|none]

          --rows N           how many rows to fetch (default 12)
          --delay SECONDS    how long the simulated archive takes to answer (default 2)
          --fail             make the archive fail, to see the error path (exit status 1)
          --progress M       how to show progress (default auto: live on a terminal, plain otherwise)

        The rows are printed as a table on standard output; progress goes to standard error.
        Ctrl-C cancels the fetch (exit status 130).
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else { throw UsageError(description: "\(argument) needs a value") }
                return value
            }
            switch argument {
            case "--rows":
                guard let count = Int(try value()), (0...10_000).contains(count) else {
                    throw UsageError(description: "--rows takes a whole number from 0 to 10000")
                }
                rows = count
            case "--delay":
                guard let delay = Double(try value()), delay >= 0, delay <= 3600 else {
                    throw UsageError(description: "--delay takes seconds from 0 to 3600")
                }
                self.delay = delay
            case "--fail":
                fails = true
            case "--progress":
                let name = try value()
                guard let mode = TerminalRenderer.Mode(rawValue: name) else {
                    throw UsageError(description: "--progress takes auto, live, plain, json or none (got \(name))")
                }
                progress = mode
            case "--help", "-h":
                showHelp = true
            default:
                throw UsageError(description: "unknown argument \(argument)")
            }
        }
    }
}
