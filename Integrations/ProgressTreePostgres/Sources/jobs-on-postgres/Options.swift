import Foundation
import Logging
import ProgressTreePostgres

let usage = """
    usage: jobs-on-postgres worker --postgres URL [--job ID] [--photos N] [--step-ms N] [--heartbeat-timeout S]
                                   [--retention S] [--fail PHOTO]
           jobs-on-postgres serve --postgres URL [--port N] [--address A] [--allowed-host NAME]...
                                  [--allowed-origin ORIGIN]...
    """

/// A command line that cannot be run: its message, then the usage, exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The command line's options, as name and value pairs, in order.
struct OptionList {
    private(set) var pairs: [(name: String, value: String)] = []

    init(_ arguments: [String], known: Set<String>) throws {
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard known.contains(name) else { throw UsageError("unknown option \(name)") }
            guard let value = rest.popFirst() else { throw UsageError("\(name) needs a value") }
            pairs.append((name, value))
        }
    }

    func last(_ name: String) -> String? {
        pairs.last { $0.name == name }?.value
    }

    func all(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    func number(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = last(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) \(text): give a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// The store `--postgres URL` names, with the options of a worker or an instance.
    func store(options: ProgressJobStore.Options) throws -> ProgressJobStore {
        guard let url = last("--postgres") else { throw UsageError("--postgres URL is required") }
        guard let server = ProgressJobStore.Server(url: url) else {
            throw UsageError("--postgres \(url): write postgres://user[:password]@host[:port][/database]")
        }
        var logger = Logger(label: "jobs-on-postgres") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return ProgressJobStore(server: server, options: options, logger: logger)
    }
}

/// Writes `line` to standard output at once (a script reads it while the program runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
