import ProgressTree
import ProgressTreeTerminal
import Synchronization
import ProgressTreePlatform

/// A terminal of fixed size that interprets what the renderer writes (text, `\r`, `\n`, cursor up, erasing
/// to the end of the line or screen, SGR, private modes) into a screen of cells, so tests can assert exactly what a person would see. A `\n`
/// starts a new line at the left edge, as it does on a terminal whose output processing turns it into a
/// carriage return and a line feed (the default, and what a pseudo-terminal's reader receives).
package final class VirtualTerminal: TerminalOutput {
    private struct Screen {
        var lines: [[Character]]  // visible rows
        var scrollback: [String] = []
        var row = 0
        var column = 0
        var cursorVisible = true
        var synchronizedDepth = 0
        var writes: [String] = []
        /// The OSC sequences received, without `ESC ]` and the terminator: `"9;4;1;42"`.
        var operatingSystemCommands: [String] = []
    }

    package let columns: Int
    package let rows: Int
    package let isTerminal: Bool
    private let screen: Lock<Screen>

    package init(columns: Int = 100, rows: Int = 30, isTerminal: Bool = true) {
        self.columns = columns
        self.rows = rows
        self.isTerminal = isTerminal
        screen = Lock(Screen(lines: Array(repeating: Array(repeating: " ", count: columns), count: rows)))
    }

    package func size() -> TerminalSize? { isTerminal ? TerminalSize(columns: columns, rows: rows) : nil }
    package var fileDescriptor: Int32? { nil }

    /// The raw writes, in order.
    package var writes: [String] { screen.withLock { $0.writes } }
    package var operatingSystemCommands: [String] { screen.withLock { $0.operatingSystemCommands } }
    package var cursorVisible: Bool { screen.withLock { $0.cursorVisible } }
    package var cursorRow: Int { screen.withLock { $0.row } }

    /// The visible screen, each row with trailing spaces removed, trailing empty rows dropped.
    package var visibleLines: [String] {
        screen.withLock { screen in
            var lines = screen.lines.map { String($0).replacingTrailingSpaces() }
            while lines.last == "" { lines.removeLast() }
            return lines
        }
    }

    /// Scrollback followed by the visible screen: everything ever shown, top to bottom.
    package var allLines: [String] {
        let scrolled = screen.withLock { $0.scrollback }
        return scrolled + visibleLines
    }

    package func write(_ text: String) {
        screen.withLock { screen in
            screen.writes.append(text)
            var iterator = Array(text).makeIterator()
            while let character = iterator.next() {
                switch character {
                case "\r": screen.column = 0
                case "\n", "\r\n":
                    screen.column = 0
                    lineFeed(&screen)
                case "\u{1B}":
                    var sequence = ""
                    guard let bracket = iterator.next() else { continue }
                    if bracket == "]" {  // OSC, ended by BEL or ESC \: not drawn, recorded
                        while let next = iterator.next() {
                            if next == "\u{07}" { break }
                            if next == "\u{1B}" { _ = iterator.next(); break }  // ST: ESC \
                            sequence.append(next)
                        }
                        screen.operatingSystemCommands.append(sequence)
                        continue
                    }
                    guard bracket == "[" else { continue }
                    while let next = iterator.next() {
                        sequence.append(next)
                        if next.isLetter { break }
                    }
                    apply(sequence, to: &screen)
                default:
                    let width = Self.width(of: character)
                    if screen.column + width > columns {  // auto-wrap
                        screen.column = 0
                        lineFeed(&screen)
                    }
                    screen.lines[screen.row][screen.column] = character
                    if width == 2 && screen.column + 1 < columns {
                        screen.lines[screen.row][screen.column + 1] = "\u{0}"
                    }
                    screen.column += width
                }
            }
        }
    }

    private func lineFeed(_ screen: inout Screen) {
        if screen.row == rows - 1 {
            screen.scrollback.append(String(screen.lines.removeFirst()).replacingTrailingSpaces())
            screen.lines.append(Array(repeating: " ", count: columns))
        } else {
            screen.row += 1
        }
    }

    private func apply(_ sequence: String, to screen: inout Screen) {
        guard let command = sequence.last else { return }
        let parameters = String(sequence.dropLast())
        switch (command, parameters) {
        case ("A", _): screen.row = max(0, screen.row - (Int(parameters) ?? 1))
        case ("K", _):
            for column in screen.column..<columns { screen.lines[screen.row][column] = " " }
        case ("J", ""), ("J", "0"):  // to the end of the screen
            for column in screen.column..<columns { screen.lines[screen.row][column] = " " }
            for row in (screen.row + 1)..<rows { screen.lines[row] = Array(repeating: " ", count: columns) }
        case ("l", "?25"): screen.cursorVisible = false
        case ("h", "?25"): screen.cursorVisible = true
        case ("h", "?2026"): screen.synchronizedDepth += 1
        case ("l", "?2026"): screen.synchronizedDepth -= 1
        default: break  // colours (m) and anything else do not move the cursor
        }
    }

    package static func width(of character: Character) -> Int {
        let value = character.unicodeScalars.first!.value
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        if (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0xFF00...0xFF60).contains(value)
        {
            return 2
        }
        return 1
    }
}

extension String {
    fileprivate func replacingTrailingSpaces() -> String {
        var result = self.replacingOccurrences(of: "\u{0}", with: "")
        while result.last == " " { result.removeLast() }
        return result
    }

    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

extension VirtualTerminal {
    /// Columns a visible line takes on this terminal.
    package static func displayWidth(_ line: String) -> Int {
        line.reduce(0) { $0 + width(of: $1) }
    }
}
