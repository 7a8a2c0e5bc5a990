import Foundation
import XCTest

/// Docs/Migrating.md, "What a rename does not fix": what a port meets, compiled as programs against the
/// built library modules.
final class MigrationCompileTests: XCTestCase {
    /// `ProgressNode()` does not compile, and the message says what to write instead.
    func test_progress_node_init_is_unavailable_with_what_to_write_instead() throws {
        let compiler = try SnippetCompiler()
        defer { try? FileManager.default.removeItem(at: compiler.workDirectory) }
        switch compiler.build(["let node = ProgressNode()", "print(node)"], named: "init") {
        case .success: XCTFail("ProgressNode() compiled")
        case .failure(let error):
            XCTAssertTrue(error.description.contains("'init()' is unavailable"), error.description)
            XCTAssertTrue(
                error.description.contains("ProgressNode.discreteProgress(totalUnitCount: 0)"), error.description)
        }
    }

    /// The KVO token a port declares (issue 49, item 10): Docs/Migrating.md's table names it, with the error
    /// the compiler gives on Linux, where Apple's key-value observing does not exist, and what to write
    /// instead compiles and observes.
    func test_an_nskeyvalueobservation_is_in_the_table_with_its_error_and_what_compiles_instead() throws {
        let error = "cannot find type 'NSKeyValueObservation' in scope"
        let guide = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Docs/Migrating.md"), encoding: .utf8)
        let table = guide.components(separatedBy: "## What a rename does not fix")[1].components(separatedBy: "\n\n")[1]
        let row = try XCTUnwrap(
            table.split(separator: "\n").first { $0.hasPrefix("| `var observation: NSKeyValueObservation?`") },
            "no row for NSKeyValueObservation")
        XCTAssertTrue(row.contains(error), String(row))
        XCTAssertTrue(row.contains("does not exist in swift-corelibs-foundation"), String(row))
        XCTAssertTrue(row.contains("`var observation: ProgressObservation?`"), String(row))

        let compiler = try SnippetCompiler()
        defer { try? FileManager.default.removeItem(at: compiler.workDirectory) }
        let ported = [
            "import Foundation",
            "let node = ProgressNode.discreteProgress(totalUnitCount: 2)",
            "var observation: NSKeyValueObservation?",
            "observation = node.observe(\\.fractionCompleted) { _, _ in }",
        ]
        #if os(Linux)
        switch compiler.build(ported, named: "kvo") {
        case .success: XCTFail("NSKeyValueObservation compiled on Linux")
        case .failure(let failure): XCTAssertTrue(failure.description.contains(error), failure.description)
        }
        #endif
        let fixed = try compiler.build(
            [
                "import Dispatch",
                "let node = ProgressNode.discreteProgress(totalUnitCount: 2)",
                "let queue = DispatchQueue(label: \"ui\")",
                "var observation: ProgressObservation?",
                "observation = node.observe(\\.fractionCompleted, on: queue, options: .initial) { _, change in",
                "    print(change.newValue)",
                "}",
                "queue.sync {}",
                "observation?.invalidate()",
            ], named: "observation"
        ).get()
        XCTAssertEqual(try SnippetCompiler.run(fixed).standardOutput, "0.0\n")
    }

    /// `ProgressUserInfoKey` is ProgressTree's key without Foundation; beside Foundation, whose names are
    /// the same, the module-qualified names compile and mean ProgressTree's types.
    func test_foundations_names_compile_alone_and_module_qualified_beside_foundation() throws {
        let compiler = try SnippetCompiler()
        defer { try? FileManager.default.removeItem(at: compiler.workDirectory) }
        let alone = try compiler.build(
            [
                "let key: ProgressUserInfoKey = .throughputKey",
                "let node = ProgressNode(parent: nil, userInfo: [key: 5])",
                "print(node.userInfo[key] as? Int ?? 0)",
            ], named: "alone"
        ).get()
        XCTAssertEqual(try SnippetCompiler.run(alone).standardOutput, "5\n")
        let besideFoundation = try compiler.build(
            [
                "import Foundation",
                "final class Import: ProgressTree.ProgressReporting {",
                "    let progress = ProgressNode.discreteProgress(totalUnitCount: 3)",
                "}",
                "let key: ProgressTree.ProgressUserInfoKey = .throughputKey",
                "let foundationKey: Foundation.ProgressUserInfoKey = .throughputKey",
                "print(Import().progress.totalUnitCount, key.rawValue == foundationKey.rawValue)",
            ], named: "beside"
        ).get()
        XCTAssertEqual(try SnippetCompiler.run(besideFoundation).standardOutput, "3 true\n")
    }
}
