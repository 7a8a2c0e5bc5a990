#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTreePlatform
import ProgressTreeTerminal
import XCTest

/// A scenario of a test run in a child process of this test binary: what stops the program (a
/// precondition), stops the process (Ctrl-Z) or ends it (a signal) cannot run in the test's own process.
/// The child's standard error comes back on a pipe, read as it comes (XCTest's own lines go to standard
/// output, apart): a scenario writes what the test reads there.
final class ScenarioProcess {
    static let variable = "PROGRESSTREE_TERMINAL_SCENARIO"

    /// The scenario this process was started for, or a skip when it is an ordinary test run.
    static func scenarioOfThisProcess() throws -> String {
        guard let scenario = ProcessInfo.processInfo.environment[variable] else {
            throw XCTSkip("runs only in the child process of another test")
        }
        return scenario
    }

    let process = Process()
    private let bytes = ReadBytes()
    private let reading = DispatchGroup()

    /// Starts `test` ("Class/method" of this module) with `scenario` in a new process of this test binary.
    init(_ test: String, scenario: String) throws {
        #if os(Linux)
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["ProgressTreeTerminalTests.\(test)"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.variable] = scenario
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try pipe.fileHandleForWriting.close()
        let handle = pipe.fileHandleForReading
        let bytes = self.bytes
        DispatchQueue.global().async(group: reading) {
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                bytes.append(data)
            }
        }
        #else
        throw XCTSkip("the child-process harness finds the test binary as on Linux only")
        #endif
    }

    /// Everything written so far.
    var output: String { String(decoding: bytes.data, as: UTF8.self) }
    var byteCount: Int { bytes.data.count }

    /// Waits for the process to end (at most `timeout` seconds, then kills it) and for all it wrote.
    func waitForExit(timeout: Double = 30) -> (reason: Process.TerminationReason, status: Int32)? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        process.waitUntilExit()
        _ = reading.wait(timeout: .now() + 30)
        return (process.terminationReason, process.terminationStatus)
    }

    /// Whether the process is stopped (job control), from `/proc`: Linux only.
    var isStopped: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "T"
    }

    /// Polls `condition` every 10 ms for at most `timeout` seconds.
    func wait(timeout: Double = 30, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Waits until nothing new was read for `quiet` seconds: all the process wrote before it stopped has
    /// arrived.
    func waitForQuiet(_ quiet: Double = 0.3) {
        var last = byteCount
        var stillSince = Date()
        while Date().timeIntervalSince(stillSince) < quiet {
            usleep(20_000)
            let now = byteCount
            if now != last {
                last = now
                stillSince = Date()
            }
        }
    }

    func send(_ signalNumber: Int32) {
        kill(process.processIdentifier, signalNumber)
    }

    /// Whether the output holds the message of a precondition failure (debug builds print "Precondition
    /// failed: message", release builds "Fatal error: message").
    func stoppedWithMessage(_ message: String) -> Bool {
        output.contains("Precondition failed: " + message) || output.contains("Fatal error: " + message)
    }
}

/// A terminal of 60 × 12 on a descriptor (standard error, a pipe to the test), that runs `beforeWrite` with the number of
/// each write before it writes: a signal raised in the middle of a frame, after it was composed and
/// before it reaches the terminal.
struct HookedOutput: TerminalOutput {
    let descriptor: Int32
    let beforeWrite: @Sendable (_ writeNumber: Int) -> Void
    private let counter = WriteCounter()

    init(descriptor: Int32, beforeWrite: @escaping @Sendable (_ writeNumber: Int) -> Void = { _ in }) {
        self.descriptor = descriptor
        self.beforeWrite = beforeWrite
    }

    func write(_ text: String) {
        beforeWrite(counter.next())
        FileDescriptorOutput(descriptor: descriptor).write(text)
    }

    var isTerminal: Bool { true }
    func size() -> TerminalSize? { TerminalSize(columns: 60, rows: 12) }
    var fileDescriptor: Int32? { descriptor }
}

/// The bytes read from a child process so far.
final class ReadBytes: Sendable {
    private let bytes = Lock(Data())
    func append(_ more: Data) { bytes.withLock { $0.append(more) } }
    var data: Data { bytes.withLock { $0 } }
}

/// Counts writes.
final class WriteCounter: Sendable {
    private let count = Lock(0)

    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
