#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ProgressTree
import TestSupport
import XCTest
import ProgressTreePlatform

/// The guides' snippets as programs: each Swift block of `Docs/*.md` and the README that prints something
/// is compiled on its own as a `main.swift` against the library modules built for these tests, and run.
/// What it prints must be what the guide promises, including output that a queue or a task produces after
/// the last statement: a program exits when its top-level code ends.
///
/// The programs import `ProgressTree` and `Dispatch`, which the guides leave out of most snippets.
final class DocSnippetProgramTests: XCTestCase {
    enum Promise: Equatable {
        /// Standard output, line by line.
        case lines([String])
        /// The last line of standard output (the lines before it depend on timing).
        case lastLine(String)
        /// Not run: a fragment of a larger example, or a program that promises nothing it prints.
        case nothing(because: String)
    }

    /// Every block that prints, by its snippet name or, without a marker, by "file: its first statement".
    static let promises: [String: Promise] = [
        "README.md: let photo = ProgressNode(totalUnitCount: 10)": .lines(["0.45", "true"]),
        "getting-started-first-node": .lines(["0.25", "true"]),
        "getting-started-tree": .lines(["0.45", "0.225", "0.5"]),
        "getting-started-observing": .lastLine("100%"),
        "getting-started-cancelling": .lines(["photo cancelled", "true", "CancellationError()"]),
        "getting-started-batch-reporter": .lines(["true"]),
        "composition-weights": .lines(["0.225", "0.45", "0", "9", "0.9", "10", "true"]),
        "composition-explicit": .lines(["0.25", "5"]),
        "composition-thread-local": .lines(["6", "true"]),
        "composition-task-local": .lines(["4", "true"]),
        "composition-share": .lines(["0.0", "0.25", "0.5", "0.75", "4"]),
        "composition-share-tasks": .lines(["6", "CancellationError()", "0"]),
        "composition-first-child": .lines(["0.0", "1.0"]),
        "composition-no-child": .lines(["4", "0.4"]),
        "composition-finishing": .lines(["1", "0.5", "0"]),
        "composition-reweighting": .lines(["0.05", "0.025", "0.0125", "10"]),
        "composition-indeterminate": .lines(["true", "0.0", "false", "0.45"]),
        "composition-overshoot": .lines(["1.0", "15", "1.0"]),
        "composition-progress-reporting": .lines(["0.125"]),
        "properties-photo-import": .lines(["1", "2500000.0", "500000.0", "1 skipped"]),
        "properties-after-the-end": .nothing(
            because: "a fragment (`root` and `Warnings` are the guide's); GuideSnippetsTests runs it and reads what "
                + "it says on standard error"),
        "properties-showing": .lines([
            "[100%] Importing 4 photos: done, 4 of 4, 2 skipped", "Imported 2 photos, 2 skipped",
        ]),
        "Cancellation.md: album.cancellationHandler = { print(\"import cancelled\") }":
            .nothing(because: "a fragment: `album` is the node of the text around it"),
        "cancellation-guide": .nothing(because: "it declares functions, which the guide's prose calls"),
        "README.md: let job = ProgressNode.discreteProgress(totalUnitCount: 12)":
            .nothing(because: "it imports ProgressTreeWeb, a package of its own that these tests do not build"),
        "observation-key-path": .lastLine("4 photos: 100%"),
        "observation-throttle": .lastLine("1000000 bytes"),
        "observation-snapshots": .lastLine("3 of 3"),
        "observation-tracking-loop": .lines(["100%"]),
        "observation-cancel-task": .nothing(because: "its task is cancelled before it need print anything"),
        "migrating-advance": .lines(["1000"]),
        "migrating-finishing-is-permanent": .lines(["0.5"]),
        "migrating-handlers": .lines(["stopping", "true"]),
        "migrating-with-current": .lines(["true", "true"]),
        "migrating-observe": .lastLine("1.0"),
        "getting-started-urlsession": .nothing(
            because: "`photoURL` is the reader's (FoundationGuideSnippetsTests runs it against a local server)"),
        "migrating-adopt-progress": .lines(["0.25", "true"]),
        "migrating-implicit-foundation-children": .lines(["10"]),
        "migrating-foundation-progress": .lines(["50", "true"]),
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The Swift blocks of the guides and the README that call `print`, by the names `promises` uses.
    static func printingBlocks() throws -> [String: [String]] {
        let docs = root.appendingPathComponent("Docs")
        let guides = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        var blocks: [String: [String]] = [:]
        for file in guides.map({ docs.appendingPathComponent($0) }) + [root.appendingPathComponent("README.md")] {
            let text = try String(contentsOf: file, encoding: .utf8)
            for block in GuideSwiftBlock.all(in: text) where block.lines.contains(where: { $0.contains("print(") }) {
                let firstStatement = block.lines.first { !$0.isEmpty && !$0.hasPrefix("import ") } ?? ""
                let name = block.snippetName ?? "\(file.lastPathComponent): \(firstStatement)"
                XCTAssertNil(blocks[name], "two blocks named \(name)")
                blocks[name] = block.lines
            }
        }
        return blocks
    }

    func test_every_snippet_that_prints_has_its_promise_listed_here() throws {
        let blocks = try Self.printingBlocks()
        XCTAssertEqual(
            Set(blocks.keys).subtracting(Self.promises.keys), [], "snippets that print, with no promise here")
        XCTAssertEqual(Set(Self.promises.keys).subtracting(blocks.keys), [], "promises for snippets no guide shows")
    }

    func test_each_snippet_run_as_a_program_prints_what_its_guide_promises() throws {
        let blocks = try Self.printingBlocks()
        let programs = blocks.keys.sorted().compactMap { name -> (name: String, lines: [String], promise: Promise)? in
            guard let promise = Self.promises[name] else { return nil }
            if case .nothing = promise { return nil }
            return (name, blocks[name]!, promise)
        }
        let compiler = try SnippetCompiler()
        defer { try? FileManager.default.removeItem(at: compiler.workDirectory) }
        // Compiled as many at a time as there are processors; each program then runs three times (an output
        // lost at exit need not be lost in every run).
        let built = Lock<[Result<URL, SnippetCompiler.CompileError>?]>(Array(repeating: nil, count: programs.count))
        DispatchQueue.concurrentPerform(iterations: programs.count) { index in
            let result = compiler.build(programs[index].lines, named: "snippet\(index)")
            built.withLock { $0[index] = result }
        }
        let executables = built.withLock { $0 }
        for (index, program) in programs.enumerated() {
            let executable: URL
            switch executables[index]! {
            case .success(let built): executable = built
            case .failure(let error):
                XCTFail("\(program.name) does not compile as a program:\n\(error)")
                continue
            }
            for run in 1...3 {
                let result = try SnippetCompiler.run(executable)
                let lines = result.standardOutput.split(separator: "\n").map(String.init)
                let context = "\(program.name), run \(run): \(lines)\n\(result.standardError)"
                XCTAssertEqual(result.status, 0, context)
                XCTAssertEqual(result.standardError, "", context)
                switch program.promise {
                case .lines(let expected): XCTAssertEqual(lines, expected, context)
                case .lastLine(let expected): XCTAssertEqual(lines.last, expected, context)
                case .nothing: break
                }
            }
        }
    }
}

/// Compiles a snippet as a `main.swift` against the library modules next to this test bundle, linking their
/// object files (and ThreadSanitizer's runtime when these tests run under it).
struct SnippetCompiler: Sendable {
    struct CompileError: Error, CustomStringConvertible {
        var description: String
    }

