import Foundation

/// The command line of an example: its options parsed from the arguments, `--help` and the usage.
public protocol ExampleOptions {
    /// The text `--help` prints, and that follows a mistake on the command line.
    static var usage: String { get }
    /// Whether `--help` (or `-h`) was given.
    var showHelp: Bool { get }
    /// Reads `arguments` (without the program's name); throws a `UsageError` for a mistake.
    init(arguments: [String]) throws
}

extension ExampleOptions {
    /// The options of this process's command line, as every example starts: a mistake prints
    /// "`program`: what is wrong", a blank line and the usage on standard error and exits with status 2;
    /// `--help` prints the usage on standard output and returns `nil` (the program then ends with 0).
    public static func parseCommandLine(program: String) -> Self? {
        let options: Self
        do {
            options = try Self(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("\(program): \(error)\n\n\(usage)\n".utf8))
            exit(2)
        }
        if options.showHelp {
            print(usage)
            return nil
        }
        return options
    }
}
