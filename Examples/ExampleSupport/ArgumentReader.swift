import ProgressTreeTerminal

/// A command-line mistake: printed with the usage, exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    /// What was wrong, with the argument's control characters shown as spaces.
    public let description: String

    /// The description may quote an argument: its control characters are shown as spaces, so a mistyped
    /// argument cannot write escape sequences to the terminal.
    public init(_ description: String) {
        self.description = TerminalText.printable(description)
    }
}

/// Reads the arguments of the example programs one by one, with the checks they share.
public struct ArgumentReader {
    private var remaining: ArraySlice<String>

    /// Reads `arguments`: the program's arguments without its name.
    public init(_ arguments: [String]) {
        remaining = arguments[...]
    }

    /// The next argument, or `nil` at the end.
    public mutating func next() -> String? {
        remaining.popFirst()
    }

    /// Everything not read yet (after `--`).
    public mutating func rest() -> [String] {
        defer { remaining = [] }
        return Array(remaining)
    }

    /// Adds `argument` to `positional`, or everything after it for `--`; throws for an unknown option
    /// (a word starting with `-`, other than `-` itself). For the `default:` of a parsing loop.
    public mutating func addPositional(_ argument: String, to positional: inout [String]) throws {
        if argument == "--" {
            positional.append(contentsOf: rest())
        } else if argument.hasPrefix("-") && argument.count > 1 {
            throw UsageError("unknown option \(argument)")
        } else {
            positional.append(argument)
        }
    }

    /// The value following `option`.
    public mutating func value(of option: String) throws -> String {
        guard let value = remaining.popFirst() else { throw UsageError("\(option) needs a value") }
        return value
    }

    /// A whole number in `range` following `option`; `meaning` names it in the error ("a whole number").
    public mutating func integer(
        of option: String, in range: ClosedRange<Int>, meaning: String = "a whole number"
    ) throws -> Int {
        guard let number = Int(try value(of: option)), range.contains(number) else {
            throw UsageError("\(option) takes \(meaning) from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A finite number above zero following `option`.
    public mutating func positiveNumber(of option: String) throws -> Double {
        guard let number = Double(try value(of: option)), number > 0, number.isFinite else {
            throw UsageError("\(option) takes a positive number")
        }
        return number
    }

    /// One of `choices` following `option`, such as a progress mode.
    public mutating func choice<Choice: RawRepresentable>(
        of option: String, among choices: [Choice]
    ) throws -> Choice where Choice.RawValue == String {
        let name = try value(of: option)
        guard let choice = Choice(rawValue: name), choices.contains(where: { $0.rawValue == name }) else {
            let names = choices.map(\.rawValue)
            let list = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
            throw UsageError("\(option) takes \(list) (got \(name))")
        }
        return choice
    }

    /// A `TerminalRenderer.Mode` following `option`.
    public mutating func progressMode(of option: String) throws -> TerminalRenderer.Mode {
        try choice(of: option, among: TerminalRenderer.Mode.allCases)
    }
}
