import Foundation
import XCTest

/// Docs/Architecture.md names the code it describes so that a reader can check each statement against
/// it: every name it cites must exist in the sources, and its lists of a node's fields and flags must be
/// the code's.
final class ArchitectureDocTests: XCTestCase {
    static let root = URLPath.packageRoot(of: #filePath)

    /// Names the guide cites that are not declared under Sources/ on purpose: the toolchain's, the C
    /// library's, the runtime's, placeholders and keywords.
    static let notInTheSources: Set<String> = [
        // Foundation, Dispatch, Synchronization and Observation: what the code uses, not what it declares.
        "Foundation.Progress", "Progress", "URLSession", "FoundationEssentials", "DispatchSourceTimer",
        "queue.async", "asyncAfter", "Mutex", "Synchronization.Mutex", "access", "withMutation", "onChange",
        // The C library, the kernel and ThreadSanitizer.
        "dlsym", "poll", "SO_PEERCRED", "PR_SET_PDEATHSIG", "SOCK_CLOEXEC", "MSG_NOSIGNAL", "sigset_t", "ENOTSUP",
        "errno", "__tsan_acquire", "__tsan_release",
        // The standard library's types the model extends (the API table's "extends" column), and its unsafe
        // constructs ("Unsafe code: named handles").
        "Array", "Bool", "Double", "Int", "Int64", "String", "Unmanaged", "_withUnsafeGuaranteedRef", "unowned(unsafe)",
        // Keywords.
        "deinit", "package", "public",
        // Placeholders for a family of names.
        "<Module>.docc", "Type+Concern.swift",
    ]

    func test_every_code_name_the_guide_cites_exists() throws {
        let guide = try Guide(URLPath.read(Self.root + "/Docs/Architecture.md"))
        let sources = try Sources(root: Self.root)
        var missing: [String] = []
        for name in guide.citedNames.sorted() where !Self.notInTheSources.contains(name) {
            if !sources.has(name) { missing.append(name) }
        }
        XCTAssertEqual(
            missing, [],
            "Docs/Architecture.md cites names the sources do not declare (rename them in the guide, or, for a "
                + "name that is not the package's, add it to `notInTheSources`)")
    }

    /// "What a node holds": the fields it lists beside the atomics are the stored properties of
    /// `ProgressNode`, all of them.
    func test_the_fields_the_guide_lists_are_the_nodes() throws {
        let guide = try Guide(URLPath.read(Self.root + "/Docs/Architecture.md"))
        let node = try URLPath.read(Self.root + "/Sources/ProgressTree/Core/ProgressNode.swift")
        let declared = Set(
            node.matches(of: #/\n    (?:@\w+ )*(?:private )?(?:let|var) (\w+)\s*[:=]/#).map { String($0.1) })
        let listed = guide.nodeFields
        XCTAssertFalse(listed.isEmpty, "no field found in \"What a node holds\"")
        XCTAssertEqual(listed.subtracting(declared).sorted(), [], "listed as a node's fields, not stored there")
        XCTAssertEqual(declared.subtracting(listed).sorted(), [], "the node's stored properties the guide omits")
    }

    /// The flags it lists for `flags : NodeFlags` are the bits NodeFlags.swift declares.
    func test_the_flags_the_guide_lists_are_the_nodes() throws {
        let guide = try Guide(URLPath.read(Self.root + "/Docs/Architecture.md"))
        let flags = try URLPath.read(Self.root + "/Sources/ProgressTree/Core/NodeFlags.swift")
        let declared = Set(flags.matches(of: #/static let (\w+): UInt32 = 1 << /#).map { String($0.1) })
        XCTAssertFalse(declared.isEmpty)
        XCTAssertEqual(guide.nodeFlags.subtracting(declared).sorted(), [], "listed as flags, not declared")
        XCTAssertEqual(declared.subtracting(guide.nodeFlags).sorted(), [], "flags the guide omits")
    }
}

/// Docs/Architecture.md, as the checks above read it.
private struct Guide {
    /// The code-formatted spans of the prose, and the names the diagrams (fenced blocks) give in code form:
    /// camel-case words (`markChangedSlowPath`, `RefreshDomain.lastReader`) and file names. A span that is
    /// neither a name nor a path (a command, a flag, a hash) is left out.
    var citedNames: Set<String> = []
    /// The names at the start of the field lines of the node's diagram ("What a node holds").
    var nodeFields: Set<String> = []
    /// The flags listed after `flags : NodeFlags`.
    var nodeFlags: Set<String> = []

    init(_ markdown: String) {
        var inFence = false
        var inFlags = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence {
                for span in line.matches(of: #/`([^`]+)`/#) where Self.isName(String(span.1)) {
                    citedNames.insert(String(span.1))
                }
                continue
            }
            var rest = line
            for file in line.matches(of: #/[\w+]+\.swift/#) {
                citedNames.insert(String(file.0))
                rest = rest.replacing(file.0, with: " ")
            }
            for word in rest.matches(of: #/\b(?:[A-Z]\w*\.)?[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*(?:\.\w+)?/#) {
                citedNames.insert(String(word.0))
            }
            // The node's diagram: "│     name : Type  what" or "│     name, name   what".
            if let field = line.firstMatch(of: #/^│     ([a-z]\w*(?:, [a-z]\w*)*)\s/#) {
                for name in field.1.split(separator: ",") {
                    nodeFields.insert(name.trimmingCharacters(in: .whitespaces))
                }
            }
            if line.hasPrefix("└── state ") { nodeFields.insert("state") }
            if line.contains("flags           : NodeFlags") { inFlags = true }
            if inFlags {
                guard let list = line.firstMatch(of: #/NodeFlags\s+(.*)$|^│\s{30,}(·.*)$/#) else {
                    inFlags = false
                    continue
                }
                let words = String(list.1 ?? list.2 ?? "")
                for flag in words.split(separator: "·") {
                    let name = flag.trimmingCharacters(in: .whitespaces)
                    if !name.isEmpty { nodeFlags.insert(name) }
                }
            }
        }
    }

    /// A name (`ProgressNode`, `NodeExtras.holderAddress`, `advance(by:)`, `.file`) or a path (`Core/`,
    /// `Layout/LineFormatter.swift`, `+Failure.swift`): what the code has or does not have.
    static func isName(_ span: String) -> Bool {
        span.wholeMatch(of: #/\.?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(.*\))?/#) != nil
            || span.wholeMatch(of: #/[\w+.<>*\/-]+/#) != nil && (span.contains("/") || span.hasSuffix(".swift"))
            || span.hasSuffix(".docc")
    }
}

/// What the sources declare, and the package's files.
private struct Sources {
    /// Every name declared under Sources/ (a type, a function, a property, a case, a C function), and the
    /// modules.
    var declared: Set<String> = []
    /// The contents of string literals of the sources (names looked up at run time: `dlsym`, environment
    /// variables).
    var literals: Set<String> = []
    /// The package's files and folders (folders with a trailing `/`), relative to its root.
    var paths: [String] = []

    init(root: String) throws {
        let files = FileManager.default.enumerator(atPath: root)
        while let path = files?.nextObject() as? String {
            if path.split(separator: "/").contains(where: { $0.hasPrefix(".build") || $0 == ".git" }) {
                files?.skipDescendants()
                continue
            }
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder)
            paths.append(isFolder.boolValue ? path + "/" : path)
            guard path.hasPrefix("Sources/") else { continue }
            if isFolder.boolValue, path.split(separator: "/").count == 2 {
                declared.insert(String(path.split(separator: "/")[1]))
            }
            guard [".swift", ".c", ".h"].contains(where: path.hasSuffix) else { continue }
            let text = try URLPath.read(root + "/" + path)
            let declaration =
                #/\b(?:func|var|let|case|class|struct|enum|protocol|typealias|actor|associatedtype)\s+([A-Za-z_]\w*)((?:\s*,\s*[A-Za-z_]\w*)*)/#
            for match in text.matches(of: declaration) {
                declared.insert(String(match.1))
                for other in match.2.split(separator: ",") {
                    declared.insert(other.trimmingCharacters(in: .whitespaces))
                }
            }
            if !path.hasSuffix(".swift") {
                for call in text.matches(of: #/\b([A-Za-z_]\w*)\s*\(/#) { declared.insert(String(call.1)) }
            }
            for literal in text.matches(of: #/"(\w+)"/#) { literals.insert(String(literal.1)) }
        }
    }

    /// Whether `name` (a name or a path as `Guide.isName` takes them) exists.
    func has(_ name: String) -> Bool {
        if name.contains("/") || name.hasSuffix(".swift") || name.hasSuffix(".docc") { return hasPath(name) }
        let base = name.drop { $0 == "." }.prefix { $0 != "(" }
        let parts = base.split(separator: ".").map(String.init)
        // The member, and the type it is a member of (`NodeExtras.holderAddress`); a lower-case first part is
        // a variable (`node.observable`), not checked.
        let checked = [parts.last ?? ""] + parts.dropLast().filter { $0.first?.isUppercase == true }
        return checked.allSatisfy { $0 == "init" || declared.contains($0) || literals.contains($0) }
    }

    /// Whether a file or folder ends with `path`: `Layout/LineFormatter.swift`, `Core/`, `+Failure.swift`
    /// (a `ProgressNode+` file), `Observation/ObservableProgress*.swift` (`*`: any characters but `/`).
    func hasPath(_ path: String) -> Bool {
        let body = path.split(separator: "*", omittingEmptySubsequences: false)
            .map { NSRegularExpression.escapedPattern(for: String($0)) }.joined(separator: "[^/]*")
        let start = path.hasPrefix("+") ? "[^/]*" : "(?:^|/)"
        guard let regex = try? Regex(start + body + "/?$") else { return false }
        return paths.contains { $0.contains(regex) }
    }
}
