#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import XCTest

/// Signals and job control on the built examples, as real child processes: one convention for all
/// (130 on Ctrl-C, 143 on SIGTERM, 129 on SIGHUP), and the terminal given back in a usable state.
final class SignalTests: XCTestCase {
    private let hideCursor = "\u{1B}[?25l"
    private let showCursor = "\u{1B}[?25h"
    private let clearedTaskbarProgress = "\u{1B}]9;4;0;0\u{07}"

    /// Each example, started so that it runs long enough, and a text it prints once its signal handling
    /// is in place.
    private let examples: [(name: String, arguments: [String], terminal: Bool, ready: String)] = [
        ("photo-import", ["--photos", "100", "--progress", "plain"], false, "started"),
        ("message-feed", ["--messages", "10000", "--progress", "plain"], false, "started"),
        ("loading-rows", ["--delay", "60", "--progress", "plain"], false, "started"),
        ("step-flow", ["--speed", "0.1"], true, "Step 1 of 5"),
    ]

    func test_every_example_exits_130_on_ctrl_c_143_on_sigterm_and_129_on_sighup() throws {
        for example in examples {
            for (signalNumber, status) in [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] {
                let child = try ExampleProcess(example.name, example.arguments, terminal: example.terminal)
                XCTAssertTrue(child.waitForOutput(containing: example.ready), "\(example.name): \(child.outputText)")
                child.send(signalNumber)
                let exit = child.waitForExit()
                XCTAssertEqual(exit?.reason, .exit, "\(example.name), signal \(signalNumber)")
                XCTAssertEqual(exit?.status, Int32(status), "\(example.name), signal \(signalNumber)")
            }
        }
    }

