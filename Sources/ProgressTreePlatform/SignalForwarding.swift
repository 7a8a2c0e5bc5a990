#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import Dispatch
import Synchronization

/// Signals handed to ordinary code: the handler only writes the signal's number to a pipe
/// (async-signal-safe, installed before `init` returns, so no signal is lost), and `handle` runs on a
/// dispatch queue for each signal received, where it may do anything (stop a renderer, remove a file,
/// exit). One forwarding at a time in a process: a second one takes the signals over.
///
/// Memory ordering. The pipe's write end is published to the handler through `pipeInput`. Both stores are
/// sequentially consistent, and that is load-bearing: the handler may run on any thread, and must find
/// the descriptor before `signal(2)` installs it, and -1 before the read source's cancel handler closes the
/// pipe (a closed descriptor may be reused by an unrelated file). No acquire/release pairing orders a
/// store before a system call; a sequentially consistent store's full barrier makes it visible to every
/// thread first. The handler's load is relaxed: no ordering could tie it to the moment the signal arrives,
/// and it reads a value those barriers have made visible.
package final class SignalForwarding: Sendable {
    /// The pipe's write end, for the handler; -1 when no forwarding is installed.
    fileprivate static let pipeInput = Atomic<Int32>(-1)
    private let signals: [Int32]
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Forwards `signals` to `handle`, called on a queue of its own, one signal at a time, in the order
    /// they arrived.
    package init(_ signals: [Int32], handle: @escaping @Sendable (_ signalNumber: Int32) -> Void) throws(PlatformError)
    {
        let (output, input) = try FileDescriptor.pipe()
        FileDescriptor.setNonBlocking(output)
        FileDescriptor.setNonBlocking(input)  // the handler never blocks
        let source = DispatchSource.makeReadSource(
            fileDescriptor: output, queue: DispatchQueue(label: "ProgressTreePlatform.signals"))
        source.setEventHandler {
            var byte: [UInt8] = [0]
            while FileDescriptor.read(output, &byte) == 1 { handle(Int32(byte[0])) }
        }
        source.setCancelHandler {
            FileDescriptor.close(output)
            FileDescriptor.close(input)
        }
        source.resume()
        self.signals = signals
        self.source = Mutex(source)
        Self.pipeInput.store(input, ordering: .sequentiallyConsistent)
        for signalNumber in signals { Signals.setHandler(signalNumber, forwardSignal) }
    }

    /// Stops forwarding: the signals take their default action again. Calling it again does nothing.
    package func stop() {
        let running = source.withLock { source in
            defer { source = nil }
            return source
        }
        guard let running else { return }
        for signalNumber in signals { Signals.setDefaultAction(signalNumber) }
        Self.pipeInput.store(-1, ordering: .sequentiallyConsistent)
        running.cancel()
    }
}

/// The handler: the signal's number into the pipe. Async-signal-safe (an atomic load, `write(2)`), and
/// `errno` is left as the interrupted code had it.
private func forwardSignal(_ signalNumber: Int32) {
    ErrorNumber.preserving {
        let input = SignalForwarding.pipeInput.load(ordering: .relaxed)
        guard input >= 0 else { return }
        var byte = UInt8(truncatingIfNeeded: signalNumber)
        _ = withUnsafeBytes(of: &byte) { FileDescriptor.writeAll(input, $0) }
    }
}
