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
