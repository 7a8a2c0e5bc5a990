/// A colour (or emphasis) of part of a line. `NO_COLOR` turns every style into plain text.
public enum TerminalStyle: Sendable, Hashable {
    case plain, bold, dim, red, green, yellow, blue, magenta, cyan

    var code: String? {
        switch self {
        case .plain: nil
        case .bold: "1"
        case .dim: "2"
        case .red: "31"
        case .green: "32"
        case .yellow: "33"
        case .blue: "34"
        case .magenta: "35"
        case .cyan: "36"
        }
    }

    func apply(to text: String, colors: Bool) -> String {
        guard colors, let code, !text.isEmpty else { return text }
        return "\u{1B}[\(code)m" + text + ANSI.reset
    }
}
