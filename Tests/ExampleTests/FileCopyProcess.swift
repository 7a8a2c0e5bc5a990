import Foundation
import ProgressTree
import Synchronization
import XCTest
import ProgressTreePlatform

/// The `file-copy` executable (or another example) built next to this test bundle, and a way to run it to
/// the end.
enum FileCopyProcess {
    /// What a finished run left: its exit status and everything it wrote.
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// The executable's location; fails the test (and throws) when it is not built.
    static func executable(
        named name: String = "file-copy", file: StaticString = #filePath, line: UInt = #line
    ) throws -> URL {
        let url = productsDirectory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            XCTFail("\(name) is not built at \(url.path): run `swift build` first", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return url
    }

    /// Runs file-copy (or the example `named`) with `arguments`, and `environment` added to this process's,
    /// and waits for it to exit.
    static func run(
        _ arguments: [String], named name: String = "file-copy", environment: [String: String] = [:]
    ) throws -> Result {
        let process = Process()
        process.executableURL = try executable(named: name)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both to the end before waiting, so that a full pipe cannot block the process.
        let errorData = DataBox()
        let errorReader = errors.fileHandleForReading
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errorData.set(errorReader.readDataToEndOfFile()) }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.get(), as: UTF8.self))
    }

    /// Reads `pipe` until what it read contains `text` or the pipe ends (the process ended without saying
    /// it); returns what it read. No sleeping: the process waits for the test (a test hook pauses it).
    static func read(_ pipe: Pipe, until text: String) -> String {
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains(text) {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            said.append(data)
        }
        return String(decoding: said, as: UTF8.self)
    }

    /// Where SwiftPM put the build products (the test bundle's folder).
    static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return Bundle.main.bundleURL
    }
}

/// Data handed from the thread that reads standard error.
private final class DataBox: Sendable {
    private let data = Lock(Data())
    func set(_ value: Data) { data.withLock { $0 = value } }
    func get() -> Data { data.withLock { $0 } }
}
