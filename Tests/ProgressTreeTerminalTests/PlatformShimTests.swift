import Foundation
import XCTest

/// The C library is reached through one module, the platform module, one file a concern, so that a
/// platform (Glibc, Musl, Darwin) is handled in one place: read from the sources.
final class PlatformShimTests: XCTestCase {
    private let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func sources(in folder: String) throws -> [(name: String, text: String)] {
        let root = packageRoot.appendingPathComponent(folder)
        let paths = try XCTUnwrap(FileManager.default.subpathsOfDirectory(atPath: root.path))
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            (path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
    }

    private func importsCLibrary(_ text: String) -> Bool {
        text.contains("import Glibc") || text.contains("import Musl") || text.contains("import Darwin")
    }

    /// The platform module's files that import the C library, one concern each (Architecture.md, "Modules").
    static let platformFiles = [
        "Bytes.swift", "Descriptors.swift", "Errors.swift", "Polling.swift", "Processes.swift",
        "SignalForwarding.swift", "Signals.swift",
        "Sockets+Paths.swift", "Sockets.swift", "System.swift", "TerminalDevice.swift", "Threads.swift",
    ]

    /// The C library is reached through the platform module only: no file of another module imports it,
    /// and only the platform module imports the package's C target.
    func test_only_the_platform_module_imports_the_c_library() throws {
        var importing: [String] = []
        var importingCTarget: [String] = []
        for module in try FileManager.default.contentsOfDirectory(atPath: packageRoot.path + "/Sources").sorted() {
            for file in try sources(in: "Sources/\(module)") {
                if importsCLibrary(file.text) { importing.append("\(module)/\(file.name)") }
                if file.text.contains("import CProgressTree") { importingCTarget.append("\(module)/\(file.name)") }
            }
        }
        XCTAssertEqual(importing, Self.platformFiles.map { "ProgressTreePlatform/\($0)" })
        XCTAssertFalse(importingCTarget.isEmpty)
        XCTAssertEqual(importingCTarget.filter { !$0.hasPrefix("ProgressTreePlatform/") }, [])
    }

    /// Each of the platform module's files imports whichever of Glibc, Musl and Darwin there is, and no
    /// call names one: the imports choose the C library, once a file, not a branch at each call.
    func test_the_platform_files_import_every_c_library_and_no_call_names_one() throws {
        for file in try sources(in: "Sources/ProgressTreePlatform") where importsCLibrary(file.text) {
            for library in ["Glibc", "Musl", "Darwin"] {
                let calls = try Regex("\\b\(library)\\.[a-z]")
                XCTAssertTrue(
                    file.text.contains("canImport(\(library))\nimport \(library)\n"), "\(file.name): \(library)")
                XCTAssertNil(file.text.firstMatch(of: calls), "\(file.name) calls through \(library)")
            }
        }
    }

    /// The examples reach the C library through Foundation, which exports it on every platform.
    func test_no_example_copies_a_platform_import_block() throws {
        for file in try sources(in: "Examples") {
            XCTAssertFalse(importsCLibrary(file.text), file.name)
            XCTAssertFalse(file.text.contains("canImport("), file.name)
        }
    }

    /// A signal handler may read the saved terminal settings at any moment: they are never freed.
    func test_the_saved_terminal_settings_are_never_freed() throws {
        let reader = try XCTUnwrap(
            try sources(in: "Sources/ProgressTreeTerminal").first { $0.name == "Input/TerminalKeyReader.swift" })
        XCTAssertFalse(reader.text.contains("deallocate"))
        XCTAssertFalse(reader.text.contains("free("))
    }
}
