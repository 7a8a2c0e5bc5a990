import Foundation
import XCTest

/// The C library is reached through one file per target, so that a platform (Glibc, Musl, Darwin) is
/// handled in one place: read from the sources.
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

    func test_only_the_terminal_modules_platform_file_imports_the_c_library() throws {
        let files = try sources(in: "Sources/ProgressTreeTerminal")
        XCTAssertEqual(files.filter { importsCLibrary($0.text) }.map(\.name), ["Output/Platform.swift"])
        let platform = try XCTUnwrap(files.first { $0.name == "Output/Platform.swift" }?.text)
        for library in ["Glibc", "Musl", "Darwin"] {
            XCTAssertTrue(platform.contains("import \(library)"), library)
            XCTAssertTrue(platform.contains("\(library).write("), "write(2) is called through \(library) too")
        }
    }

    /// Below the terminal and streaming modules, the C library is reached through one file: the model and
    /// presentation call the platform module, whose `System.swift` imports it (Architecture.md, "Modules").
    func test_only_the_platform_modules_system_file_imports_the_c_library_below_terminal_and_streaming() throws {
        var importing: [String] = []
        for folder in ["Sources/ProgressTreePlatform", "Sources/ProgressTree", "Sources/ProgressTreePresentation"] {
            importing += try sources(in: folder).filter { importsCLibrary($0.text) }.map { "\(folder)/\($0.name)" }
        }
        XCTAssertEqual(importing, ["Sources/ProgressTreePlatform/System.swift"])
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
