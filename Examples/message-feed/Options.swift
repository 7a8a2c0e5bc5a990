import ExampleSupport
import ProgressTreeTerminal

/// The command line of message-feed.
struct Options: ExampleOptions, Sendable {
    var messages = 120
    var speed = 1.0
    var maximumLag = 250
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: message-feed [--messages N] [--speed X] [--max-lag MS]
                            [--progress auto|live|plain|accessible|json|none]

          --messages N    how many messages arrive (default 120)
          --speed X       how fast they arrive (default 1.0; 10 is ten times faster)
          --max-lag MS    the most the label may lag behind the newest message (default
                          250, the time each label stays on screen; larger values show
                          more labels, older ones)
          --progress M    how to show progress (default auto: accessible if ACCESSIBLE
                          is set, for a screen reader; else live on a terminal, plain
                          otherwise; accessible: sentences at milestones)

        Where it goes: progress on standard error, the summary on standard output.
          message-feed 2>&1 | cat            plain lines, as --progress plain
          message-feed --progress json | jq  the JSON lines alone on standard output
                                             (the summary then on standard error)
        Ctrl-C stops the feed; a second Ctrl-C ends it at once.
        Exit status: 0 all received, 2 bad arguments, 130 stopped (Ctrl-C),
        143 terminated (SIGTERM), 129 hung up (SIGHUP: the terminal closed).
        """

    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--messages": messages = try reader.integer(of: argument, in: 1...100_000)
            case "--speed": speed = try reader.positiveNumber(of: argument)
            case "--max-lag": maximumLag = try reader.integer(of: argument, in: 250...60_000, meaning: "milliseconds")
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--help", "-h": showHelp = true
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}
