#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// A built example running as a child process, its output (standard output and error together) read as
/// it comes, on pipes or on a pseudo-terminal of its own, so that a test can wait for what it prints,
/// send it signals and read the terminal's settings.
final class ExampleProcess {
    let process = Process()
    private let output = OutputBuffer()
    private let reading = DispatchGroup()
    /// The pseudo-terminal's controller and device ends, or -1.
    private var controller: Int32 = -1
    private var device: Int32 = -1

    /// Starts `name` with `arguments`. With `terminal`, its standard input, output and error are a new
    /// pseudo-terminal of `columns` × `rows`; otherwise pipes (and standard input is empty).
    init(
        _ name: String, _ arguments: [String], terminal: Bool = false, columns: Int = 100, rows: Int = 30,
        environment: [String: String] = ["NO_COLOR": "1", "TERM": "xterm"]
    ) throws {
        let url = FileCopyProcess.productsDirectory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            XCTFail("\(name) is not built at \(url.path): run `swift build` first")
            throw CocoaError(.fileNoSuchFile)
        }
        process.executableURL = url
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment { variables[key] = value }
        process.environment = variables
        // The reading thread's own descriptor, closed by it at the end (a shared one could be closed and
        // reused by another open while it reads).
        let readEnd: Int32
        let pipe = Pipe()
        if terminal {
            controller = PseudoTerminalCalls.open(O_RDWR | O_NOCTTY)
            guard controller >= 0, PseudoTerminalCalls.grant(controller) == 0,
                PseudoTerminalCalls.unlock(controller) == 0, let name = PseudoTerminalCalls.deviceName(controller)
            else { throw CocoaError(.fileNoSuchFile) }
            device = open(name, O_RDWR | O_NOCTTY)
            guard device >= 0 else { throw CocoaError(.fileNoSuchFile) }
            var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(controller, UInt(TIOCSWINSZ), &size)
            let handle = FileHandle(fileDescriptor: device, closeOnDealloc: false)
            process.standardInput = handle
            process.standardOutput = handle
            process.standardError = handle
            readEnd = dup(controller)
        } else {
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = pipe
            process.standardError = pipe
            readEnd = dup(pipe.fileHandleForReading.fileDescriptor)
        }
        try process.run()
        if !terminal {
            // Only the child writes now: the end of file comes when it exits.
            try pipe.fileHandleForWriting.close()
            try pipe.fileHandleForReading.close()
        }
        let output = self.output
        DispatchQueue.global().async(group: reading) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 {
                    output.append(buffer[0..<count])
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    close(readEnd)
                    return  // end of file, or EIO once no one has the terminal open
                }
            }
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        if device >= 0 { close(device) }
        if controller >= 0 {
            // The reader ends (EIO) once the child is gone and no one else has the terminal open.
            _ = reading.wait(timeout: .now() + 5)
            close(controller)
        }
    }

    /// Everything written so far, as bytes.
    var outputData: Data { output.data }
    /// Everything written so far.
    var outputText: String { String(decoding: outputData, as: UTF8.self) }

    /// Waits until the output after `offset` bytes contains `text`; `false` after `timeout` seconds.
    func waitForOutput(containing text: String, after offset: Int = 0, timeout: Double = 15) -> Bool {
        wait(timeout: timeout) {
            let data = outputData
            guard data.count > offset else { return false }
            return String(decoding: data[offset...], as: UTF8.self).contains(text)
        }
    }

    /// The output after `offset` bytes.
    func output(after offset: Int) -> String {
        let data = outputData
        return data.count > offset ? String(decoding: data[offset...], as: UTF8.self) : ""
    }

    /// Types `text` on the pseudo-terminal, as a person at the keyboard.
    func type(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = write(controller, bytes.baseAddress, bytes.count) }
    }

    func send(_ signalNumber: Int32) {
        kill(process.processIdentifier, signalNumber)
    }

    /// Waits for the process to end; its reason and status, or `nil` (and the process killed) after
    /// `timeout` seconds. Once it returns, `outputData` holds everything the process wrote.
    func waitForExit(timeout: Double = 15) -> (reason: Process.TerminationReason, status: Int32)? {
        if wait(timeout: timeout, until: { !process.isRunning }) {
            process.waitUntilExit()
            readToTheEnd()
            return (process.terminationReason, process.terminationStatus)
        }
        kill(process.processIdentifier, SIGKILL)
        return nil
    }

    /// Waits (at most 60 s) until the reading thread has appended all the process wrote before it ended:
    /// the bytes are in the pipe or the terminal when it exits, but that thread may not have read them yet.
    /// Pipes: their end of file (no one else writes to them). The pseudo-terminal, which this object keeps
    /// open: a marker written to its device after the process ended comes after all it wrote; it is taken
    /// out of the output again.
    private func readToTheEnd() {
        guard device >= 0 else {
            _ = reading.wait(timeout: .now() + 60)
            return
        }
        let marker = Data("[end of output \(UUID().uuidString)]".utf8)
        marker.withUnsafeBytes { _ = write(device, $0.baseAddress, $0.count) }
        _ = wait(timeout: 60) { output.remove(marker) }
    }

    /// Whether the process is stopped (job control), from `/proc`: Linux only.
    var isStopped: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "T"
    }

    /// The pseudo-terminal's settings, as the program left them.
    var terminalSettings: termios? {
        var settings = termios()
        return device >= 0 && tcgetattr(device, &settings) == 0 ? settings : nil
    }

    /// Whether the terminal reads a key at a time without echo (as `TerminalKeyReader` sets it), or `nil`
    /// without a terminal.
    var isInKeyMode: Bool? {
        terminalSettings.map { $0.c_lflag & tcflag_t(ICANON | ECHO) == 0 }
    }

    /// Polls `condition` every 10 ms (the child runs on its own: there is nothing else to wait on).
    func wait(timeout: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}

/// `posix_openpt`, `grantpt`, `unlockpt` and `ptsname`, which Glibc's Swift module does not import (they
/// need `_XOPEN_SOURCE`): looked up by name there.
private enum PseudoTerminalCalls {
    #if os(Linux)
    private static func function<T>(_ name: String, as type: T.Type) -> T {
        unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)!, to: type)
    }
    static let open = function("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    static let grant = function("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlock = function("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    private static let name = function("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
    #else
    static let open = posix_openpt
    static let grant = grantpt
    static let unlock = unlockpt
    private static let name = ptsname
    #endif

    static func deviceName(_ controller: Int32) -> String? {
        name(controller).map { String(cString: $0) }
    }
}

/// The bytes read so far, appended by the reading thread.
private final class OutputBuffer: Sendable {
    private let bytes = Lock(Data())
    func append(_ more: ArraySlice<UInt8>) { bytes.withLock { $0.append(contentsOf: more) } }
    var data: Data { bytes.withLock { $0 } }

    /// Takes the first occurrence of `marker` out; whether there was one.
    func remove(_ marker: Data) -> Bool {
        bytes.withLock { bytes in
            guard let range = bytes.range(of: marker) else { return false }
            bytes.removeSubrange(range)
            return true
        }
    }
}
