/// The escape sequences the live renderer uses, in one place.
enum ANSI {
    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    /// Synchronized output (DEC mode 2026): terminals that support it show the frame at once; others
    /// ignore it.
    static let beginSynchronizedUpdate = "\u{1B}[?2026h"
    static let endSynchronizedUpdate = "\u{1B}[?2026l"
    static let clearToEndOfLine = "\u{1B}[K"
    static let clearToEndOfScreen = "\u{1B}[J"

    static func cursorUp(_ lines: Int) -> String {
        lines > 0 ? "\u{1B}[\(lines)A" : ""
    }

    static let reset = "\u{1B}[0m"

    /// The states of the terminal's own progress indicator (`OSC 9;4`, from ConEmu and Windows Terminal).
    enum TaskbarState: Int {
        case cleared = 0, normal = 1, error = 2, indeterminate = 3, paused = 4
    }

    /// `ESC ] 9 ; 4 ; state ; percent BEL`: sets the progress shown in the terminal's tab or taskbar.
    static func taskbarProgress(_ state: TaskbarState, percent: Int = 0) -> String {
        "\u{1B}]9;4;\(state.rawValue);\(min(max(percent, 0), 100))\u{07}"
    }
}
