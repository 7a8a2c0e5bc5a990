#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Standard output as a terminal: writes, the keys pressed (queued by the key reader's thread, taken by
/// the frame loop) and Ctrl-C, which asks the loop to quit so that it can restore the cursor.
final class Terminal: Sendable {
    private let keys = Mutex<[Character]>([])
    private let interrupted = InterruptFlag()
    private let interrupts: Mutex<(any DispatchSourceSignal)?>

    init() {
        signal(SIGINT, SIG_IGN)  // handled below, on a queue, instead of by the default action
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let interrupted = self.interrupted
        source.setEventHandler { interrupted.set() }
        source.resume()
        interrupts = Mutex(source)
    }

    var isInterrupted: Bool { interrupted.isSet }

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
        interrupts.withLock { $0?.cancel() }
        signal(SIGINT, SIG_DFL)
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

/// Set once, by Ctrl-C.
private final class InterruptFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
