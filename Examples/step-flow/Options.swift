import ExampleSupport
import Foundation
import ProgressTreeTerminal

/// The command line of step-flow.
struct Options: ExampleOptions, Sendable {
    enum Mode: String, Sendable {
        case auto, live, plain, accessible
    }

    var mode = Mode.auto
    var keys = false
    var speed = 1.0
    var showHelp = false

    static let usage = """
        usage: step-flow [--keys] [--speed X] [--progress auto|live|plain|accessible]

          --keys          drive the flow with keys instead of the script (on a
                          terminal): n next, b back, s swipe back half way and let go,
                          f swipe back, q quit
          --speed X       how fast the script goes (default 1.0; 2 is twice as fast)
          --progress M    auto (default): accessible if ACCESSIBLE is set (a screen
                          reader), else live on a terminal, plain otherwise; live
                          animates one line in place; plain prints the script's frames
                          as lines (simulated time) and exits; accessible says each
                          step in a sentence (simulated time) and exits

        Where it goes: the flow is drawn on standard output (live) or printed there as
        lines (plain); nothing goes to standard error.
        Ctrl-C quits; a second Ctrl-C ends it at once.
        Exit status: 0 done (or q), 2 bad arguments, 130 quit with Ctrl-C,
        143 terminated (SIGTERM), 129 hung up (SIGHUP: the terminal closed).
        """

    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--keys": keys = true
            case "--speed": speed = try reader.positiveNumber(of: argument)
            case "--progress": mode = try reader.choice(of: argument, among: [Mode.auto, .live, .plain, .accessible])
            case "--help", "-h": showHelp = true
            default: throw UsageError("unknown argument \(argument)")
            }
        }
        if keys && !isLive {
            throw UsageError("--keys needs a terminal (live mode)")
        }
    }

    /// Live on a terminal (and `TERM` is not `dumb`), unless asked otherwise or a screen reader is used.
    var isLive: Bool {
        switch mode {
        case .live: true
        case .plain, .accessible: false
        case .auto:
            !isAccessible && isatty(1) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        }
    }

    /// Sentences for a screen reader: asked for, or `ACCESSIBLE` says so (the renderer's rule).
    var isAccessible: Bool {
        mode == .accessible || (mode == .auto && TerminalRenderer.isAccessibleModeRequested())
    }
}
