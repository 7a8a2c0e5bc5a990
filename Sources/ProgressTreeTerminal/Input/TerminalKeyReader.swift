import Dispatch
import ProgressTree
import Synchronization
import ProgressTreePlatform

/// Reads single key presses from the terminal while progress is shown (for example `p` to pause, `c` to
/// cancel), without the user pressing Return and without echoing them over the live display.
///
/// `start` switches the terminal to non-canonical, no-echo mode (Ctrl-C still sends SIGINT); `stop`
/// restores the previous mode, and so do `SIGINT`, `SIGTERM` and `SIGHUP` where the program leaves them
/// their default action. Ctrl-Z restores it before the process stops, and `fg` switches to key mode again.
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
        guard TerminalDevice.isTerminal(descriptor) else { return nil }
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
                let count = buffer.withUnsafeMutableBytes { FileDescriptor.read(descriptor, into: $0) }
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
/// The settings live in a buffer of two `termios` (before key mode, and key mode) that is never written
/// after it is published through `saved`, and never freed: a signal handler may read it at any moment,
/// without a lock. `enterKeyMode` publishes a new buffer only when the terminal's settings differ from the
/// published ones, so a program that starts and stops reading keys many times keeps one buffer.
///
/// Memory ordering. `saved` publishes the buffer: stored releasing after the buffer (and `savedDescriptor`)
/// are written, loaded acquiring before the buffer is read, so `savedDescriptor` itself is relaxed. Setting
/// `isActive` is the one sequentially consistent access, for the reason `SignalRestoration` gives: a handler
/// on any thread must see it before `tcsetattr(2)` changes the terminal, and no acquire/release pairing
/// orders a store before a system call. Handlers read `isActive` acquiring (the `exchange` in `restore`
/// reads the latest value, being a read-modify-write), which also makes the buffer published before it
/// visible to `setSaved`.
enum TerminalModeRestoration {
    private static let saved = Atomic<UInt>(0)  // address of two `termios`, or 0
    private static let savedDescriptor = Atomic<Int32>(-1)
    /// Whether the terminal is in key mode by `enterKeyMode` (and not restored since).
    private static let isActive = Atomic<Bool>(false)

    static func enterKeyMode(_ descriptor: Int32) {
        guard var original = TerminalDevice.settings(descriptor) else { return }
        let published = UnsafeMutablePointer<TerminalDevice.Settings>(
            bitPattern: saved.load(ordering: .acquiring))
        let buffer: UnsafeMutablePointer<TerminalDevice.Settings>
        if let published, savedDescriptor.load(ordering: .relaxed) == descriptor,
            withUnsafeBytes(
                of: &original, { $0.elementsEqual(UnsafeRawBufferPointer(start: published, count: $0.count)) })
        {
            buffer = published
        } else {
            buffer = .allocate(capacity: 2)
            buffer.initialize(to: original)
            (buffer + 1).initialize(to: TerminalDevice.keyMode(of: original))
            savedDescriptor.store(descriptor, ordering: .relaxed)
            saved.store(UInt(bitPattern: buffer), ordering: .releasing)
        }
        isActive.store(true, ordering: .sequentiallyConsistent)
        TerminalDevice.setSettings(descriptor, buffer + 1)
        SignalRestoration.installHandlers()
    }

    /// Restores the mode from before key mode, if key mode is on, and ends key mode. Async-signal-safe.
    static func restore() {
        guard isActive.exchange(false, ordering: .acquiring) else { return }
        setSaved(index: 0)
    }

    /// Restores the mode from before key mode while the process is stopped; key mode stays on, for
    /// `resume()`. Async-signal-safe.
    static func suspend() {
        guard isActive.load(ordering: .acquiring) else { return }
        setSaved(index: 0)
    }

    /// Key mode again after `suspend()`, if the process is in the terminal's foreground. Async-signal-safe.
    static func resume() {
        guard isActive.load(ordering: .acquiring),
            TerminalDevice.isForeground(savedDescriptor.load(ordering: .relaxed))
        else { return }
        setSaved(index: 1)
    }

    private static func setSaved(index: Int) {
        guard
            let settings = UnsafePointer<TerminalDevice.Settings>(
                bitPattern: saved.load(ordering: .acquiring))
        else { return }
        TerminalDevice.setSettings(savedDescriptor.load(ordering: .relaxed), settings + index)
    }
}
