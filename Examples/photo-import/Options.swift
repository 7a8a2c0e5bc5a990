import ProgressTreeTerminal

/// The command line of photo-import.
struct Options: Sendable {
    var photos = 12
    var speed = 1.0
    var concurrentImports = 3
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: photo-import [--photos N] [--speed X] [--progress auto|live|plain|json|none]

          --photos N      how many photos to import (default 12)
          --speed X       how fast the simulated work goes (default 1.0; 10 is ten times faster)
          --progress M    how to show progress (default auto: live on a terminal, plain otherwise)

        Keys while live: p pause, r resume, c cancel. Ctrl-C cancels.
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
            case "--photos":
                guard let count = Int(try value()), (0...10_000).contains(count) else {
                    throw UsageError(description: "--photos takes a whole number from 0 to 10000")
                }
                photos = count
            case "--speed":
                guard let speed = Double(try value()), speed > 0, speed.isFinite else {
                    throw UsageError(description: "--speed takes a positive number")
                }
                self.speed = speed
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
