#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ProgressTreeTerminal needs a POSIX C library (Glibc, Musl or Darwin)")
#endif

/// The C library calls of this module, and the only file that imports the C library: every other file
/// goes through these.
///
/// The functions marked async-signal-safe call only functions that POSIX lists as such (signal-safety(7)),
/// so the signal handlers of `SignalRestoration` may use them.
enum Platform {
    typealias SignalHandler = @convention(c) (Int32) -> Void
    typealias TerminalSettings = termios

    static let interruptSignal = SIGINT
    static let terminateSignal = SIGTERM
    static let hangUpSignal = SIGHUP
    static let terminalStopSignal = SIGTSTP
    static let continueSignal = SIGCONT
    static let windowChangeSignal = SIGWINCH

    /// `write(2)` once; the count written, or -1. Async-signal-safe.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
        #elseif canImport(Darwin)
        Darwin.write(descriptor, bytes, count)
        #endif
    }

    /// Writes all of `bytes`, retrying on `EINTR` and partial writes; stops when the descriptor fails
    /// otherwise (the reader went away, or it is closed). Async-signal-safe.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }

    /// `read(2)` once; the count read, 0 at the end, or -1.
    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        #elseif canImport(Musl)
        Musl.read(descriptor, buffer.baseAddress, buffer.count)
        #elseif canImport(Darwin)
        Darwin.read(descriptor, buffer.baseAddress, buffer.count)
        #endif
    }

    static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    /// The window size from `ioctl(TIOCGWINSZ)`, or `nil` when the descriptor is not a terminal.
    static func windowSize(_ descriptor: Int32) -> (columns: Int, rows: Int)? {
        var window = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return nil }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    static func unsetEnvironment(_ name: String) {
        _ = unsetenv(name)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    // MARK: Terminal settings

    /// The settings of the terminal on `descriptor`, or `nil` when it is not a terminal.
    static func terminalSettings(_ descriptor: Int32) -> TerminalSettings? {
        var settings = termios()
        return tcgetattr(descriptor, &settings) == 0 ? settings : nil
    }

    /// `settings` in key-at-a-time mode: not canonical, no echo, a read returns after one byte. Signals
    /// (Ctrl-C, Ctrl-Z) stay on.
    static func keyMode(of settings: TerminalSettings) -> TerminalSettings {
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { controlCharacters in
            controlCharacters[Int(VMIN)] = 1
            controlCharacters[Int(VTIME)] = 0
        }
        return raw
    }

    /// `tcsetattr(2)`, at once. Async-signal-safe.
    static func setTerminalSettings(_ descriptor: Int32, _ settings: UnsafePointer<TerminalSettings>) {
        _ = tcsetattr(descriptor, TCSANOW, settings)
    }

    /// Whether the process may change the settings of the terminal on `descriptor` without being stopped
    /// (`SIGTTOU`): its group is the terminal's foreground group, or the terminal is not the process's
    /// controlling terminal (`tcgetpgrp` fails). Async-signal-safe.
    static func isForeground(_ descriptor: Int32) -> Bool {
        let group = tcgetpgrp(descriptor)
        return group == -1 || group == getpgrp()
    }

    // MARK: Signals

    /// Runs `body`, then gives `errno` back the value it had: a signal handler must leave it as the code
    /// it interrupted had it. Async-signal-safe.
    static func preservingErrno(_ body: () -> Void) {
        let saved = errno
        body()
        errno = saved
    }

    /// Sets `handler` for `signalNumber` if its disposition is the default, and returns whether it did:
    /// a program that handles (or ignores) the signal itself keeps its handling.
    static func setHandlerIfDefault(_ signalNumber: Int32, _ handler: SignalHandler) -> Bool {
        let previous = signal(signalNumber, handler)
        // SIG_DFL is the null handler on every POSIX system Swift runs on.
        if unsafeBitCast(previous, to: Int.self) != 0 {
            signal(signalNumber, previous)
            return false
        }
        return true
    }

    /// Sets `handler` for `signalNumber`. Async-signal-safe.
    static func setHandler(_ signalNumber: Int32, _ handler: SignalHandler) {
        signal(signalNumber, handler)
    }

    /// Gives `signalNumber` its default action, unblocks it and raises it: the process ends or stops here
    /// (a stopped process returns from this call when continued). Async-signal-safe.
    static func takeDefaultAction(_ signalNumber: Int32) {
        signal(signalNumber, SIG_DFL)
        // A handler runs with its signal blocked: unblocked, the raised signal acts now rather than when
        // the handler returns.
        #if canImport(Darwin)
        var set: sigset_t = 1 << (UInt32(signalNumber) - 1)
        #else
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signalNumber)
        #endif
        sigprocmask(SIG_UNBLOCK, &set, nil)
        raise(signalNumber)
    }
}
