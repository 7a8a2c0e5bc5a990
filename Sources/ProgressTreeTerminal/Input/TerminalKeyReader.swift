#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import ProgressTree
import Synchronization

/// Reads single key presses from the terminal while progress is shown (for example `p` to pause, `c` to
/// cancel), without the user pressing Return and without echoing them over the live display.
///
/// `start` switches the terminal to non-canonical, no-echo mode (Ctrl-C still sends SIGINT); `stop`
/// restores the previous mode, and so does `SIGTERM` (the renderer's signal handler restores it too).
/// Keys are read by a dispatch read source: no thread blocks waiting for input.
///
/// Thread safety: `start` and `stop` may be called from any thread; the handler runs on a private queue.
public final class TerminalKeyReader: Sendable {
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "ProgressTreeTerminal.keys")
    private let session = Lock<(any DispatchSourceRead)?>(nil)

    /// A reader of standard input, or `nil` when standard input is not a terminal (nothing to read keys
    /// from: piped input is left alone).
    public init?(descriptor: Int32 = 0) {
        guard isatty(descriptor) == 1 else { return nil }
        self.descriptor = descriptor
    }

    /// Switches the terminal to key-at-a-time mode and calls `onKey` for each key pressed.
    public func start(onKey: @escaping @Sendable (Character) -> Void) {
        session.withLock { session in
            guard session == nil else { return }
            TerminalModeRestoration.enterKeyMode(descriptor)
            let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            let descriptor = self.descriptor
            source.setEventHandler {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return }
                for character in String(decoding: buffer[..<count], as: UTF8.self) { onKey(character) }
            }
            source.resume()
            session = source
        }
    }

    /// Stops reading and restores the terminal's previous mode. Calling it again does nothing.
    public func stop() {
        let wasReading = session.withLock { session in
            defer { session = nil }
            session?.cancel()
            return session != nil
        }
        if wasReading { TerminalModeRestoration.restore() }
    }

    deinit {
        stop()
    }
}

/// Saves and restores the terminal mode changed by `TerminalKeyReader`, also from a signal handler.
///
/// The saved settings live in a buffer allocated once and never freed, published through an atomic: a
/// signal handler can restore them with `tcsetattr(2)` (async-signal-safe) without taking a lock.
enum TerminalModeRestoration {
    private static let saved = Atomic<UInt>(0)  // address of a `termios`, or 0
    private static let savedDescriptor = Atomic<Int32>(-1)

    static func enterKeyMode(_ descriptor: Int32) {
        let buffer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        guard tcgetattr(descriptor, buffer) == 0 else {
            buffer.deallocate()
            return
        }
        var raw = buffer.pointee
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { controlCharacters in
            controlCharacters[Int(VMIN)] = 1
            controlCharacters[Int(VTIME)] = 0
        }
        savedDescriptor.store(descriptor, ordering: .sequentiallyConsistent)
        let previous = saved.exchange(UInt(bitPattern: buffer), ordering: .sequentiallyConsistent)
        if previous != 0 { UnsafeMutablePointer<termios>(bitPattern: previous)?.deallocate() }
        tcsetattr(descriptor, TCSANOW, &raw)
        SignalRestoration.installHandlers()
    }

    /// Restores the saved mode, if any. Async-signal-safe.
    static func restore() {
        let address = saved.exchange(0, ordering: .sequentiallyConsistent)
        guard address != 0, let settings = UnsafePointer<termios>(bitPattern: address) else { return }
        tcsetattr(savedDescriptor.load(ordering: .sequentiallyConsistent), TCSANOW, settings)
        // The buffer is deliberately not freed: a signal handler may be reading it concurrently.
    }
}
