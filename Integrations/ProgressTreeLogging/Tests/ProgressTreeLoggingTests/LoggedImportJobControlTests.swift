import Foundation
import XCTest

/// logged-import in a real terminal (tmux, 100 × 30, an interactive bash): Ctrl-Z and `fg` while log
/// records flow lose no record and leave no stale tree (issue 49, item 1). tmux must be installed
/// (`.ci/run` installs it); without it the test fails.
final class LoggedImportJobControlTests: XCTestCase {

    func testCtrlZAndFgWhileRecordsFlowLoseNoRecordAndLeaveOneTree() throws {
        let photos = 150
        let executable = productsDirectory.appendingPathComponent("logged-import").path
        let tmux = try TmuxSession(columns: 100, rows: 30)
        defer { tmux.end() }
        tmux.type("PS1='$ '; \(executable) --verbose --photos \(photos) --delay-ms 40", enter: true)
        XCTAssertTrue(tmux.wait { $0.contains("• Importing \(photos) photos") }, tmux.screen)
        for cycle in 1...3 {
            tmux.key("C-z")
            XCTAssertTrue(
                tmux.wait { _ in tmux.history.components(separatedBy: "Stopped").count - 1 == cycle }, tmux.history)
            let before = tmux.history.components(separatedBy: "reading [photo=").count
            tmux.type("fg", enter: true)
            // Going on: new records below the shell's lines.
            XCTAssertTrue(tmux.wait { _ in tmux.history.components(separatedBy: "reading [photo=").count > before + 3 })
        }
        XCTAssertTrue(tmux.wait(timeout: 60) { $0.contains("info photo-import: bye") }, tmux.screen)
        let lines = tmux.history.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
        for index in 1...photos {
            let name = "IMG_" + String(String(10000 + index).dropFirst()) + ".jpg"
            XCTAssertEqual(
                lines.filter { $0.contains("reading [photo=\(name) ") }.count, 1, "\(name) read once: \(tmux.history)")
        }
        XCTAssertEqual(lines.filter { $0.hasPrefix("[1]+  Stopped") }.count, 3, tmux.history)
        XCTAssertEqual(lines.filter { $0 == "$ fg" }.count, 3, tmux.history)
        let trees = lines.filter { $0.hasPrefix("• Importing") || $0.hasPrefix("✓ Importing") }
        XCTAssertEqual(trees.count, 1, "one tree, the final one: \(tmux.history)")
        XCTAssertTrue(trees.first?.hasPrefix("✓ Importing \(photos) photos") == true, "\(trees)")
    }
}

/// A tmux server of its own with one window running an interactive bash, driven as a person would.
final class TmuxSession {
    private let socket = "progresstree-test-\(getpid())-\(UUID().uuidString.prefix(8))"

    init(columns: Int, rows: Int) throws {
        guard
            run([
                "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "\(columns)", "-y", "\(rows)",
                "bash --norc --noprofile -i",
            ]) == 0
        else {
            throw TmuxError.cannotStart
        }
        _ = run(["set-option", "-t", "main", "history-limit", "50000"])
    }

    enum TmuxError: Error { case cannotStart }

    /// Types `text`, literally, then Return if asked.
    func type(_ text: String, enter: Bool = false) {
        _ = run(["send-keys", "-t", "main", "-l", text])
        if enter { key("Enter") }
    }

    /// Presses `key` as tmux names it ("C-z", "Enter").
    func key(_ key: String) {
        _ = run(["send-keys", "-t", "main", key])
    }

    /// The visible screen.
    var screen: String { output(["capture-pane", "-p", "-t", "main"]) }

    /// Everything shown so far, scrollback and screen, wrapped lines joined.
    var history: String { output(["capture-pane", "-p", "-J", "-S", "-", "-t", "main"]) }

    /// Polls the screen every 50 ms until `condition` holds, at most `timeout` seconds.
    func wait(timeout: Double = 20, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(screen) { return true }
            usleep(50_000)
        }
        return condition(screen)
    }

    /// Ends the server and what runs in it.
    func end() {
        _ = run(["kill-server"])
    }

    /// tmux through bash, which closes every descriptor but the standard three first: the server that
    /// `new-session` leaves running would otherwise keep the descriptor by which Foundation's `Process`
    /// learns that its child ended, and `waitUntilExit()` would never return.
    private func tmuxProcess(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let script =
            #"for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; exec tmux "$@""#
        process.arguments = ["-c", script, "tmux", "-L", socket] + arguments
        return process
    }

    @discardableResult
    private func run(_ arguments: [String]) -> Int32 {
        let process = tmuxProcess(arguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func output(_ arguments: [String]) -> String {
        let process = tmuxProcess(arguments)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
