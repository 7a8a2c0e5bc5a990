// step-flow — a sign-up flow (account, profile, address, payment, review) showing `StepFlow`, the
// presentation helper for wizards: each step's progress, a step without progress hiding the bar, and a
// swipe back abandoned half way that springs back to exactly where the bar was.
//
//   swift run step-flow [--keys] [--speed X] [--progress auto|live|plain]
//
// By default a script drives the flow. Live (on a terminal) it animates one line in place, in real time;
// plain (piped) it prints the script's frames as lines, 50 ms of simulated time apart, and exits. With
// --keys you drive it: n next, b back, s swipe back half way and let go, f swipe back all the way, q quit.
//
// The TerminalRenderer is not used here: a StepFlow is a value you sample at each frame, and this program
// draws the line itself, with the library's TerminalCursor (the cursor comes back on SIGTERM too) and
// DisplayWidth (the line is cut to the terminal's width, so it never wraps).

import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreePresentation
import ProgressTreeTerminal

@main
struct StepFlowDemo {
    /// The script: when (in milliseconds) to do what.
    static let script: [(milliseconds: Int, action: SignUpFlow.Action)] = [
        (0, .next),  // account 20%: the bar fades in
        (700, .next),  // profile 40%
        (1_400, .next),  // address 60%
        (2_100, .next),  // payment 80%
        (2_800, .swipeBack(distance: 0.5, finishes: false)),  // half way back to address, let go
        (3_900, .back),  // address 60%
        (4_600, .next),  // payment 80%
        (5_300, .next),  // review: no progress, the bar fades out where it is
        (6_000, .next),  // done
    ]

    static func main() async {
        guard let options = Options.parseCommandLine(program: "step-flow") else { return }
        if options.isLive {
            await runLive(options)
        } else if options.isAccessible {
            runScriptAsSentences()
        } else {
            runScriptAsLines()
        }
    }

    /// Accessible: the script on a simulated clock, each event a sentence, without the animation's frames
    /// (a screen reader would read every frame): "Next to profile: step 2 of 5, 40 percent."
    static func runScriptAsSentences() {
        var flow = SignUpFlow()
        let origin = ContinuousClock.now
        var milliseconds = 0
        var next = 0
        while !flow.isDone {
            let now = origin + .milliseconds(milliseconds)
            while next < script.count, script[next].milliseconds <= milliseconds {
                if let event = flow.perform(script[next].action, at: now) { print(sentence(event, flow: flow)) }
                next += 1
            }
            if let event = flow.update(at: now) { print(sentence(event, flow: flow)) }
            milliseconds += 50
        }
    }

    /// `event` as a sentence, with the step the flow is heading for after a move: "next → profile" is
    /// "Next to profile: step 2 of 5, 40 percent."
    static func sentence(_ event: String, flow: SignUpFlow) -> String {
        var text = event.replacingOccurrences(of: " → ", with: " to ").replacingOccurrences(of: "%", with: " percent")
        if event.hasPrefix("next →") || event.hasPrefix("back →") || event.contains("completes →") {
            let settled = flow.flow.settledDisplay
            if let index = settled.stepIndex {
                text += ": step \(index + 1) of \(SignUpFlow.steps.count)"
                if settled.visibility > 0.5 { text += ", \(Int((settled.progress * 100).rounded())) percent" }
            }
        }
        text = text.prefix(1).uppercased() + text.dropFirst()
        return text.hasSuffix(".") ? text : text + "."
    }

    /// Plain: the script on a simulated clock, one line per frame that changed. Instant and deterministic.
    static func runScriptAsLines() {
        var flow = SignUpFlow()
        let origin = ContinuousClock.now
        var milliseconds = 0
        var next = 0
        var lastLine = ""
        while !flow.isDone {
            let now = origin + .milliseconds(milliseconds)
            let stamp = String(format: "%5.2f s  ", Double(milliseconds) / 1000)
            while next < script.count, script[next].milliseconds <= milliseconds {
                if let event = flow.perform(script[next].action, at: now) { print(stamp + "▸ " + event) }
                next += 1
            }
            if let event = flow.update(at: now) { print(stamp + "▸ " + event) }
            let line = flow.line(at: now, columns: 79, details: true)
            if line != lastLine, !flow.isDone {
                print(stamp + line)
                lastLine = line
            }
            milliseconds += 50
        }
    }