    /// `photo-import 2>&1 | cat`, interrupted: Ctrl-C ends `cat` too, so the last lines go to a pipe whose
    /// reader is gone. The library's interrupt handling ignores `SIGPIPE`: those writes fail, and the
    /// program still ends with 130 as its `--help` says (before: 141, killed by `SIGPIPE`).
    func test_ctrl_c_with_the_output_piped_to_a_reader_that_went_away_exits_130() throws {
        let process = Process()
        process.executableURL = FileCopyProcess.productsDirectory.appendingPathComponent("photo-import")
        process.arguments = ["--photos", "100"]
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        try pipe.fileHandleForWriting.close()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("started") {
            let data = pipe.fileHandleForReading.availableData
            XCTAssertFalse(data.isEmpty, "photo-import ended before it started")
            if data.isEmpty { break }
            seen.append(data)
        }
        try pipe.fileHandleForReading.close()  // `cat`, ended by the same Ctrl-C
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "not killed by SIGPIPE")
        XCTAssertEqual(process.terminationStatus, 130)
    }

    /// Every `--help` states the exit statuses and where each stream goes, in lines that fit 80 columns.
    func test_every_example_help_states_its_exit_codes_and_streams_in_80_columns() throws {
        for name in ["photo-import", "file-copy", "step-flow", "message-feed", "loading-rows", "fetch"] {
            let child = try ExampleProcess(name, ["--help"])
            XCTAssertEqual(child.waitForExit()?.status, 0, name)
            let help = child.outputText
            XCTAssertTrue(help.contains("Exit status: 0 "), "\(name): \(help)")
            for status in ["2 bad arguments", "130 ", "143 terminated (SIGTERM)", "129 hung up (SIGHUP"] {
                XCTAssertTrue(help.contains(status), "\(name) --help does not say \(status)")
            }
            XCTAssertTrue(help.contains("standard output") || help.contains("standard error"), "\(name): streams")
            for line in help.split(separator: "\n") {
                XCTAssertLessThanOrEqual(line.count, 80, "\(name) --help: \(line)")
            }
        }
    }

    /// The terminal window closed: the cursor comes back and the terminal leaves key mode, as on SIGTERM.
    func test_sighup_restores_the_cursor_and_the_terminal_mode_of_a_live_example() throws {
        let child = try ExampleProcess("photo-import", ["--photos", "100"], terminal: true)
        XCTAssertTrue(child.waitForOutput(containing: hideCursor), child.outputText)
        XCTAssertTrue(child.wait(timeout: 15) { child.isInKeyMode == true }, "the keys are read")
        let before = child.outputData.count
        child.send(SIGHUP)
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.reason, .exit)
        XCTAssertEqual(exit?.status, 129)
        XCTAssertEqual(child.isInKeyMode, false, "the terminal reads lines and echoes again")
        let after = child.output(after: before)
        XCTAssertTrue(after.contains(showCursor), after)
        XCTAssertFalse(after.components(separatedBy: showCursor).last!.contains(hideCursor), after)
    }

    /// Ctrl-Z: the live area cleared, the cursor shown, the taskbar progress cleared and line mode back at
    /// the shell's prompt, then the process stops. `fg`: key mode again, and the tree drawn anew where the
    /// cursor is (below what the shell printed), not over lines that are no longer the old tree, with the
    /// taskbar progress.
    func test_ctrl_z_gives_the_terminal_back_and_fg_redraws_the_tree_below_in_key_mode() throws {
        #if !os(Linux)
        throw XCTSkip("reads the process state from /proc")
        #else
        let child = try ExampleProcess("photo-import", ["--photos", "100", "--speed", "0.5"], terminal: true)
        XCTAssertTrue(child.waitForOutput(containing: "• Importing 100 photos"), child.outputText)
        XCTAssertTrue(child.wait(timeout: 15) { child.isInKeyMode == true }, "the keys are read")
        // A frame drawn over an earlier one (it moves up first): the renderer has recorded the live area's
        // height, which the handler clears (it learns of a frame just after writing it).
        let afterFirstFrame = child.outputData.count
        XCTAssertTrue(
            child.wait(timeout: 15) { child.output(after: afterFirstFrame).firstMatch(of: /\r\u{1B}\[[0-9]+A/) != nil },
            "a second frame")

        let beforeStop = child.outputData.count
        child.send(SIGTSTP)
        XCTAssertTrue(child.wait(timeout: 15) { child.isStopped }, "Ctrl-Z stops the process")
        XCTAssertEqual(child.isInKeyMode, false, "stopped, the terminal is in line mode for the shell")
        XCTAssertTrue(child.waitForOutput(containing: showCursor, after: beforeStop))
        let atStop = child.output(after: beforeStop)
        // The live area is cleared (the shell writes where it was), then the cursor shown.
        XCTAssertNotNil(
            atStop.firstMatch(of: /\r\u{1B}\[[0-9]+A\u{1B}\[J\u{1B}\[\?2026l\u{1B}\[0m\u{1B}\[\?25h/),
            atStop.debugDescription)
        XCTAssertFalse(atStop.components(separatedBy: showCursor).last!.contains(hideCursor))
        // The taskbar progress cleared after the cursor is shown, and not set again while stopped.
        XCTAssertTrue(child.waitForOutput(containing: showCursor + clearedTaskbarProgress, after: beforeStop))
        let afterClearing = child.output(after: beforeStop).components(separatedBy: clearedTaskbarProgress).last!
        XCTAssertFalse(afterClearing.contains("\u{1B}]9;4;"), atStop.debugDescription)

        let beforeContinue = child.outputData.count
        child.send(SIGCONT)
        // A whole frame drawn from where the cursor is: no move up over the old one.
        XCTAssertTrue(
            child.waitForOutput(containing: "\u{1B}[?2026h\u{1B}[?25l\r• Importing 100 photos", after: beforeContinue),
            child.output(after: beforeContinue).debugDescription)
        // The taskbar progress shown again with that frame.
        XCTAssertTrue(
            child.waitForOutput(containing: "\u{1B}[?2026l\u{1B}]9;4;1;", after: beforeContinue),
            child.output(after: beforeContinue).debugDescription)
        XCTAssertTrue(child.wait(timeout: 15) { child.isInKeyMode == true }, "fg: the keys are read again")

        child.send(SIGINT)
        let exit = child.waitForExit()
        XCTAssertEqual(exit?.reason, .exit)
        XCTAssertEqual(exit?.status, 130)  // 66 would be ThreadSanitizer's: a handler that changed errno
        XCTAssertFalse(child.outputText.contains("ThreadSanitizer"), child.outputText.debugDescription)
        XCTAssertEqual(child.isInKeyMode, false)
        #endif
    }

    /// Keys typed while message-feed or loading-rows run live are not echoed over the live area (the
    /// terminal is in key mode, though they read no keys), and the terminal echoes again afterwards.
    func test_typed_keys_are_not_echoed_over_the_live_area() throws {
        for (name, arguments) in [
            ("message-feed", ["--messages", "30", "--speed", "5"]), ("loading-rows", ["--delay", "1"]),
        ] {
            let child = try ExampleProcess(name, arguments, terminal: true)
            XCTAssertTrue(child.wait(timeout: 15) { child.isInKeyMode == true }, "\(name) reads keys")
            child.type("xyz")
            XCTAssertEqual(child.waitForExit()?.status, 0, name)
            XCTAssertFalse(child.outputText.contains("xyz"), "\(name): \(child.outputText.debugDescription)")
            XCTAssertEqual(child.isInKeyMode, false, name)
        }
    }
}
