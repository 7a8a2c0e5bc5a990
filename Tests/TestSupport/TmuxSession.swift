import Foundation

/// A tmux server of its own, with one window running an interactive bash, driven as a person would:
/// keys typed, the screen read (`capture-pane`). Fails to start (throws) when tmux is missing; `.ci/run`
/// installs it.
package final class TmuxSession {
    private let socket = "progresstree-test-\(getpid())-\(UUID().uuidString.prefix(8))"

    package enum TmuxError: Error { case cannotStart }

    /// A window of `columns` × `rows` running `bash --norc --noprofile -i`, prompt `$ `.
    package init(columns: Int, rows: Int, environment: [String: String] = [:]) throws {
        let variables = environment.map { "\($0.key)=\($0.value)" }.sorted()
        let shell = (["env"] + variables + ["bash", "--norc", "--noprofile", "-i"]).joined(separator: " ")
        guard
            run(["-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "\(columns)", "-y", "\(rows)", shell])
                == 0
        else { throw TmuxError.cannotStart }
        run(["set-option", "-t", "main", "history-limit", "50000"])
        type("PS1='$ '", enter: true)
    }

    /// Types `text`, literally, then Return if asked.
    package func type(_ text: String, enter: Bool = false) {
        run(["send-keys", "-t", "main", "-l", text])
        if enter { key("Enter") }
    }

    /// Presses `key` as tmux names it ("C-z", "C-c", "Enter").
    package func key(_ key: String) {
        run(["send-keys", "-t", "main", key])
    }

    /// The visible screen.
    package var screen: String { output(["capture-pane", "-p", "-t", "main"]) }

    /// Everything shown so far, scrollback and screen, each line whole (wrapped lines joined), without
    /// trailing spaces.
    package var history: [String] {
        output(["capture-pane", "-p", "-J", "-S", "-", "-t", "main"]).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map { String($0.reversed().drop { $0 == " " }.reversed()) }
    }

    /// Polls the screen every 50 ms until `condition` holds, at most `timeout` seconds.
    package func wait(timeout: Double = 30, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(screen) { return true }
            usleep(50_000)
        }
        return condition(screen)
    }

    /// Ends the server and what runs in it.
    package func end() {
        run(["kill-server"])
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
