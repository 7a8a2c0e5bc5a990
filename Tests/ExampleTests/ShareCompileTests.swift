import Foundation
import XCTest

/// `ProgressShare` is used once: what the compiler refuses, each next to the same program that uses the
/// share once and compiles (so that the refusal is the second use's, not a mistake of the snippet).
/// Compiled by `SnippetCompiler.check` (`swiftc -emit-sil`: `-typecheck` does not check ownership). The
/// statements run inside a function: a top-level `let` of `main.swift` is a global, which no code can
/// consume.
final class ShareCompileTests: XCTestCase {
    private static let function = [
        "func importPhoto(progress: consuming ProgressShare) {",
        "    let node = progress.start(totalUnitCount: 2)",
        "    node.advance(by: 2)",
    ]

    func test_a_share_started_once_compiles_and_started_twice_does_not() throws {
        try expect(
            Self.function + ["}"],
            compilesButNotWith: Self.function + ["    _ = progress.start(totalUnitCount: 1)", "}"],
            because: "'progress' consumed more than once")
    }

    func test_a_share_cannot_be_used_after_it_was_handed_to_a_function() throws {
        let caller = ["let album = ProgressNode(totalUnitCount: 2)", "let share = album.share(pendingUnitCount: 1)"]
        try expect(
            Self.function + ["}"] + Self.inFunction(caller + ["importPhoto(progress: share)"]),
            compilesButNotWith: Self.function + ["}"]
                + Self.inFunction(caller + ["importPhoto(progress: share)", "importPhoto(progress: share)"]),
            because: "'share' consumed more than once")
    }

    func test_a_share_cannot_be_copied() throws {
        let lines = ["let album = ProgressNode(totalUnitCount: 2)", "let share = album.share(pendingUnitCount: 1)"]
        try expect(
            Self.inFunction(lines + ["let moved = share", "_ = moved.start(totalUnitCount: 1)"]),
            compilesButNotWith: Self.inFunction(
                lines + ["let copy = share", "_ = share.start(totalUnitCount: 1)", "_ = copy"]),
            because: "'share' consumed more than once")
    }

    /// An optional share is started with `?.`, once.
    func test_an_optional_share_started_once_compiles_and_started_twice_does_not() throws {
        let function = [
            "func importPhoto(progress: consuming ProgressShare?) {",
            "    let node = progress?.start(totalUnitCount: 2) ?? .discreteProgress(totalUnitCount: 2)",
            "    node.advance(by: 2)",
        ]
        try expect(
            function + ["}", "importPhoto(progress: nil)"],
            compilesButNotWith: function + ["    _ = progress?.start(totalUnitCount: 1)", "}"],
            because: "'progress' consumed more than once")
    }

    /// Docs/Composition.md: a share cannot be moved into a task's closure (it is escaping); the task makes
    /// its share instead. Should a later Swift accept the move, this test says so, and the guide changes.
    func test_a_share_is_made_inside_a_task_and_cannot_be_moved_into_one() throws {
        let lines = [
            "func upload(progress: consuming ProgressShare) async { progress.start(totalUnitCount: 1).advance() }",
            "let backup = ProgressNode(totalUnitCount: 1)",
        ]
        try expect(
            lines + ["Task { await upload(progress: backup.share(pendingUnitCount: 1)) }"],
            compilesButNotWith: lines
                + Self.inFunction([
                    "let share = backup.share(pendingUnitCount: 1)", "Task { await upload(progress: share) }",
                ]),
            because: "noncopyable 'share' cannot be consumed when captured by an escaping closure")
    }

    /// `statements` in a function, and its call.
    private static func inFunction(_ statements: [String]) -> [String] {
        ["func run() {"] + statements.map { "    " + $0 } + ["}", "run()"]
    }

    private func expect(
        _ valid: [String], compilesButNotWith invalid: [String], because message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let compiler = try SnippetCompiler()
        defer { try? FileManager.default.removeItem(at: compiler.workDirectory) }
        if case .failure(let error) = compiler.check(valid, named: "valid") {
            XCTFail("the valid program does not compile:\n\(error)", file: file, line: line)
        }
        switch compiler.check(invalid, named: "invalid") {
        case .success: XCTFail("compiled:\n\(invalid.joined(separator: "\n"))", file: file, line: line)
        case .failure(let error):
            XCTAssertTrue(error.description.contains("error: \(message)"), error.description, file: file, line: line)
        }
    }
}