    /// Live: one line redrawn in place about 30 times a second; events are printed above it.
    static func runLive(_ options: Options) async {
        let output = FileDescriptorOutput.standardOutput
        let keys = options.keys ? TerminalKeyReader() : nil
        // With keys, a second line under the step's says which: both are redrawn in place, and the hint
        // is cleared at the end.
        let hint = keys != nil ? "Keys: n next · b back · s swipe back half way · f swipe back · q quit" : nil
        let terminal = Terminal {
            keys?.stop()
            output.write(hint != nil ? "\r\n\u{1B}[K" : "\n")
            TerminalCursor.show(on: output)
        }
        keys?.start { key in terminal.keyPressed(key) }
        TerminalCursor.hide(on: output)  // while the line animates

        var flow = SignUpFlow()
        let origin = ContinuousClock.now
        var next = 0
        while !flow.isDone {
            let now = ContinuousClock.now
            var events: [String] = []
            if terminal.isInterrupted {
                events.append(flow.perform(.quit, at: now) ?? "quit")
            }
            if keys != nil {
                for key in terminal.takeKeys() {
                    let action: SignUpFlow.Action? =
                        switch key {
                        case "n": .next
                        case "b": .back
                        case "s": .swipeBack(distance: 0.5, finishes: false)
                        case "f": .swipeBack(distance: 0.6, finishes: true)
                        case "q": .quit
                        default: nil
                        }
                    if let action, let event = flow.perform(action, at: now) { events.append(event) }
                }
            } else {
                let elapsed = origin.duration(to: now) * options.speed
                while next < script.count, elapsed >= .milliseconds(script[next].milliseconds) {
                    if let event = flow.perform(script[next].action, at: now) { events.append(event) }
                    next += 1
                }
            }
            if let event = flow.update(at: now) { events.append(event) }
            // An event replaces the step's line, and the keys line under it is cleared too (`ESC [J`: to the end
            // of the screen), since a long event wraps onto it; the frame then draws both below the event.
            // Cut to the width of the moment (read at each frame, so it follows a resize): a wrapped line
            // could not be redrawn in place. An event is wrapped at spaces, never inside a word.
            let columns = max(1, (output.size()?.columns ?? 80) - 1)
            for event in events {
                // `columns - 4`: room for the indent of the lines after the first
                let lines = ExampleDisplay.wrapped("  ▸ " + event, toColumns: max(20, columns - 4))
                terminal.write("\r\u{1B}[J" + lines.joined(separator: "\n    ") + "\n")
            }
            // Each line is cleared after its text (the rest of a longer line before); the frame ends with
            // the cursor at the start of the step's line, where the next event or frame begins.
            let line = DisplayWidth.truncate(flow.line(at: now, columns: columns), toColumns: columns)
            var frame = "\r" + line + "\u{1B}[K"
            if let hint {
                frame += "\n" + DisplayWidth.truncate(hint, toColumns: columns) + "\u{1B}[K\r\u{1B}[1A"
            }
            terminal.write(frame)
            try? await Task.sleep(for: .milliseconds(33))
        }
        // The last line stays: it shows where the flow settled, not a moment of an animation (a fade or a
        // spring back still running when a fast script ends).
        let columns = max(1, (output.size()?.columns ?? 80) - 1)
        let settled = flow.line(at: .now + .seconds(10), columns: columns)
        terminal.write("\r" + DisplayWidth.truncate(settled, toColumns: columns) + "\u{1B}[K")
        keys?.stop()
        terminal.write(hint != nil ? "\r\n\u{1B}[K" : "\n")  // the hint goes; the step's line stays
        TerminalCursor.show(on: output)
        terminal.stop()
        terminal.exitIfInterrupted()
    }
}
