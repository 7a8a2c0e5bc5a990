import ProgressTreeTerminal

/// The command line of message-feed.
struct Options: Sendable {
    var messages = 120
    var speed = 1.0
    var maximumLag = 250
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: message-feed [--messages N] [--speed X] [--max-lag MS] [--progress auto|live|plain|json|none]

          --messages N    how many messages arrive (default 120)
          --speed X       how fast they arrive (default 1.0; 10 is ten times faster)
          --max-lag MS    the most the label may lag behind the newest message (default 250, the time each
                          label stays on screen; larger values show more labels, older ones)
          --progress M    how to show progress (default auto: live on a terminal, plain otherwise)

        Ctrl-C stops the feed.
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
            case "--messages":
                guard let count = Int(try value()), (1...100_000).contains(count) else {
                    throw UsageError(description: "--messages takes a whole number from 1 to 100000")
                }
                messages = count
            case "--speed":
                guard let speed = Double(try value()), speed > 0, speed.isFinite else {
                    throw UsageError(description: "--speed takes a positive number")
                }
                self.speed = speed
            case "--max-lag":
                guard let lag = Int(try value()), (250...60_000).contains(lag) else {
                    throw UsageError(description: "--max-lag takes milliseconds from 250 to 60000")
                }
                maximumLag = lag
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
