import ProgressTree
import ProgressTreeTerminal
import Synchronization

/// A `TerminalOutput` that keeps every write and models the screen they draw: rows of characters (never
/// scrolled away, so the rows are the whole session), a cursor, and the escape sequences the renderer
/// writes (cursor up, clear to the end of the line or of the screen; the others change nothing on the
/// rows). Not a terminal (`isTerminal` is `false`), 80 × 24 unless told.
final class ScreenModel: TerminalOutput {
    private struct State {
        var writes: [String] = []
        var rows: [[Character]] = [[]]
        var row = 0
        var column = 0
    }

    private let state = Mutex(State())
    private let columns: Int
    private let rowCount: Int

    init(columns: Int = 80, rows: Int = 24) {
        self.columns = columns
        self.rowCount = rows
    }

    var isTerminal: Bool { false }
    var fileDescriptor: Int32? { nil }
    func size() -> TerminalSize? { TerminalSize(columns: columns, rows: rowCount) }

    func write(_ text: String) {
        state.withLock { state in
            state.writes.append(text)
            Self.apply(text, to: &state)
        }
    }

    /// Everything written, in order, as one string.
    var written: String { state.withLock { $0.writes.joined() } }

    /// The rows of the screen, trailing spaces removed, without the empty row under the cursor at the end.
    var lines: [String] {
        state.withLock { state in
            var lines = state.rows.map { String(String($0).reversed().drop { $0 == " " }.reversed()) }
            while lines.last?.isEmpty == true { lines.removeLast() }
            return lines
        }
    }

    private static func apply(_ text: String, to state: inout State) {
        var characters = text.makeIterator()
        while let character = characters.next() {
            switch character {
            case "\n", "\r\n":
                state.row += 1
                state.column = 0
                if state.row == state.rows.count { state.rows.append([]) }
            case "\r":
                state.column = 0
            case "\u{1B}":
                guard let kind = characters.next() else { return }
                if kind == "[" {
                    var parameters = ""
                    while let next = characters.next() {
                        if let ascii = next.asciiValue, (0x40...0x7E).contains(ascii) {
                            control(next, parameters: parameters, state: &state)
                            break
                        }
                        parameters.append(next)
                    }
                } else if kind == "]" {
                    // An operating system command, up to BEL or ESC \.
                    while let next = characters.next(), next != "\u{07}" {
                        if next == "\u{1B}" {
                            _ = characters.next()
                            break
                        }
                    }
                }
            default:
                while state.rows[state.row].count <= state.column { state.rows[state.row].append(" ") }
                state.rows[state.row][state.column] = character
                state.column += 1
            }
        }
    }

    private static func control(_ final: Character, parameters: String, state: inout State) {
        switch final {
        case "A":
            state.row = max(0, state.row - (Int(parameters) ?? 1))
        case "K":
            if state.rows[state.row].count > state.column {
                state.rows[state.row].removeSubrange(state.column...)
            }
        case "J":
            if state.rows[state.row].count > state.column {
                state.rows[state.row].removeSubrange(state.column...)
            }
            state.rows.removeSubrange((state.row + 1)...)
        default:
            break  // colours, cursor visibility, synchronized updates: nothing on the rows
        }
    }
}

/// A live renderer over `output` that draws only when the test calls `drawFrame()` (no timer, no initial
/// delay, no colour), with a manual clock.
func makeRenderer(
    _ root: ProgressNode, mode: TerminalRenderer.Mode = .live, output: any TerminalOutput
) -> TerminalRenderer {
    var options = TerminalRenderer.Options()
    options.drawsOnTimer = false
    options.initialDelay = .zero
    return TerminalRenderer(
        root, mode: mode, options: options, output: output, clock: ManualProgressClock(),
        environment: ["NO_COLOR": "1"])
}

/// A root labelled `label` of `total` units.
func makeRoot(_ label: String, total: Int64 = 10) -> ProgressNode {
    let root = ProgressNode.discreteProgress(totalUnitCount: total)
    root.localizedDescription = label
    return root
}

/// An output that appends each character of a write separately, so that two writes at once interleave
/// unless their writers take turns.
final class CharacterByCharacterOutput: TerminalOutput {
    private let characters = Mutex<[Character]>([])

    var isTerminal: Bool { false }
    var fileDescriptor: Int32? { nil }
    func size() -> TerminalSize? { nil }

    func write(_ text: String) {
        for character in text {
            characters.withLock { $0.append(character) }
        }
    }

    /// Everything written.
    var text: String { characters.withLock { String($0) } }
}
