import Foundation
import XCTest

/// The oldest Swift the package names (`swift-tools-version` in Package.swift, the README and Getting
/// started) must build it. CI has only a newer toolchain, which accepts everything later Swift versions
/// added, so these tests read the sources for what needs a later compiler or standard library, by the
/// Swift Evolution proposal that added it and the version that shipped it.
final class ToolchainFloorTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A construct that needs a later Swift than 6.0: a line of code (comments and string literals left out)
    /// that contains one of `markers` and matches `pattern` once `allowed` is taken out of it.
    struct LaterFeature {
        var name: String
        var markers: [String]
        /// A regular expression.
        var pattern: String
        var allowed: String? = nil

        init(name: String, marker: String..., pattern: String, allowed: String? = nil) {
            self.name = name
            self.markers = marker
            self.pattern = pattern
            self.allowed = allowed
        }

        func isUsed(in line: String, matching regex: Regex<AnyRegexOutput>) -> Bool {
            guard markers.contains(where: { line.contains($0) }) else { return false }
            return (allowed.map { line.replacing($0, with: "") } ?? line).contains(regex)
        }
    }

    static let laterFeatures: [LaterFeature] = [
        LaterFeature(name: "`weak let` (SE-0481, Swift 6.2)", marker: "weak", pattern: #"\bweak\s+let\b"#),
        LaterFeature(
            name: "`Duration.attoseconds` (SE-0457, Swift 6.2); use `components`", marker: "attoseconds",
            pattern: #"\.attoseconds\b|\(attoseconds:"#, allowed: "components.attoseconds"),
        LaterFeature(
            name: "`nonisolated(nonsending)` or `@concurrent` (SE-0461, Swift 6.2)",
            marker: "nonsending", "@concurrent", pattern: #"nonisolated\(nonsending\)|@concurrent\b"#),
        LaterFeature(
            name: "`InlineArray`, `Span` or their kin (SE-0447, SE-0453, SE-0456, SE-0464, SE-0467, Swift 6.2)",
            marker: "InlineArray", "Span", ".span", " of ",
            pattern: #"\b(InlineArray|(Mutable)?(Raw)?Span|UTF8Span|OutputSpan)\b|\.span\b|\[\d+ of "#),
        LaterFeature(
            name: "`Task.immediate`, a task name or priority escalation (SE-0469, SE-0472, SE-0462, Swift 6.2)",
            marker: "Task",
            pattern: #"Task\.immediate|Task(<[^>]*>)?\(name:|addTask\(name:|TaskPriorityEscalation"#),
        LaterFeature(
            name: "a raw identifier (SE-0451, Swift 6.2)", marker: "`",
            pattern: #"(func|var|let|case|enum|struct|class)\s+`[^`]*[^\w`][^`]*`"#),
        LaterFeature(
            name: "a method or initializer key path (SE-0479, Swift 6.2)", marker: "\\",
            pattern: #"\\(\w+)?(\.\w+)*\.\w+\("#),
        LaterFeature(
            name: "an isolated conformance (SE-0470, Swift 6.2)", marker: "Actor",
            pattern: #"(extension|struct|class|enum|actor)\s[^{]*:\s*@\w*Actor\s+[A-Z]"#),
        LaterFeature(
            name: "an `isolated deinit` (SE-0371, Swift 6.2)", marker: "deinit", pattern: #"isolated\s+deinit"#),
        LaterFeature(name: "`@abi` (SE-0476, Swift 6.2)", marker: "@abi", pattern: #"@abi\b"#),
        LaterFeature(
            name: "`enumerated()` as a collection (SE-0459, Swift 6.2)", marker: "enumerated()",
            pattern: #"\.enumerated\(\)(\.(count|isEmpty|indices|startIndex|endIndex|last|firstIndex)\b|\[)"#),
        LaterFeature(
            name: "`SendableMetatype` (SE-0470, Swift 6.2)", marker: "SendableMetatype", pattern: #"SendableMetatype"#),
        LaterFeature(
            name: "strict memory safety's `unsafe` expressions (SE-0458, Swift 6.2)", marker: "unsafe",
            pattern: #"(^|[=(,\[{:]|return|try|await)\s*unsafe\s+[\w(&]"#),
        LaterFeature(
            name: "`nonisolated` on a type, extension or protocol (SE-0449, Swift 6.1)", marker: "nonisolated",
            pattern: #"nonisolated\s+(struct|class|enum|extension|protocol|actor)\b"#),
        LaterFeature(
            name: "a task group without `of:` (SE-0442, Swift 6.1)", marker: "TaskGroup",
            pattern: #"\bwith(Throwing)?TaskGroup\s*(\{|\((?!\s*of:))"#),
        LaterFeature(
            name: "`@c` (SE-0495, Swift 6.3), `@inline(always)` (SE-0496) or a module selector (SE-0491)",
            marker: "@c", "@inline", "::", pattern: #"@c\b|@inline\(always\)|\b\w+::\w+"#),
    ]

    /// The Swift files of the package (sources, examples, tests and the manifest), this one left out: it
    /// names the constructs it looks for.
    static func swiftFiles() throws -> [URL] {
        var files = [root.appendingPathComponent("Package.swift")]
        for folder in ["Sources", "Examples", "Tests"] {
            let folder = root.appendingPathComponent(folder)
            let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
            while let file = enumerator?.nextObject() as? URL {
                if file.pathExtension == "swift", file.lastPathComponent != "ToolchainFloorTests.swift" {
                    files.append(file)
                }
            }
        }
        return files
    }

    func test_the_sources_use_nothing_newer_than_swift_6_0() throws {
        // Simple word boundaries: Unicode's would join `duration.attoseconds.quotient…` into one word.
        let regexes = try Self.laterFeatures.map { try Regex($0.pattern).wordBoundaryKind(.simple) }
        var found: [String] = []
        for file in try Self.swiftFiles() {
            let code = try Self.codeLines(of: String(contentsOf: file, encoding: .utf8))
            let name = file.path.dropFirst(Self.root.path.count + 1)
            for (number, line) in code.enumerated() where !line.isEmpty {
                for (feature, regex) in zip(Self.laterFeatures, regexes)
                where feature.isUsed(in: line, matching: regex) {
                    found.append("\(name):\(number + 1): \(feature.name): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
            // A trailing comma before `)` (SE-0439, Swift 6.1): in an argument, parameter or tuple list.
            var lastComma: Int?
            for (number, line) in code.enumerated() {
                for character in line where !character.isWhitespace {
                    if character == ")", let comma = lastComma {
                        found.append("\(name):\(comma + 1): a trailing comma before `)` (SE-0439, Swift 6.1)")
                    }
                    lastComma = character == "," ? number : nil
                }
            }
        }
        XCTAssertEqual(found, [], "constructs Swift 6.0 does not accept:\n" + found.joined(separator: "\n"))
    }

    func test_the_readme_and_getting_started_name_the_manifests_tools_version() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let version = try XCTUnwrap(manifest.firstMatch(of: #/^\/\/ swift-tools-version: ([0-9.]+)\n/#)?.1)
        XCTAssertEqual(version, "6.0")
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let guide = try String(contentsOf: Self.root.appendingPathComponent("Docs/GettingStarted.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("**Swift \(version) or later**"))
        XCTAssertTrue(readme.contains("`swift-tools-version: \(version)`"))
        XCTAssertTrue(guide.contains("It needs Swift \(version) or later"))
        XCTAssertTrue(guide.contains("// swift-tools-version: \(version)\n"))
        for text in [readme, guide] {
            XCTAssertFalse(text.contains("every platform Swift runs on"))
        }
    }

    /// `text`'s lines with comments and the contents of string literals blanked out (an approximation that
    /// is right for this package's code: no `/* */` comments, no `"` in raw strings). Works on bytes: the
    /// syntax that matters is ASCII.
    static func codeLines(of text: String) -> [String] {
        let quote = UInt8(ascii: "\""), slash = UInt8(ascii: "/"), backslash = UInt8(ascii: "\\")
        var inMultilineString = false
        return text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            let bytes = Array(line)
            var quotes = 0
            for byte in bytes {
                quotes = byte == quote ? quotes + 1 : 0
                if quotes == 3 { break }
            }
            if quotes == 3 {  // a line that opens or closes a multi-line string literal
                inMultilineString.toggle()
                return ""
            }
            if inMultilineString { return "" }
            var code: [UInt8] = []
            code.reserveCapacity(bytes.count)
            var inString = false
            var previous = UInt8(ascii: " ")
            for byte in bytes {
                if byte == quote && previous != backslash {
                    inString.toggle()
                    code.append(byte)
                } else if !inString && byte == slash && previous == slash {
                    code.removeLast()
                    break
                } else {
                    code.append(inString ? UInt8(ascii: " ") : byte)
                }
                previous = byte
            }
            return String(decoding: code, as: UTF8.self)
        }
    }
}