    static let modules = [
        "ProgressTreePlatform", "ProgressTree", "ProgressTreePresentation", "ProgressTreeStreaming",
        "ProgressTreeTerminal", "ProgressTreeFoundation",
    ]
    /// The library modules each module links against besides the model (the terminal publishes to a parent
    /// process through the streaming module).
    static let dependencies = ["ProgressTreeTerminal": ["ProgressTreeStreaming"]]
    /// Linked into every program: the model, and the platform module under it and under presentation.
    static let alwaysLinked: Set = ["ProgressTreePlatform", "ProgressTree"]
    /// The C target under the platform module: its module map for the compiler (the platform module
    /// imports it), its object for the linker.
    static let cTarget = "CProgressTreePlatform"

    let products: URL
    /// Each library module's object files.
    let objects: [String: [String]]
    let workDirectory: URL

    init() throws {
        let products = FileCopyProcess.productsDirectory
        let manager = FileManager.default
        self.products = products
        objects = try Dictionary(
            uniqueKeysWithValues: Self.modules.map { module in
                (module, try Self.objectFiles(of: module, in: products))
            })
        workDirectory = manager.temporaryDirectory.appendingPathComponent("snippets-\(getpid())")
        try manager.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    /// The object files of `module`'s current sources, as the build's output file map names them (the
    /// folder may also hold objects of sources since removed or renamed).
    static func objectFiles(of module: String, in products: URL) throws -> [String] {
        let map = products.appendingPathComponent("\(module).build/output-file-map.json")
        let entries = try JSONSerialization.jsonObject(with: Data(contentsOf: map)) as? [String: Any] ?? [:]
        return entries.values.compactMap { ($0 as? [String: Any])?["object"] as? String }.sorted()
    }

    /// Whether this process runs under ThreadSanitizer (then so were the libraries built).
    static var isThreadSanitized: Bool {
        #if os(Linux)
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
        #else
        dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil
        #endif
    }

    /// The program of `lines`, or the compiler's messages.
    func build(_ lines: [String], named name: String) -> Result<URL, CompileError> {
        Result { try buildOrThrow(lines, named: name) }.mapError { CompileError(description: "\($0)") }
    }

    /// Whether `lines` compile, up to and including the compiler's checks of ownership, without generating
    /// code or linking: the compiler's messages when they do not.
    ///
    /// `swiftc -typecheck` is not enough for that: it stops before the checks that find a non-copyable value
    /// used after it was consumed (they run on SIL, `-emit-sil`), and accepts, for example, a second `start`
    /// of a `ProgressShare`.
    func check(_ lines: [String], named name: String) -> Result<Void, CompileError> {
        Result {
            let directory = try writeProgram(lines, named: name)
            let source = ["-swift-version", "6", "main.swift", "-I", modulesPath] + cModuleMap
            let arguments = source + ["-emit-sil", "-o", "/dev/null"]
            let result = try Self.run(URL(fileURLWithPath: "/usr/bin/env"), Self.compiler + arguments, in: directory)
            guard result.status == 0 else { throw CompileError(description: result.standardError) }
        }.mapError { $0 as? CompileError ?? CompileError(description: "\($0)") }
    }

    #if os(macOS)
    static let compiler = ["xcrun", "swiftc"]
    #else
    static let compiler = ["swiftc"]
    #endif

    private var modulesPath: String { products.appendingPathComponent("Modules").path }
    /// The platform module's C target: the model's modules import it, so a client compiled by hand needs its
    /// module map.
    private var cModuleMap: [String] {
        let map = products.appendingPathComponent("\(Self.cTarget).build/module.modulemap")
        return ["-Xcc", "-fmodule-map-file=\(map.path)"]
    }

    /// Writes `lines` as the `main.swift` of a directory of its own; returns the directory.
    private func writeProgram(_ lines: [String], named name: String) throws -> URL {
        let directory = workDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let source = (["import Dispatch", "import ProgressTree"] + lines).joined(separator: "\n") + "\n"
        try source.write(to: directory.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        return directory
    }

    private func buildOrThrow(_ lines: [String], named name: String) throws -> URL {
        let directory = try writeProgram(lines, named: name)
        let executable = directory.appendingPathComponent("program")
        var arguments = Self.compiler + ["-swift-version", "6", "main.swift", "-I", modulesPath] + cModuleMap
        // ProgressTree's objects, and those of the other modules the snippet imports (linking fewer is faster).
        let imported = Self.modules.filter { lines.contains("import \($0)") }
        let needed = Set(imported + imported.flatMap { Self.dependencies[$0] ?? [] })
        let linked = Self.modules.filter { Self.alwaysLinked.contains($0) || needed.contains($0) }
        arguments += ["-o", executable.path] + linked.flatMap { objects[$0]! }
        arguments.append(products.appendingPathComponent("\(Self.cTarget).build/\(Self.cTarget).c.o").path)
        if Self.isThreadSanitized { arguments.append("-sanitize=thread") }
        let result = try Self.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, in: directory)
        guard result.status == 0 else { throw CompileError(description: result.standardError) }
        return executable
    }

    /// Runs `executable` to its end (at most two minutes), its outputs in files.
    static func run(_ executable: URL, _ arguments: [String] = [], in directory: URL? = nil) throws
        -> FileCopyProcess.Result
    {
        let directory = directory ?? executable.deletingLastPathComponent()
        let outputURL = directory.appendingPathComponent("stdout")
        let errorURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        // Under ThreadSanitizer a program that has other threads at exit sleeps a second first
        // (`atexit_sleep_ms`), which would give a queue the time to print what a program without it loses.
        var environment = ProcessInfo.processInfo.environment
        environment["TSAN_OPTIONS"] = (environment["TSAN_OPTIONS"].map { $0 + ":" } ?? "") + "atexit_sleep_ms=0"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return FileCopyProcess.Result(
            status: process.terminationStatus,
            standardOutput: try String(contentsOf: outputURL, encoding: .utf8),
            standardError: try String(contentsOf: errorURL, encoding: .utf8))
    }
}
