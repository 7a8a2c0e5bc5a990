#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// The terminal on a descriptor: whether there is one, its size, its settings (key-at-a-time mode for
/// `TerminalKeyReader`, given back by signal handlers) and whether this process is in its foreground.
///
/// The functions marked async-signal-safe call only functions that POSIX lists as such (signal-safety(7)),
/// so signal handlers may use them.
package enum TerminalDevice {
    package typealias Settings = termios

    package static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    /// The window size from `ioctl(TIOCGWINSZ)`, or `nil` when the descriptor is not a terminal.
    package static func windowSize(_ descriptor: Int32) -> (columns: Int, rows: Int)? {
        var window = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return nil }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// The settings of the terminal on `descriptor`, or `nil` when it is not a terminal.
    package static func settings(_ descriptor: Int32) -> Settings? {
        var settings = termios()
        return tcgetattr(descriptor, &settings) == 0 ? settings : nil
    }

    /// `settings` in key-at-a-time mode: not canonical, no echo, a read returns after one byte. Signals
    /// (Ctrl-C, Ctrl-Z) stay on.
    package static func keyMode(of settings: Settings) -> Settings {
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { controlCharacters in
            controlCharacters[Int(VMIN)] = 1
            controlCharacters[Int(VTIME)] = 0
        }
        return raw
    }

    /// `tcsetattr(2)`, at once. Async-signal-safe.
    package static func setSettings(_ descriptor: Int32, _ settings: UnsafePointer<Settings>) {
        _ = tcsetattr(descriptor, TCSANOW, settings)
    }

    /// Whether the process may change the settings of the terminal on `descriptor` without being stopped
    /// (`SIGTTOU`): its group is the terminal's foreground group, or the terminal is not the process's
    /// controlling terminal (`tcgetpgrp` fails). Async-signal-safe.
    package static func isForeground(_ descriptor: Int32) -> Bool {
        let group = tcgetpgrp(descriptor)
        return group == -1 || group == getpgrp()
    }
}
