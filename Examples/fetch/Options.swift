import ExampleSupport
import Foundation
import ProgressTreeTerminal

/// The command line of fetch.
struct Options: ExampleOptions, Sendable {
    var urls: [URL] = []
    var output = "."
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false

    static let usage = """
        usage: fetch URL… [--output DIR]
                     [--progress auto|live|plain|accessible|json|none]

        Downloads each URL (http or https) with URLSession into DIR (default: the
        current directory), saved under the last component of its path ("index.html"
        when it has none or ends with "/").

          --output DIR    where to save the files; it must exist
          --progress M    how to show progress (default auto: accessible if ACCESSIBLE
                          is set, for a screen reader; else live on a terminal, plain
                          otherwise; accessible: sentences at milestones)

        An existing file is never overwritten: that download fails ("already exists")
        and the others go on. A file appears under its name only once complete. Each
        transfer (its URLSession task) is a child of the tree shown.
        Where it goes: progress on standard error, the summary on standard output.
          fetch URL 2>&1 | cat            plain lines, as --progress plain
          fetch URL --progress json | jq  the JSON lines alone on standard output
                                          (the summary then on standard error)
        Keys while live: c cancel. Ctrl-C cancels the transfers (their connections are
        closed); a second Ctrl-C, SIGTERM and SIGHUP end it at once.
        Exit status: 0 all downloaded, 1 a download failed (an HTTP error, a refused
        connection, a file that exists), 2 bad arguments, 3 cancelled with c,
        130 cancelled with Ctrl-C, 143 terminated (SIGTERM), 129 hung up (SIGHUP: the
        terminal closed).
        """

    init(arguments: [String]) throws {
        var reader = ArgumentReader(arguments)
        var positional: [String] = []
        while let argument = reader.next() {
            switch argument {
            case "--output": output = try reader.value(of: argument)
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--help", "-h": showHelp = true
            default: try reader.addPositional(argument, to: &positional)
            }
        }
        if showHelp { return }
        guard !positional.isEmpty else { throw UsageError("at least one URL is required") }
        urls = try positional.map { text in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                url.host != nil
            else { throw UsageError("not an http or https URL: \(text)") }
            return url
        }
    }

    /// The name `url` is saved under: the last component of its path, or "index.html" when its path names
    /// a folder (it ends with "/", or is empty, "." or "..": `lastPathComponent` would say the folder's
    /// name, "sub" for `http://host/sub/`).
    static func fileName(of url: URL) -> String {
        let name = url.lastPathComponent
        let namesFolder = url.hasDirectoryPath || name.isEmpty || name == "/" || name == "." || name == ".."
        return namesFolder ? "index.html" : name
    }
}
