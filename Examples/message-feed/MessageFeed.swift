// message-feed — messages arrive in bursts, each with a label ("#17 carol: Lunch on Friday?"). A
// `LabelPacer` decides which label is on screen: each one stays long enough to be read (250 ms), the
// screen is never more than `--max-lag` behind the newest message, and the labels that would make it
// fall behind are dropped. The bar is the inbox's `ProgressNode`, drawn by the `TerminalRenderer` from
// the node itself, so it stays current whatever the label shows.
//
//   swift run message-feed [--messages N] [--speed X] [--max-lag MS] [--progress auto|live|plain|accessible|json|none]
//
// Live, the paced label is the bar's label. Plain (piped), each label shown is also printed as a line.
// At the end: how many labels were shown and how many dropped.

import Dispatch
import ExampleSupport
import Foundation
import ProgressTree
import ProgressTreePresentation
import ProgressTreeTerminal
import Synchronization

@main
struct MessageFeed {
    static let minimumDisplayTime: Duration = .milliseconds(250)

    static func main() async {
        guard let options = Options.parseCommandLine(program: "message-feed") else { return }

        let inbox = ProgressNode.discreteProgress(totalUnitCount: Int64(options.messages))
        inbox.localizedDescription = "Waiting for messages…"
        let display = ExampleDisplay(inbox, mode: options.progress, keys: .ignored)
        let renderer = display.renderer
        let start = ContinuousClock.now

        let stats = LabelStats()
        let labelQueue = DispatchQueue(label: "message-feed.labels")
        let pacer = LabelPacer(
            minimumDisplayTime: minimumDisplayTime, maximumLag: .milliseconds(options.maximumLag), queue: labelQueue
        ) { display in
            // Called when the progress or the label changed; only new labels count.
            guard let label = display.label, stats.shown(label) else { return }
            inbox.localizedDescription = label  // the renderer draws it on the bar's line
            if renderer.mode == .plain {
                let time = String(format: "%5.2f s", seconds(start.duration(to: .now)))
                renderer.print("\(time)  shown  \(label)")
            }
        }

        renderer.start()
        var lastLabel = ""
        let bursts = await Feed(count: options.messages, speed: options.speed).deliver(
            isStopped: { inbox.isCancelled }
        ) { message in
            let label = "#\(message.number) \(message.sender): \(message.subject)"
            stats.sent(label)
            inbox.advance()
            // The progress goes with the label, as a bar fed by the pacer would need; here the renderer
            // reads the node directly, and the pacer paces the label.
            pacer.send(progress: inbox.fractionCompleted, label: label)
            lastLabel = label
        }
        if !inbox.isCancelled {
            // The newest label is never dropped: wait until it is on screen, and leave it there its time.
            let deadline = ContinuousClock.now + .seconds(2)
            while stats.lastShown != lastLabel, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            try? await Task.sleep(for: minimumDisplayTime)
        }
        pacer.invalidate()
        labelQueue.sync {}  // a label being shown lands before the final frame
        display.stop()

        let received = inbox.completedUnitCount
        let elapsed = String(format: "%.1f", seconds(start.duration(to: .now)))
        let report = stats.report
        if inbox.isCancelled {
            display.report("Stopped after \(received) of \(options.messages) messages.")
        } else {
            let messages = received == 1 ? "message" : "messages"
            display.report(
                "Received \(received) \(messages) in \(bursts) \(bursts == 1 ? "burst" : "bursts") in \(elapsed) s.")
        }
        display.report(
            "Labels shown: \(report.shown), dropped: \(report.sent - report.shown) "
                + "(each on screen ≥ \(milliseconds(minimumDisplayTime)) ms; "
                + "longest wait \(milliseconds(report.longestWait)) ms, limit \(options.maximumLag) ms)")
        if inbox.isCancelled { exit(display.exitStatusAfterCancelling) }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int((seconds(duration) * 1000).rounded())
    }
}

/// Counts the labels sent and shown, and how long the shown ones waited.
final class LabelStats: Sendable {
    private struct State {
        var sentAt: [String: ContinuousClock.Instant] = [:]
        var sent = 0
        var shown = 0
        var longestWait: Duration = .zero
        var lastShown: String?
    }

    private let state = Mutex(State())

    func sent(_ label: String) {
        state.withLock { state in
            state.sent += 1
            state.sentAt[label] = .now
        }
    }

    /// Records `label` as shown; `false` if it already was.
    func shown(_ label: String) -> Bool {
        state.withLock { state in
            guard label != state.lastShown else { return false }
            state.shown += 1
            state.lastShown = label
            if let sentAt = state.sentAt.removeValue(forKey: label) {
                state.longestWait = max(state.longestWait, sentAt.duration(to: .now))
            }
            return true
        }
    }

    var lastShown: String? { state.withLock { $0.lastShown } }

    var report: (sent: Int, shown: Int, longestWait: Duration) {
        state.withLock { ($0.sent, $0.shown, $0.longestWait) }
    }
}
