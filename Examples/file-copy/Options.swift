import ExampleSupport
import ProgressTreeTerminal

/// The command line of file-copy.
struct Options: ExampleOptions, Sendable {
    var source = ""
    var destination = ""
    var progress = TerminalRenderer.Mode.auto
    var showHelp = false
    /// The most bytes per second to copy, or `nil` for as fast as the disks go.
    var limit: Int64?
    /// For tests (not in the usage): after copying this many bytes, pause the copy and say so on standard
    /// error, so a test can send Ctrl-C at a known point, in the middle of a file.
    var pauseAfterBytes: Int64?
    /// For tests (not in the usage): the read of the chunk that crosses this many bytes fails with an I/O
    /// error (EIO), as a disk going away mid-copy would.
    var failAfterBytes: Int64?
    /// For tests (not in the usage): stop the scan after this many entries and say so on standard error,
    /// so a test can send Ctrl-C while the program is looking for files.
    var pauseAfterEntries: Int?

    static let usage = """
        usage: file-copy SOURCE DEST [--limit RATE]
                         [--progress auto|live|plain|accessible|json|none]

        Copies the directory tree SOURCE to DEST, which must not exist yet (file-copy
        never overwrites).

          --limit RATE    copy at most RATE bytes a second; suffixes K, M, G (1000s):
                          --limit 50M
          --progress M    how to show progress (default auto: accessible if ACCESSIBLE
                          is set, for a screen reader; else live on a terminal, plain
                          otherwise; accessible: sentences at milestones)

        Each file is written under a temporary name in its destination folder and
        renamed when complete, so DEST never holds a partially written file. Keys while
        live: p pause, r resume, c cancel. Ctrl-C cancels: the files already copied
        stay, the one being copied is removed (also on a second Ctrl-C, SIGTERM and
        SIGHUP, which end it at once); a copy stopped before its first file removes
        the DEST it created, so that the same command runs again. An error (a file
        that cannot be read or written) stops the copy: that file is marked failed
        with the error, its partial copy is removed, and the files already copied
        stay.
        Where it goes: progress on standard error, the summary on standard output.
          file-copy SOURCE DEST 2>&1 | cat            plain lines, as --progress plain
          file-copy SOURCE DEST --progress json | jq  the JSON lines alone on standard
                                                      output (the summary on standard
                                                      error)
        Exit status: 0 copied, 1 error (nothing deleted), 2 bad arguments,
        3 cancelled with c, 130 cancelled with Ctrl-C, 143 terminated (SIGTERM),
        129 hung up (SIGHUP: the terminal closed).
        """

    init(arguments: [String]) throws {
        var positional: [String] = []
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            switch argument {
            case "--progress": progress = try reader.progressMode(of: argument)
            case "--limit":
                let text = try reader.value(of: argument)
                guard let rate = Self.byteCount(text), rate > 0 else {
                    throw UsageError("--limit takes bytes a second, such as 500K or 50M (got \(text))")
                }
                limit = rate
            case "--pause-after-bytes":
                guard let bytes = Int64(try reader.value(of: argument)), bytes > 0 else {
                    throw UsageError("--pause-after-bytes takes a positive number of bytes")
                }
                pauseAfterBytes = bytes
            case "--fail-after-bytes":
                guard let bytes = Int64(try reader.value(of: argument)), bytes > 0 else {
                    throw UsageError("--fail-after-bytes takes a positive number of bytes")
                }
                failAfterBytes = bytes
            case "--pause-after-entries":
                guard let entries = Int(try reader.value(of: argument)), entries > 0 else {
                    throw UsageError("--pause-after-entries takes a positive number of entries")
                }
                pauseAfterEntries = entries
            case "--help", "-h": showHelp = true
            default: try reader.addPositional(argument, to: &positional)
            }
        }
        if showHelp { return }
        guard positional.count == 2 else {
            throw UsageError(positional.count < 2 ? "SOURCE and DEST are required" : "too many arguments")
        }
        source = positional[0]
        destination = positional[1]
    }

    /// "500", "500K", "50M", "1G" (decimal units, as the byte counts on screen).
    static func byteCount(_ text: String) -> Int64? {
        let multipliers: [Character: Double] = ["K": 1e3, "M": 1e6, "G": 1e9]
        var number = text.uppercased()
        var multiplier = 1.0
        if let last = number.last, let factor = multipliers[last] {
            multiplier = factor
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * multiplier < 9e18 else { return nil }
        return Int64(value * multiplier)
    }
}
