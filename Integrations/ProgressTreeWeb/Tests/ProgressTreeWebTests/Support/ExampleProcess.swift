import Foundation
import XCTest

/// An example program of the package (`web-dashboard`, `jobs-app`) run as a process: its first line on
/// standard output is its URL.
struct ExampleProcess {
    let process: Process
    let url: String

    /// The port of `url`.
    var port: Int { Int(url.split(separator: ":").last?.prefix { $0.isNumber } ?? "") ?? 0 }

    /// The folder of the built products, where the examples are (the test bundle's folder on Linux).
    static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return Bundle.main.bundleURL
    }

    /// Starts `program` with `arguments` and reads its first line.
    init(_ program: String, _ arguments: [String]) throws {
        let executable = Self.productsDirectory.appendingPathComponent(program)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), executable.path)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != 0x0A else { break }
            line.append(first)
        }
        url = String(decoding: line, as: UTF8.self)
    }

    /// Ends the process if it still runs.
    func end() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
