import ProgressTree
@testable import ProgressTreeTerminal
import TestSupport
import XCTest

/// Files a copy skipped: a count that crosses the wire.
private enum FilesSkipped: WireProgressProperty {
    static let wireName = "filesSkipped"
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// What a copy is doing: a word that crosses the wire.
private enum CopyPhase: WireProgressProperty {
    static let wireName = "phase"
    static var defaultValue: String { "" }
    static var defaultSummary: [String] { [] }
    static func reduce(into summary: inout [String], value: String) { if !value.isEmpty { summary.append(value) } }
    static func merge(_ a: [String], _ b: [String]) -> [String] { (a + b).sorted() }
}

/// A property that stays in its process.
private enum Hidden: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}

/// Plain and json modes show each node's own values of its wire properties: exact lines.
final class PropertyOutputTests: XCTestCase {
    func test_plain_lines_end_with_the_nodes_own_values_as_name_equals_json_value() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let clock = ManualProgressClock()
        let (root, first, second) = makeSyncTree()
        first[FilesSkipped.self] = 2
        first[CopyPhase.self] = "copying \"a\""
        second[Hidden.self] = 1
        let renderer = makeTestRenderer(root, mode: .plain, output: output, clock: clock)
        renderer.drawFrame()
        first[FilesSkipped.self] = 3  // not progress: no line by itself
        renderer.drawFrame()
        first.completedUnitCount = 10
        second.completedUnitCount = 10
        renderer.stop()
        XCTAssertEqual(
            output.allLines,
            [
                "[  0%] Sync: started, 0 of 2",
                #"[  0%] Sync › a.txt: started, 0 of 10, filesSkipped=2, phase="copying \"a\"""#,
                "[  0%] Sync › b.txt: started, 0 of 10",
                #"[100%] Sync › a.txt: done, 10 of 10, filesSkipped=3, phase="copying \"a\"""#,
                "[100%] Sync › b.txt: done, 10 of 10",
                "[100%] Sync: done, 2 of 2",
            ])
    }

    func test_json_lines_carry_the_nodes_own_values_in_a_properties_object() {
        let output = VirtualTerminal(columns: 80, rows: 100, isTerminal: false)
        let clock = ManualProgressClock()
        let (root, first, second) = makeSyncTree()
        root[FilesSkipped.self] = 1
        first[FilesSkipped.self] = 2
        first[CopyPhase.self] = "copying"
        second[Hidden.self] = 1
        let renderer = makeTestRenderer(root, mode: .json, output: output, clock: clock)
        renderer.drawFrame()
        clock.advance(by: .milliseconds(500))
        first[CopyPhase.self] = "verifying"  // a property is part of the line: its change writes one
        renderer.drawFrame()
        let lines = output.writes.joined().split(separator: "\n").map(String.init)
        let common = #""throughput":null,"timeRemaining":null,"reason":null,"failedBelow":0,"cancelledBelow":0,"#
        let file =
            #""kind":null,"fileOperationKind":null,"fileURL":null,"fileTotalCount":null,"#
            + #""fileCompletedCount":null,"cancellable":true,"pausable":false"#
        XCTAssertEqual(
            lines,
            [
                #"{"v":1,"time":0,"id":1,"parent":null,"pending":0,"name":"Sync","completed":0,"total":2,"#
                    + #""fraction":0,"state":"running","indeterminate":false,"# + common
                    + #""description":"Sync","additionalDescription":null,"# + file
                    + #","properties":{"filesSkipped":1}}"#,
                #"{"v":1,"time":0,"id":2,"parent":1,"pending":1,"name":"a.txt","completed":0,"total":10,"#
                    + #""fraction":0,"state":"running","indeterminate":false,"# + common
                    + #""description":"a.txt","additionalDescription":null,"# + file
                    + #","properties":{"filesSkipped":2,"phase":"copying"}}"#,
                #"{"v":1,"time":0,"id":3,"parent":1,"pending":1,"name":"b.txt","completed":0,"total":10,"#
                    + #""fraction":0,"state":"running","indeterminate":false,"# + common
                    + #""description":"b.txt","additionalDescription":null,"# + file + "}",
                #"{"v":1,"time":0.5,"id":2,"parent":1,"pending":1,"name":"a.txt","completed":0,"total":10,"#
                    + #""fraction":0,"state":"running","indeterminate":false,"# + common
                    + #""description":"a.txt","additionalDescription":null,"# + file
                    + #","properties":{"filesSkipped":2,"phase":"verifying"}}"#,
            ])
        renderer.stop()
    }
}
