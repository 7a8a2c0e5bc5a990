import Foundation
import ProgressTreeTerminal
import Synchronization

/// Standard output as a terminal: writes, the keys pressed (queued by the key reader's thread, taken by
/// the frame loop) and Ctrl-C, which asks the loop to quit so that it can restore the cursor. A second
/// Ctrl-C, `SIGTERM` and `SIGHUP` call `cleanUp` and exit at once (130, 143, 129).
final class Terminal: Sendable {
    private let keys = Mutex<[Character]>([])
    private let interrupts: TerminalInterrupts

    /// Ctrl-C, `SIGTERM` and `SIGHUP` handled by the library (`TerminalInterrupts`): the first Ctrl-C
    /// only sets `isInterrupted`, which the frame loop reads.
    init(cleanUp: @escaping @Sendable () -> Void) {
        interrupts = TerminalInterrupts(onInterrupt: {}, cleanUp: cleanUp)
    }

    var isInterrupted: Bool { interrupts.wasInterrupted }

    /// Exits with 130 if Ctrl-C was pressed.
    func exitIfInterrupted() {
        interrupts.exitIfInterrupted()
    }

    func keyPressed(_ key: Character) {
        keys.withLock { $0.append(key) }
    }

    func takeKeys() -> [Character] {
        keys.withLock { keys in
            defer { keys = [] }
            return keys
        }
    }

    func write(_ text: String) {
        writeToStandardOutput(text)
    }

    func stop() {
        interrupts.stop()
    }
}

private func writeToStandardOutput(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
