import Foundation
import XCTest

/// An example program of the package (`web-dashboard`, `jobs-app`) run as a process: its first line on
/// standard output is its URL. What it writes on standard error is kept in a file of its own, for a test's
/// messages (`errorOutput`), until `end()`.
struct ExampleProcess {
    let process: Process
    let url: String
    /// Where the program's standard error goes.
    let errorFile: URL

    /// The port of `url`.
    var port: Int { Int(url.split(separator: ":").last?.prefix { $0.isNumber } ?? "") ?? 0 }

    /// What the program wrote on its standard error so far.
    var errorOutput: String {
        (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    }

    /// The folder of the built products, where the examples are (the test bundle's folder on Linux).
    static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return Bundle.main.bundleURL
    }

    /// A new empty file in the temporary folder, for a program's output.
    private static func outputFile(_ program: String, _ name: String) throws -> (URL, FileHandle) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(program)-\(name)-\(UUID().uuidString).txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        return (url, try FileHandle(forWritingTo: url))
    }

    private static func process(_ program: String, _ arguments: [String]) -> Process {
        let executable = productsDirectory.appendingPathComponent(program)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), executable.path)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Starts `program` with `arguments` and reads its first line; a program that ends without one fails
    /// the test with what it wrote on standard error.
    init(_ program: String, _ arguments: [String]) throws {
        process = Self.process(program, arguments)
        let output = Pipe()
        process.standardOutput = output
        let (errorFile, errors) = try Self.outputFile(program, "stderr")
        self.errorFile = errorFile
        process.standardError = errors
        try process.run()
        try errors.close()
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != 0x0A else { break }
            line.append(first)
        }
        url = String(decoding: line, as: UTF8.self)
        if url.isEmpty {
            XCTFail("\(program) \(arguments.joined(separator: " ")) printed no URL; its standard error: \(errorOutput)")
        }
    }

    /// Ends the process if it still runs, and removes the file of its standard error.
    func end() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: errorFile)
    }

    /// What a program that ends by itself did: its exit status and its output.
    struct Run {
        let status: Int32
        let reason: Process.TerminationReason
        let standardOutput: String
        let standardError: String
    }

    /// Runs `program` with `arguments` to its end (at most `limit`: then it is killed, and the test fails).
    static func run(_ program: String, _ arguments: [String], limit: Duration = .seconds(10)) throws -> Run {
        let process = Self.process(program, arguments)
        let (outputURL, output) = try outputFile(program, "stdout")
        let (errorURL, errors) = try outputFile(program, "stderr")
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        process.standardOutput = output
        process.standardError = errors
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        try output.close()
        try errors.close()
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18
        if ended.wait(timeout: .now() + seconds) == .timedOut {
            XCTFail("\(program) \(arguments.joined(separator: " ")) still ran after \(limit)")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, reason: process.terminationReason,
            standardOutput: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
    }
}
